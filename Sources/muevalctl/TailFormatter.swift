internal import ControlProtocol
internal import JournalStorage
internal import MuEvalWire
internal import WireProtocol
internal import Foundation
internal import SessionModel

/// Turns tail lines into what `muevalctl tail` prints: one human line per event (time, device,
/// class, a summary that fits the event), or one JSON object per line for `jq`.
struct TailFormatter: Sendable {
    public enum Style: Sendable {
        case human(color: Bool)
        case json
    }

    let style: Style

    init(style: Style) {
        self.style = style
    }

    func format(_ line: TailLine) -> String {
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

    /// One colour per thesis event class, bold for observers' notes; other classes stay plain.
    private static func color(of eventClass: String) -> Color? {
        if eventClass == ObserverNote.eventClass { return .bold }
        return switch EventClass(rawValue: eventClass) {
        case .userInput: .cyan
        case .userInterface: .green
        case .deviceSensor: .magenta
        case .application: .yellow
        case .custom: .blue
        case nil: nil
        }
    }

    private static func paint(_ text: String, _ color: Color?, _ enabled: Bool) -> String {
        guard enabled, let color else { return text }
        return "\u{1B}[\(color.rawValue)m\(text)\u{1B}[0m"
    }

    static func human(_ line: TailLine, color: Bool) -> String {
        // Events at the device's time: what the tester did when, even for a burst received at once.
        let time = clock(line.event?.timestamp ?? line.time)
        if let speech = line.speech {
            return "\(time)  \(speech.device)  \(paint("speech".padding(toLength: 18, withPad: " ", startingAt: 0), .yellow, color))  \(speech.summary)"
        }
        guard let event = line.event else {
            return paint("\(time)  ── \(markerText(line))", .bold, color)
        }
        let eventClass = event.eventClass.padding(toLength: max(18, event.eventClass.count), withPad: " ", startingAt: 0)
        return "\(time)  \(event.device)  \(paint(eventClass, Self.color(of: event.eventClass), color))  \(event.summary)"
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
        case .event, .speech: return ""
        }
    }

    /// Local wall-clock time with milliseconds: a tail is read next to the tester.
    static func clock(_ seconds: Double) -> String {
        DateText.localClock(seconds)
    }
}

extension StoredEvent {
    /// The payload in one line, in the vocabulary of its class (the tail's and `events`' last column);
    /// as stored when it is not typed JSON, which muevald never writes.
    var summary: String {
        guard let decoded = try? TypedJSON.decodeLeavingBlobs(Array(payload.utf8)) else {
            return payload.count > 120 ? String(payload.prefix(119)) + "…" : payload
        }
        return PayloadSummary.line(eventClass: eventClass, payload: decoded)
    }
}
