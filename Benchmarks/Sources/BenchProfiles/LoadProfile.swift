import DeviceSimulator
import Foundation

/// The bytes a benchmark sends: a cycle of event templates, numbered as they are written.
public struct LoadProfile: Sendable {
    public let name: String
    public let templates: [EventTemplate]
    /// One line for the report: what the events are.
    public let summary: String

    /// Mean bytes per event on the wire.
    public var meanEventBytes: Double {
        Double(templates.reduce(0) { $0 + $1.size + 6 }) / Double(templates.count)
    }

    /// Appends event `index` of the cycle, numbered `seq`.
    @inline(__always)
    public func write(index: Int, seq: Int64, into out: inout [UInt8]) {
        templates[index % templates.count].write(seq: seq, into: &out)
    }

    /// `count` events numbered from 1, as one buffer (the micro benchmarks decode it).
    public func stream(count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Int(meanEventBytes * Double(count)) + 1024)
        for index in 0..<count { write(index: index, seq: Int64(index + 1), into: &out) }
        return out
    }

    public static func named(_ name: String) -> LoadProfile? {
        switch name {
        case "touch": touch
        case "mixed": mixed
        case "hour": hour
        default: nil
        }
    }

    /// Touches in the thesis's `<event>` form (Listing 4.4, indented as there), with seq, phase and view:
    /// about 340 bytes each.
    public static let touch: LoadProfile = {
        let views = ["PostsViewController", "EditPostViewController", "SettingsViewController", "CommentsViewController"]
        let phases = ["began", "moved", "moved", "ended"]
        let templates = (0..<64).map { i in
            let seq: Int64 = 1
            let xml = """
                <event>
                  <key>class</key>
                  <string>UserInputEvent</string>
                  <key>timestamp</key>
                  <real>\(String(format: "%.3f", 1_298_155_386.0 + Double(i) * 0.037))</real>
                  <key>seq</key>
                  <integer>\(seq)</integer>
                  <key>phase</key>
                  <string>\(phases[i % 4])</string>
                  <key>x</key>
                  <integer>\(37 + (i * 53) % 283)</integer>
                  <key>y</key>
                  <integer>\(64 + (i * 97) % 416)</integer>
                  <key>view</key>
                  <string>\(views[i / 16])</string>
                </event>

                """
            return EventTemplate(bytes: Array(xml.utf8), seq: seq)
        }
        return LoadProfile(name: "touch", templates: templates,
                           summary: "UserInputEvent touches in the `<event>` form of Listing 4.4")
    }()

    /// Ten minutes of the simulator's Wordpress tester (touches, UI events with UI state trees, sensors,
    /// task markers) with a 48 KB PNG screenshot on every view change, and on the next UI event whenever
    /// three seconds passed without one (a capture library that also shoots on taps and scrolls).
    public static let mixed: LoadProfile = {
        let screenshot = Array(NoisePNG.make(targetBytes: 48 * 1024).base64EncodedString().utf8)
        let scenario = BuiltinScenarios.named("wordpress")!
        var stream = EventStream(scenario: scenario, deviceIndex: 0, seed: 1, epoch: 1_298_155_386)
        var templates: [EventTemplate] = []
        var shots = 0
        var lastTime = 0.0
        var lastShot = -3.0
        while lastTime < 600 {
            let event = stream.nextEncoded()
            lastTime = event.time
            var bytes = event.bytes
            if let swapped = replaceScreenshot(in: bytes, with: screenshot) {
                bytes = swapped
            } else if event.eventClass == .userInterface, event.time - lastShot >= 3 {
                bytes = addScreenshot(to: bytes, screenshot)
            }
            if bytes.count > screenshot.count {
                shots += 1
                lastShot = event.time
            }
            templates.append(EventTemplate(bytes: bytes, seq: event.seq))
        }
        return LoadProfile(name: "mixed", templates: templates, summary: String(
            format: "simulator (Wordpress scenario): %d events in %.0f s of device time, a 48 KB PNG screenshot every %.1f s",
            templates.count, lastTime, lastTime / Double(max(shots, 1))))
    }()

    /// `bytes` (an `<event>`) with a `screenshot` key added at its end.
    private static func addScreenshot(to bytes: [UInt8], _ base64: [UInt8]) -> [UInt8] {
        // WireEncoder ends an event with "</event>\n".
        guard let close = bytes[max(0, bytes.count - 16)...].firstRange(of: Array("</event>".utf8)) else { return bytes }
        return Array(bytes[..<close.lowerBound]) + Array("<key>screenshot</key><data>".utf8) + base64
            + Array("</data>".utf8) + Array(bytes[close.lowerBound...])
    }

    /// `bytes` with the base64 of its `screenshot` replaced, or nil when it has none.
    private static func replaceScreenshot(in bytes: [UInt8], with base64: [UInt8]) -> [UInt8]? {
        guard let key = bytes.firstRange(of: Array("<key>screenshot</key><data>".utf8)),
              let close = bytes[key.upperBound...].firstRange(of: Array("</data>".utf8)) else { return nil }
        return Array(bytes[..<key.upperBound]) + base64 + Array(bytes[close.lowerBound...])
    }
}
