public import MuEvalWire

/// One line about an event's payload, for people: the live tail's summary column and the report's
/// timeline both use it, so that a value reads the same in both (numbers, images, UI elements).
public enum PayloadSummary {
    /// Fields that every event has and that are shown in columns of their own.
    public static let bookkeeping: Set<String> = ["class", "timestamp", "seq"]

    /// A summary in the vocabulary of the event's class ("touch began 155,267 in LoginView",
    /// "push Posts › Edit (screenshot 48.2 KB 320×480)", an observer's `problem "no Publish button"`),
    /// else the fields as `key=value` pairs.
    public static func line(eventClass: String, payload: PlistValue, limit: Int = 120) -> String {
        if eventClass == ObserverNote.eventClass, let note = ObserverNote(payload: payload) { return note.summary(limit: limit) }
        if let page = pageRecord(eventClass, payload) { return page }
        return classSpecific(EventClass(rawValue: eventClass), payload) ?? fields(payload, excluding: bookkeeping, limit: limit)
    }

    /// A web page's own record (capture.js's `dom: true`, docs/WEB-CAPTURE.md): its kind and size, not its JSON.
    private static func pageRecord(_ eventClass: String, _ payload: PlistValue) -> String? {
        guard eventClass.hasPrefix("DOM") else { return nil }
        if case .string(let reason)? = payload["invalid"] { return "page record left out: \(reason)" }
        guard case .string(let dom)? = payload["dom"] else { return nil }
        let kind = switch eventClass {
        case "DOMSnapshot": "page snapshot"
        case "DOMMutations": "page changes"
        case "DOMScroll": "page scrolled"
        case "DOMViewport": "page viewport"
        case "DOMFocus": "page focus"
        default: "page record"
        }
        return kind + " " + PrintfNumber.format("%.1f", Double(dom.utf8.count) / 1024) + " KB"
    }

    /// `key=value` for each field not in `excluding`, in the payload's order, cut at `limit` characters.
    public static func fields(_ payload: PlistValue, excluding: Set<String>, limit: Int) -> String {
        guard case .dict(let fields) = payload else { return "" }
        var text = ""
        for (key, value) in fields where !excluding.contains(key) {
            if !text.isEmpty { text += " " }
            text += key + "=" + describe(value)
            // Characters are never more than UTF-8 bytes: counting them (grapheme breaking, the whole text after
            // each field) only when the bytes say they may be over the limit.
            if text.utf8.count > limit, text.count > limit { return String(text.prefix(limit - 1)) + "…" }
        }
        return text
    }

    /// One value: strings with spaces quoted, whole numbers without a fraction, other numbers to six
    /// significant digits, data and images by size, UI elements by class and title, frames as `x,y w×h`.
    public static func describe(_ value: PlistValue) -> String {
        switch value {
        // utf8.contains: Foundation's `contains(_: StringProtocol)` goes through NSString (CFStringFind in a report's profile).
        case .string(let text): return text.utf8.contains(UInt8(ascii: " ")) ? "\"\(text)\"" : text
        case .integer(let number): return String(number)
        case .real(let number): return short(number)
        case .bool(let flag): return flag ? "yes" : "no"
        case .date(let seconds): return DateText.seconds(seconds)
        case .data(let bytes): return "<\(bytes.count) bytes>"
        case .array(let items): return "[\(items.count)]"
        case .dict:
            if let blob = value.blobReference { return "<image \(blob.size) bytes>" }
            if let className = value["className"]?.string {
                if let title = value["title"]?.string, !title.isEmpty { return "\(className) \"\(title)\"" }
                return [className, value["id"]?.string].compactMap { $0 }.joined(separator: " ")
            }
            if let x = value["x"]?.number, let y = value["y"]?.number, let width = value["width"]?.number,
               let height = value["height"]?.number {
                return "\(short(x)),\(short(y)) \(short(width))×\(short(height))"
            }
            return "{…}"
        }
    }

    /// A number as people read it in a summary: whole numbers without a fraction.
    public static func short(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : PrintfNumber.format("%.6g", value)
    }

    private static func classSpecific(_ eventClass: EventClass?, _ p: PlistValue) -> String? {
        switch eventClass {
        case .userInput:
            let place = view(p).map { "in \($0)" }
            if let x = p["x"]?.number, let y = p["y"]?.number {
                let phase = p["phase"]?.string ?? p["touchPhase"]?.string
                return [p["gesture"]?.string ?? "touch", phase, "\(short(x)),\(short(y))", place].compactMap { $0 }.joined(separator: " ")
            }
            guard let gesture = p["gesture"]?.string else { return image(p) }
            return [gesture, "gesture", place, p["recognized"]?.bool == false ? "(not recognized)" : nil]
                .compactMap { $0 }.joined(separator: " ")
        case .userInterface:
            if let stack = names(p["viewStack"] ?? p["stack"]) {
                return [p["transition"]?.string ?? p["type"]?.string, stack.joined(separator: " › "), image(p).map { "(\($0))" }]
                    .compactMap { $0 }.joined(separator: " ")
            }
            if let image = image(p) { return image }
            if let title = p["title"]?.string ?? p["action"]?.string {
                return [p["type"]?.string ?? "control", "\"\(title)\"", view(p).map { "in \($0)" }].compactMap { $0 }.joined(separator: " ")
            }
            if let text = p["text"]?.string {
                return ["text \"\(text)\"", view(p).map { "in \($0)" }].compactMap { $0 }.joined(separator: " ")
            }
            return p["type"]?.string.map { type in [type, view(p)].compactMap { $0 }.joined(separator: " ") }
        case .deviceSensor:
            guard let sensor = p["sensor"]?.string else { return image(p) }
            return sensor + " " + fields(p, excluding: bookkeeping.union(["sensor"]), limit: 120)
        case .application:
            return (p["event"]?.string ?? p["state"]?.string ?? p["type"]?.string).map { name in
                [name, p["reason"]?.string ?? p["name"]?.string].compactMap { $0 }.joined(separator: ": ")
            }
        case .custom:
            return (p["name"]?.string ?? p["event"]?.string).map { name in
                [p["phase"]?.string ?? p["marker"]?.string, "\"\(name)\""].compactMap { $0 }.joined(separator: " ")
            }
        case nil:
            return image(p)
        }
    }

    /// The view an input happened in, under the names capture libraries use.
    private static func view(_ p: PlistValue) -> String? {
        p["view"]?.string ?? p["viewController"]?.string ?? p["viewName"]?.string
    }

    /// View names of a stack, given as strings or as `{name: …}` dictionaries.
    private static func names(_ value: PlistValue?) -> [String]? {
        value?.array?.map { $0.string ?? $0["name"]?.string ?? "?" }
    }

    /// "screenshot 48.2 KB 320×480" when the event holds an image or other data.
    private static func image(_ p: PlistValue) -> String? {
        guard case .dict(let fields) = p,
              let (key, size) = fields.lazy.compactMap({ key, value -> (String, Int64)? in
                  if let blob = value.blobReference { return (key, blob.size) }
                  if case .data(let bytes) = value { return (key, Int64(bytes.count)) }
                  return nil
              }).first else { return nil }
        let kb = PrintfNumber.format("%.1f", Double(size) / 1024) + " KB"
        let dimensions = p["width"]?.number.flatMap { w in p["height"]?.number.map { h in "\(short(w))×\(short(h))" } }
        return [PlistValue.screenshotKeys.contains(key) ? "screenshot" : key, kb, dimensions].compactMap { $0 }.joined(separator: " ")
    }
}
