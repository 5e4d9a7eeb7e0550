internal import SessionModel

/// Tells what a file is from its first bytes: one of the import formats, a recording to attach, or what
/// kind of content it has for the error. Never the content itself: the error goes back to whoever asked.
enum FormatRecognizer {
    enum Kind: Equatable {
        case log(ImportFormat)
        /// A video or audio file (MP4, QuickTime, WAV), for an IMUT log that names it.
        case recording
        /// "text", "binary data", …: a kind of content, quoting none of it.
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
            return .unknown("XML that is neither GPX nor a property list")
        default:
            let binary = body.prefix(64).contains { $0 < 0x09 || ($0 > 0x0D && $0 < 0x20) }
            return .unknown(binary ? "binary data" : "text")
        }
    }

    /// The formats `recognise` knows, for an error that names none of them.
    static let accepted = "IMUT logs, GPX tracks and muEval exports (jsonl or plist), and with an IMUT log the MP4, QuickTime or WAV recordings it names"
}
