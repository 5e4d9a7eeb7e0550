internal import SessionModel

/// Tells what a file is from its first bytes: one of the import formats, a recording to attach, or a
/// description of what it looked like for the error.
enum FormatRecognizer {
    enum Kind: Equatable {
        case log(ImportFormat)
        /// A video or audio file (MP4, QuickTime, WAV), for an IMUT log that names it.
        case recording
        case unknown(String)
    }

    static func recognise(_ head: [UInt8]) -> Kind {
        if head.count >= 12, head[4...7].elementsEqual("ftyp".utf8) { return .recording }
        if head.count >= 12, head[0...3].elementsEqual("RIFF".utf8), head[8...11].elementsEqual("WAVE".utf8) { return .recording }
        var body = head[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        body = body.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard let first = body.first else { return .unknown(head.isEmpty ? "an empty file" : "only whitespace") }
        switch first {
        case UInt8(ascii: "["): return .log(.imut)
        case UInt8(ascii: "{"): return .log(.jsonl)
        case UInt8(ascii: "<"):
            let text = String(decoding: body.prefix(2048), as: UTF8.self)
            if text.contains("<gpx") { return .log(.gpx) }
            if text.contains("<plist") || text.contains("DOCTYPE plist") { return .log(.plist) }
            return .unknown("an XML document that is neither GPX nor a property list" + (rootName(text).map { " (its root is <\($0)>)" } ?? ""))
        default:
            if body.prefix(64).contains(where: { $0 < 0x09 || ($0 > 0x0D && $0 < 0x20) }) {
                return .unknown("binary data starting with " + body.prefix(8).map { hex($0) }.joined(separator: " "))
            }
            let start = String(decoding: body.prefix(40), as: UTF8.self).split(separator: "\n").first ?? ""
            return .unknown("text starting with \"\(start)\"")
        }
    }

    private static func rootName(_ text: String) -> String? {
        var rest = text[...]
        while let open = rest.firstIndex(of: "<") {
            rest = rest[rest.index(after: open)...]
            guard let first = rest.first, first != "?", first != "!" else { continue }
            return String(rest.prefix { !" >/\n\t\r".contains($0) })
        }
        return nil
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}
