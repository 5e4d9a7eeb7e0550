import CaptureServer
import Foundation
import JournalStorage

/// Turns tail lines into what `muevalctl tail` prints: one human line per event (time, device,
/// class, a summary that fits the event), or one JSON object per line for `jq`.
public struct TailFormatter: Sendable {
    public enum Style: Sendable {
        case human(color: Bool)
        case json
    }

    public let style: Style

    public init(style: Style) {
        self.style = style
    }

    public func format(_ line: TailLine) -> String {
        switch style {
        case .json: Self.json(line)
        case .human(let color): Self.human(line, color: color)
        }
    }

    // MARK: JSON

    /// Events carry their whole typed payload, spliced in as stored (see `StoredEvent.jsonLine`).
    static func json(_ line: TailLine) -> String {
        if let event = line.event {
            var text = String(decoding: event.jsonLine(), as: UTF8.self)
            text.removeFirst()
            return "{\"kind\":\"event\",\"session\":\(line.session ?? 0)," + text.trimmingCharacters(in: .newlines)
        }
        var marker = line
        marker.event = nil
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(marker), as: UTF8.self)) ?? "{}"
    }

    // MARK: Human

    private enum Color: String {
        case cyan = "36", green = "32", yellow = "33", blue = "34", magenta = "35", dim = "2", bold = "1"
    }

    /// One colour per thesis event class; other classes stay plain.
    private static func color(of eventClass: String) -> Color? {
        switch eventClass {
        case "UserInputEvent": .cyan
        case "UserInterfaceEvent": .green
        case "DeviceSensorEvent": .magenta
        case "ApplicationEvent": .yellow
        case "CustomEvent": .blue
        default: nil
        }
    }

    private static func paint(_ text: String, _ color: Color?, _ enabled: Bool) -> String {
        guard enabled, let color else { return text }
        return "\u{1B}[\(color.rawValue)m\(text)\u{1B}[0m"
    }

    static func human(_ line: TailLine, color: Bool) -> String {
        // Events at the device's time: what the tester did when, even for a burst received at once.
        let time = clock(line.event?.timestamp ?? line.time)
        guard let event = line.event else {
            return paint("\(time)  ── \(markerText(line))", .bold, color)
        }
        let eventClass = event.eventClass.padding(toLength: max(18, event.eventClass.count), withPad: " ", startingAt: 0)
        return "\(time)  \(event.device)  \(paint(eventClass, Self.color(of: event.eventClass), color))  \(EventSummary(event).text)"
    }

    private static func markerText(_ line: TailLine) -> String {
        let session = line.session.map { "session \($0)" } ?? ""
        let detail = line.detail.map { $0.isEmpty ? "" : " (\($0))" } ?? ""
        switch line.kind {
        case .sessionStarted: return "\(session) started\(detail)"
        case .sessionStopped: return "\(session) stopped\(detail)"
        case .deviceConnected: return "device \(line.device ?? "?") connected to \(session)\(detail)"
        case .deviceDisconnected: return "device \(line.device ?? "?") disconnected from \(session)\(detail)"
        case .skipped: return "… \(line.count ?? 0) events skipped (this terminal fell behind)"
        case .daemonStopping: return "muevald is stopping"
        case .event: return ""
        }
    }

    /// Local wall-clock time with milliseconds: a tail is read next to the tester.
    static func clock(_ seconds: Double) -> String {
        var time = time_t(seconds.rounded(.down))
        var parts = tm()
        localtime_r(&time, &parts)
        let millis = Int((seconds - seconds.rounded(.down)) * 1000)
        return String(format: "%02d:%02d:%02d.%03d", parts.tm_hour, parts.tm_min, parts.tm_sec, millis)
    }
}

/// A one-line summary of an event's payload, in the vocabulary of its class.
struct EventSummary {
    let text: String

    init(_ event: StoredEvent) {
        let object = (try? JSONSerialization.jsonObject(with: Data(event.payload.utf8))) as? [String: Any] ?? [:]
        let payload = Payload(object)
        text = Self.summarize(event.eventClass, payload) ?? payload.compact()
    }

    private static func summarize(_ eventClass: String, _ p: Payload) -> String? {
        switch eventClass {
        case "UserInputEvent":
            let place = p.view().map { "in \($0)" }
            if let x = p.number("x"), let y = p.number("y") {
                let phase = p.string("phase") ?? p.string("touchPhase")
                return [p.string("gesture") ?? "touch", phase, "\(Payload.short(x)),\(Payload.short(y))", place]
                    .compactMap { $0 }.joined(separator: " ")
            }
            guard let gesture = p.string("gesture") else { return p.screenshot() }
            return [gesture, "gesture", place, p.bool("recognized") == false ? "(not recognized)" : nil].compactMap { $0 }.joined(separator: " ")
        case "UserInterfaceEvent":
            if let stack = p.strings("viewStack") ?? p.strings("stack") {
                return [p.string("transition") ?? p.string("type"), stack.joined(separator: " › "), p.screenshot().map { "(\($0))" }]
                    .compactMap { $0 }.joined(separator: " ")
            }
            if let screenshot = p.screenshot() { return screenshot }
            if let title = p.string("title") ?? p.string("action") {
                return [p.string("type") ?? "control", "\"\(title)\"", p.view().map { "in \($0)" }].compactMap { $0 }.joined(separator: " ")
            }
            if let text = p.string("text") {
                return ["text \"\(text)\"", p.view().map { "in \($0)" }].compactMap { $0 }.joined(separator: " ")
            }
            return p.string("type").map { type in [type, p.view()].compactMap { $0 }.joined(separator: " ") }
        case "DeviceSensorEvent":
            guard let sensor = p.string("sensor") else { return p.screenshot() }
            return sensor + " " + p.compact(excluding: ["sensor"])
        case "ApplicationEvent":
            return (p.string("event") ?? p.string("state") ?? p.string("type")).map { name in
                [name, p.string("reason") ?? p.string("name")].compactMap { $0 }.joined(separator: ": ")
            }
        case "CustomEvent":
            return (p.string("name") ?? p.string("event")).map { name in
                [p.string("phase") ?? p.string("marker"), "\"\(name)\""].compactMap { $0 }.joined(separator: " ")
            }
        default:
            return p.screenshot()
        }
    }
}

/// Typed access to a decoded typed-JSON payload (docs/STORAGE.md).
private struct Payload {
    let object: [String: Any]
    static let bookkeeping: Set<String> = ["class", "timestamp", "seq"]

    init(_ object: [String: Any]) {
        self.object = object
    }

    func string(_ key: String) -> String? { object[key] as? String }

    func number(_ key: String) -> Double? { (object[key] as? NSNumber)?.doubleValue }

    func bool(_ key: String) -> Bool? { object[key] as? Bool }

    func strings(_ key: String) -> [String]? {
        guard let items = object[key] as? [Any] else { return nil }
        return items.map { ($0 as? String) ?? (($0 as? [String: Any])?["name"] as? String) ?? "?" }
    }

    /// The view an input happened in, under the names capture libraries use.
    func view() -> String? {
        string("view") ?? string("viewController") ?? string("viewName")
    }

    /// "screenshot 48.2 KB 320×480" when the event holds binary data.
    func screenshot() -> String? {
        guard let (key, size) = object.lazy.compactMap({ key, value -> (String, Int)? in
            guard let typed = value as? [String: Any], typed["$data"] != nil else { return nil }
            return (key, (typed["$size"] as? NSNumber)?.intValue ?? 0)
        }).first else { return nil }
        let kb = String(format: "%.1f KB", Double(size) / 1024)
        let dimensions = number("width").flatMap { w in number("height").map { h in "\(Self.short(w))×\(Self.short(h))" } }
        return [key == "image" || key == "screenshot" ? "screenshot" : key, kb, dimensions].compactMap { $0 }.joined(separator: " ")
    }

    /// Compact key=value pairs, for classes without a summary of their own.
    func compact(excluding: Set<String> = []) -> String {
        let text = object.keys.sorted().filter { !Self.bookkeeping.contains($0) && !excluding.contains($0) }
            .map { "\($0)=\(Self.render(object[$0]!))" }.joined(separator: " ")
        return text.count > 120 ? String(text.prefix(119)) + "…" : text
    }

    private static func render(_ value: Any) -> String {
        switch value {
        case let string as String: return string.contains(" ") ? "\"\(string)\"" : string
        case let number as NSNumber: return short(number.doubleValue)
        case let object as [String: Any]:
            if let date = object["$date"] as? String { return date }
            if object["$data"] != nil { return "<\((object["$size"] as? NSNumber)?.intValue ?? 0) bytes>" }
            return "{…}"
        case let array as [Any]: return "[\(array.count)]"
        default: return "null"
        }
    }

    static func short(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%.3g", value)
    }
}
