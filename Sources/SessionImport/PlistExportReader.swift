internal import Foundation
internal import MuEvalWire
internal import OrderedCollections
internal import SessionModel
internal import WireProtocol

/// Reads `muevalctl export --format plist`: the root array's elements, an element at a time — the
/// `session` record, events as sent (their `data` inline), `media` and `speech` records. A plist carries
/// no arrival times: each event's is its own timestamp.
struct PlistExportReader: ImportReader {
    private var records: ExportRecords
    private var elements = PlistElementReader(limits: WireLimits(maxMessageBytes: PlistArrayScanner.maxElementBytes,
                                                                maxMediaChunkBytes: PlistArrayScanner.maxElementBytes))

    init(context: ImportContext) {
        records = ExportRecords(context: context)
    }

    private var context: ImportContext { records.context }

    mutating func read(_ chunks: inout FileChunks, into draft: SessionDraft) throws -> ReadSummary {
        var scanner = PlistArrayScanner()
        try scanner.forEachElement(in: &chunks, file: context.file) { bytes, at in try element(bytes, at: at, into: draft) }
        let ending = scanner.ending
        if let inside = ending.insideElementAt {
            throw ImportError(file: context.file, at: inside.errorPosition, "the file ends inside this element: it was cut off")
        }
        guard ending.closed else { throw ImportError(file: context.file, at: scanner.position.errorPosition, "the file ends before </plist>: it was cut off") }
        try draft.flush()
        guard records.sawEvent || records.exported != nil else { throw ImportError(file: context.file, "holds no session and no event") }
        // The session record comes last and names the device; until then the events wait under no name.
        guard let device = records.exported?.device ?? records.exported?.devices.first?.id else {
            throw ImportError(file: context.file, "has no session record naming the device (an export made with --class, or by an older muEval): import the jsonl export")
        }
        try draft.renameDevice(Self.unnamedDevice, to: device)
        return ReadSummary(exported: records.exported, device: nil)
    }

    /// The device of events read before the session record named it.
    private static let unnamedDevice = ""

    private mutating func element(_ bytes: [UInt8], at start: TextPosition, into draft: SessionDraft) throws {
        let value: PlistValue
        var elements = self.elements
        defer { self.elements = elements }
        switch bytes.withUnsafeBufferPointer({ p in Result { () throws(PlistElementError) in try elements.value(p) } }) {
        case .success(let parsed): value = parsed
        case .failure(let error):
            throw ImportError(file: context.file, at: start.advanced(over: bytes.prefix(error.offset)).errorPosition, error.message)
        }
        let at = start.errorPosition
        guard case .dict(let dict) = value else { throw ImportError(file: context.file, at: at, "an element that is not a dict") }
        if dict.count == 1, let key = dict.keys.first, let inner = dict.values.first, case .dict(let fields) = inner,
           ["session", "media", "speech"].contains(key) {
            switch key {
            case "session":
                let json = TypedJSON.encode(inner).json
                let session: ExportedSession
                do {
                    session = try JSONDecoder().decode(ExportedSession.self, from: Data(json))
                } catch {
                    throw ImportError(file: context.file, at: at, "a session record that cannot be read: \(JSONLinesExportReader.explain(error))")
                }
                return try records.session(session, at: at, into: draft)
            case "media":
                return try media(fields, at: at, into: draft)
            default:
                guard let device = fields["device"]?.string, let stream = fields["stream"]?.string, let start = fields["start"]?.number,
                      let end = fields["end"]?.number, let text = fields["text"]?.string else {
                    throw ImportError(file: context.file, at: at, "a speech record needs device, stream, start, end and text")
                }
                let segment = TranscriptSegment(device: device, stream: stream, start: start, end: end, text: text,
                                                confidence: fields["confidence"]?.number, exclamation: fields["exclamation"]?.string)
                try records.check(segment, at: at)
                return draft.addSpeech(segment)
            }
        }
        let event: WireEvent
        do {
            event = try WireEvent(fields: dict)
        } catch {
            throw ImportError(file: context.file, at: at, error.message)
        }
        // A plist has no arrival times, and an event sent without a timestamp (an observer's note) no time
        // at all: it takes the latest time before it, which keeps it in its place.
        let time = event.timestamp ?? draft.lastTimestamp ?? records.exported?.started ?? 0
        try records.event(event, device: Self.unnamedDevice, received: time, at: at, into: draft)
    }

    private func media(_ fields: OrderedDictionary<String, PlistValue>, at: ImportError.Position, into draft: SessionDraft) throws {
        guard let device = fields["device"]?.string, let stream = fields["stream"]?.string,
              let contentType = fields["contentType"]?.string, case .integer(let part)? = fields["part"],
              let start = fields["start"]?.number, case .data(let bytes)? = fields["data"] else {
            throw ImportError(file: context.file, at: at, "a media record needs device, stream, contentType, part, start and data")
        }
        guard let format = MediaFormat(contentType: contentType) else {
            throw ImportError(file: context.file, at: at, "media of unknown content type \"\(contentType)\"")
        }
        var seq: Int64?
        if case .integer(let value)? = fields["seq"] { seq = value }
        let chunk = WireMedia(stream: stream, format: format, part: part, start: start, duration: fields["duration"]?.number,
                              seq: seq, bytes: bytes)
        let received = fields["received"]?.number ?? start
        try records.check(chunk, received: received, at: at)
        try draft.add(chunk, device: device, received: received)
    }
}
