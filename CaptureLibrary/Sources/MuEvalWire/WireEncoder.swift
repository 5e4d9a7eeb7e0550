public import OrderedCollections

/// Writes wire messages: events in the `<event>` key/value form or as Apple property list documents, and the
/// control messages, each ending in a newline. Whatever it writes, muevald's `WireDecoder` reads back to the same values, and
/// `WireReplyReader` reads back a server's replies and the library's own messages.
public enum WireEncoder {
    /// `<event><key>…</key>value…</event>`.
    public static func event(_ dict: OrderedDictionary<String, PlistValue>) -> [UInt8] {
        var writer = XMLWriter()
        writer.keyValueMessage("event", dict)
        return writer.out
    }

    /// `<event>` with `class`, `timestamp` (a `<real>`) and `seq` first, then `fields` but any of those
    /// three keys: what a capture library sends per event, written without building a merged
    /// dictionary first (the record call's allocations: docs/BENCHMARKS.md, "Capture library").
    public static func event(class eventClass: String, timestamp: Double, seq: Int64,
                             fields: OrderedDictionary<String, PlistValue>) -> [UInt8] {
        var writer = XMLWriter()
        writer.out.reserveCapacity(160 + 48 * fields.count)
        writer.raw("<event>")
        writer.pair("class", .string(eventClass), level: 0)
        writer.pair("timestamp", .real(timestamp), level: 0)
        writer.pair("seq", .integer(seq), level: 0)
        for (key, value) in fields where key != "class" && key != "timestamp" && key != "seq" {
            writer.pair(key, value, level: 0)
        }
        writer.raw("</event>\n")
        return writer.out
    }

    /// What comes before the root value of a property list document as Apple writes it.
    public static let plistHeader = Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """.utf8)
    public static let plistFooter = Array("</plist>\n".utf8)

    /// A complete property list document as Apple writes it (XML declaration, DOCTYPE, tab indentation,
    /// dates in whole seconds).
    public static func plistDocument(_ value: PlistValue) -> [UInt8] {
        plistHeader + plistElement(value, indent: 0) + plistFooter
    }

    /// One value as an indented property list element, for writers that frame the document themselves
    /// (the exporter streams a root array one event at a time).
    public static func plistElement(_ value: PlistValue, indent level: Int) -> [UInt8] {
        var writer = XMLWriter(document: true)
        writer.value(value, level: level)
        return writer.out
    }

    /// `<media>`: one chunk of a media stream.
    public static func media(_ media: WireMedia) -> [UInt8] {
        var dict: OrderedDictionary<String, PlistValue> = [:]
        dict["stream"] = .string(media.stream)
        dict["kind"] = .string(media.kind.rawValue)
        dict["contentType"] = .string(media.format.rawValue)
        dict["part"] = .integer(media.part)
        dict["start"] = .real(media.start)
        dict["duration"] = media.duration.map(PlistValue.real)
        dict["seq"] = media.seq.map(PlistValue.integer)
        dict["data"] = .data(media.bytes)
        return message("media", dict)
    }

    public static func hello(_ hello: DeviceHello) -> [UInt8] {
        var dict: OrderedDictionary<String, PlistValue> = [:]
        dict["protocolVersion"] = hello.protocolVersion.map(PlistValue.integer)
        dict["deviceId"] = .string(hello.deviceId)
        dict["deviceName"] = hello.device.name.map(PlistValue.string)
        dict["model"] = hello.model.map(PlistValue.string)
        dict["systemVersion"] = hello.systemVersion.map(PlistValue.string)
        dict["appId"] = hello.appId.map(PlistValue.string)
        dict["appVersion"] = hello.appVersion.map(PlistValue.string)
        dict["screenWidth"] = hello.screenWidth.map(PlistValue.real)
        dict["screenHeight"] = hello.screenHeight.map(PlistValue.real)
        dict["screenScale"] = hello.screenScale.map(PlistValue.real)
        dict["token"] = hello.token.map(PlistValue.string)
        dict["pairing"] = hello.pairing.map(PlistValue.string)
        dict["invitation"] = hello.invitation.map(PlistValue.string)
        return message("hello", dict)
    }

    public static func goodbye() -> [UInt8] { Array("<goodbye/>\n".utf8) }

    /// `tasks` and `questionnaire` only when there are any: a plain session's welcome stays as it was.
    public static func welcome(_ welcome: Welcome) -> [UInt8] {
        var dict: OrderedDictionary<String, PlistValue> = [
            "session": .string(welcome.sessionId), "sensors": .array(welcome.sensors.map(PlistValue.string)),
        ]
        if !welcome.tasks.isEmpty { dict["tasks"] = .array(welcome.tasks.map(\.plist)) }
        dict["questionnaire"] = welcome.questionnaire.map(PlistValue.string)
        return message("welcome", dict)
    }

    public static func ack(seq: Int64) -> [UInt8] { message("ack", ["seq": .integer(seq)]) }

    public static func error(_ error: WireReplyError) -> [UInt8] {
        var dict: OrderedDictionary<String, PlistValue> = ["reason": .string(error.reason)]
        dict["fromSeq"] = error.fromSeq.map(PlistValue.integer)
        dict["seq"] = error.seq.map(PlistValue.integer)
        return message("error", dict)
    }

    /// Appends a finite Double in shortest round-trip form that always reads back as a real: Swift's `description`
    /// ("1.0", "2.5e-07", "1e+20" — all valid JSON and plist), with ".0" added should it ever lack both `.` and `e`.
    /// Typed JSON writes its reals the same way.
    public static func writeReal(_ value: Double, into out: inout [UInt8]) {
        var text = value.description
        text.withUTF8 { utf8 in
            out.append(contentsOf: utf8)
            if !utf8.contains(UInt8(ascii: ".")) && !utf8.contains(UInt8(ascii: "e")) {
                out.append(UInt8(ascii: "."))
                out.append(UInt8(ascii: "0"))
            }
        }
    }

    private static func message(_ name: StaticString, _ dict: OrderedDictionary<String, PlistValue>) -> [UInt8] {
        var writer = XMLWriter()
        writer.keyValueMessage(name, dict)
        return writer.out
    }
}

/// Property list XML: compact wire messages, or documents as Apple writes them.
private struct XMLWriter {
    var out: [UInt8] = []
    /// A document for other tools: indented with tabs, and `<date>` in whole seconds (rounded down, as
    /// Apple's writer does), since Apple's format has no fraction and readers such as Python's plistlib
    /// refuse one. Wire messages keep a date's fraction: muevald's decoder reads it.
    let document: Bool

    init(document: Bool = false) {
        self.document = document
    }

    mutating func raw(_ text: StaticString) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func keyValueMessage(_ name: StaticString, _ dict: OrderedDictionary<String, PlistValue>) {
        raw("<"); raw(name); raw(">")
        for (key, value) in dict { pair(key, value, level: 0) }
        raw("</"); raw(name); raw(">\n")
    }

    private mutating func startLine(_ level: Int) {
        guard document else { return }
        out.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: level))
    }

    private mutating func endLine() {
        if document { out.append(UInt8(ascii: "\n")) }
    }

    mutating func pair(_ key: String, _ value: PlistValue, level: Int) {
        startLine(level)
        raw("<key>")
        text(key)
        raw("</key>")
        endLine()
        self.value(value, level: level)
    }

    mutating func value(_ value: PlistValue, level: Int) {
        startLine(level)
        switch value {
        case .string(let s):
            raw("<string>"); text(s); raw("</string>")
        case .integer(let v):
            raw("<integer>"); out.append(contentsOf: String(v).utf8); raw("</integer>")
        case .real(let v):
            raw("<real>")
            if v.isFinite { WireEncoder.writeReal(v, into: &out) } else { out.append(contentsOf: v.description.utf8) }
            raw("</real>")
        case .bool(let v):
            v ? raw("<true/>") : raw("<false/>")
        case .date(let v):
            raw("<date>"); ISO8601.format(document ? v.rounded(.down) : v, into: &out); raw("</date>")
        case .data(let v):
            raw("<data>"); Base64.encode(v, into: &out); raw("</data>")
        case .array(let items) where items.isEmpty:
            raw("<array/>")
        case .array(let items):
            raw("<array>")
            endLine()
            for item in items { self.value(item, level: level + 1) }
            startLine(level)
            raw("</array>")
        case .dict(let dict) where dict.isEmpty:
            raw("<dict/>")
        case .dict(let dict):
            raw("<dict>")
            endLine()
            for (key, item) in dict { pair(key, item, level: level + 1) }
            startLine(level)
            raw("</dict>")
        }
        endLine()
    }

    /// Escapes markup characters, and control characters (including CR, which XML readers would normalize)
    /// as numeric references so that strings come back byte for byte.
    private mutating func text(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            var runStart = 0
            for i in 0..<utf8.count {
                let b = utf8[i]
                guard b == UInt8(ascii: "<") || b == UInt8(ascii: "&") || b == UInt8(ascii: ">")
                    || (b < 0x20 && b != UInt8(ascii: "\t") && b != UInt8(ascii: "\n")) else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
                runStart = i + 1
                switch b {
                case UInt8(ascii: "<"): raw("&lt;")
                case UInt8(ascii: "&"): raw("&amp;")
                case UInt8(ascii: ">"): raw("&gt;")
                default: out.append(contentsOf: "&#\(b);".utf8)
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
    }
}
