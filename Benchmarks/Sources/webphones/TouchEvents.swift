import MuEvalWire
import NIOCore
import OrderedCollections

/// The touch events a web phone sends, as Tests/Load/phone_events.py writes them (capture.js's `<event>`: class,
/// timestamp and seq, then the fields, whole numbers as `<integer>`, others as `<real>`): a tap is a began and an
/// ended of one finger on one of twelve buttons, so that a session's report finds taps on elements.
///
/// MuEvalWire's `WireEncoder` encodes every event once per seq (the fields depend on the seq alone, and every
/// phone sends the same seqs); sending splices the timestamp and the seq into those bytes, so that 10,000
/// events a second cost a copy each, not a dictionary's encoding.
struct TouchEvents {
    private static let views = ["NoteList", "NoteEditor", "Search"]
    private static let eventClass = "UserInputEvent"

    /// `<event>…<key>timestamp</key><real>`, and `</real><key>seq</key><integer>`: WireEncoder's own head.
    private let head: [UInt8]
    private let middle: [UInt8]
    /// Per seq from `firstSeq`: everything after the seq's digits.
    private var tails: [[UInt8]] = []
    private let firstSeq: Int64
    /// The last timestamp written and its digits: a batch's events share one.
    private var stamp: (wall: Double, digits: [UInt8]) = (.nan, [])

    init(firstSeq: Int64) {
        self.firstSeq = firstSeq
        let probe = WireEncoder.event(class: Self.eventClass, timestamp: 0.5, seq: 7, fields: [:])
        let time = probe.firstRange(of: Array("0.5".utf8))!
        let seq = probe[time.upperBound...].firstRange(of: Array("7".utf8))!
        head = Array(probe[..<time.lowerBound])
        middle = Array(probe[time.upperBound..<seq.lowerBound])
    }

    /// Appends the `seq`-th event of a phone, made at `wall` (seconds since 1970), its timestamp with three
    /// decimals as phone_events.py's %.3f writes it, so that both clients send the same bytes.
    mutating func write(seq: Int64, wall: Double, into buffer: inout ByteBuffer) {
        if stamp.wall != wall {
            let milliseconds = Int64((wall * 1000).rounded())
            let fraction = String(milliseconds % 1000)
            let text = "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
            stamp = (wall, Array(text.utf8))
        }
        buffer.writeBytes(head)
        buffer.writeBytes(stamp.digits)
        buffer.writeBytes(middle)
        buffer.writeString(String(seq))
        buffer.writeBytes(tail(seq))
    }

    /// The bytes after the seq's digits, encoded by WireEncoder the first time a seq is sent.
    private mutating func tail(_ seq: Int64) -> [UInt8] {
        let index = Int(seq - firstSeq)
        guard index >= 0 else { return Self.encodeTail(seq, skipping: head.count + middle.count) }
        while tails.count <= index {
            tails.append(Self.encodeTail(firstSeq + Int64(tails.count), skipping: head.count + middle.count))
        }
        return tails[index]
    }

    private static func encodeTail(_ seq: Int64, skipping prefix: Int) -> [UInt8] {
        let bytes = WireEncoder.event(class: eventClass, timestamp: 0.5, seq: seq, fields: fields(seq))
        return Array(bytes[(prefix + "0.5".utf8.count + String(seq).utf8.count)...])
    }

    /// phone_events.py's `touch`: odd seqs put a finger down, even ones lift it (Python's floor division).
    static func fields(_ seq: Int64) -> OrderedDictionary<String, PlistValue> {
        let began: Int64 = floorMod(seq, 2)
        let tap = floorDiv(seq - 1, 2)
        let button = floorMod(tap, 12)
        let left = 16 + button % 3 * 128, top = 120 + button / 3 * 96
        let target: OrderedDictionary<String, PlistValue> = [
            "className": .string("UIButton"), "tag": .string("button"), "id": .string("note-\(button)"),
            "title": .string("Note \(button)"),
            "frame": .dict(["height": .integer(44), "width": .integer(112), "x": .integer(left), "y": .integer(top)]),
        ]
        return [
            "type": .string("touch"), "phase": .string(began == 1 ? "began" : "ended"),
            "x": .integer(left + floorMod(tap * 37, 112)), "y": .integer(top + floorMod(tap * 53, 44)),
            "tapCount": .integer(1), "view": .string(views[Int(floorMod(floorDiv(tap, 40), 3))]),
            "target": .dict(target), "identifier": .integer(floorMod(tap, 10)), "pointerType": .string("touch"),
            "force": .integer(1), "radiusX": .real(11.5), "radiusY": .real(11.5), "touches": .integer(began),
        ]
    }

    /// capture.js's hello (web-capture.js) as Chrome on an Android phone says it, as web_phone.py writes it.
    /// Not WireEncoder.hello: that one writes the screen's size as reals and the app before it, as the
    /// capture library does; a web phone's hello is capture.js's.
    static func hello(device: String, appId: String) -> String {
        "<hello><key>protocolVersion</key><integer>1</integer><key>deviceId</key><string>\(device)</string>"
            + "<key>deviceName</key><string>Chrome on Android</string><key>model</key><string>Android</string>"
            + "<key>systemVersion</key><string>Android 14</string><key>screenWidth</key><integer>412</integer>"
            + "<key>screenHeight</key><integer>915</integer><key>screenScale</key><real>2.625</real>"
            + "<key>appId</key><string>\(appId)</string><key>appVersion</key><string>1</string></hello>\n"
    }
}

private func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { (a - floorMod(a, b)) / b }
private func floorMod(_ a: Int64, _ b: Int64) -> Int64 { ((a % b) + b) % b }
