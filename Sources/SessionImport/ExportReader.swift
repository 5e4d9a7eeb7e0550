internal import Crypto
internal import Foundation
internal import JournalStorage
internal import OrderedCollections
internal import SessionModel
internal import WireProtocol

/// What both export formats carry besides events, and the checks they share: the session record
/// first, `data` values all present at the end.
private struct ExportRecords {
    let context: ImportContext
    var exported: ExportedSession?
    /// Blob names events refer to, with where the first reference is; and those the file brought.
    var referenced: [String: ImportError.Position] = [:]
    var referencedInOrder: [String] = []
    var carried: Set<String> = []
    var sawEvent = false

    mutating func session(_ session: ExportedSession, at position: ImportError.Position, into draft: SessionDraft) throws {
        guard exported == nil else {
            throw ImportError(file: context.file, at: position, "a second session record: the file is two exports run together")
        }
        guard session.version <= ExportedSession.currentVersion else {
            throw ImportError(file: context.file, at: position, "an export of version \(session.version), made by a newer muEval; this one reads up to \(ExportedSession.currentVersion)")
        }
        try checkRanges(of: session, at: position)
        exported = session
        for device in session.devices { try draft.addDevice(device) }
        for gap in session.gaps { try draft.addGap(gap) }
        if let study = session.study { try draft.addStudyContext(study) }
    }

    mutating func event(_ event: WireEvent, device: String, received: Double, at position: ImportError.Position, into draft: SessionDraft) throws {
        sawEvent = true
        do {
            try draft.add(event, device: device, received: received)
        } catch DraftLimit.tooManyEvents {
            throw ImportError(file: context.file, at: position, "more events than import.max-events (\(context.limits.maxEvents)); raise it in muevald's configuration")
        }
        try draft.flushIfFull()
    }

    /// A record with a value outside its range (docs/PROTOCOL.md, "Value ranges") refuses the file, as
    /// any bad record does. Imports check with the default ranges, as analysis reads: a file means
    /// the same wherever it goes, whatever one daemon's `limits.*` say.
    func check(_ problem: ValueRangeProblem?, at position: ImportError.Position, _ record: String) throws {
        if let problem { throw ImportError(file: context.file, at: position, "\(record): \(problem.description)") }
    }

    /// The session's own times, and its devices' times and screens.
    private func checkRanges(of session: ExportedSession, at position: ImportError.Position) throws {
        let ranges = ValueRanges.default
        var times: [(field: String, time: Double?)] = [("created", session.created), ("started", session.started), ("stopped", session.stopped)]
        for (index, gap) in session.gaps.enumerated() { times += [("gaps[\(index)].start", gap.start), ("gaps[\(index)].end", gap.end)] }
        for (index, device) in session.devices.enumerated() {
            times += [("devices[\(index)].firstSeen", device.firstSeen), ("devices[\(index)].lastSeen", device.lastSeen)]
            try check(ranges.problem(screenWidth: device.screenWidth, screenHeight: device.screenHeight, screenScale: device.screenScale),
                      at: position, "the session record's devices[\(index)]")
        }
        for (field, time) in times {
            try check(time.flatMap { ranges.problem($0, as: .time, at: field) }, at: position, "the session record")
        }
    }

    func check(_ media: WireMedia, received: Double, at position: ImportError.Position) throws {
        let ranges = ValueRanges.default
        try check(ranges.problem(in: media) ?? ranges.problem(received, as: .time, at: "received"), at: position, "a media record")
    }

    func check(_ segment: TranscriptSegment, at position: ImportError.Position) throws {
        let ranges = ValueRanges.default
        try check(ranges.problem(segment.start, as: .time, at: "start") ?? ranges.problem(segment.end, as: .time, at: "end")
                  ?? ranges.problem(segment.end - segment.start, as: .duration, at: "end - start"), at: position, "a speech record")
    }

    /// Notes the blobs a payload names, with where the first mention of each is.
    mutating func noteBlobs(in payload: UnsafeBufferPointer<UInt8>, at position: ImportError.Position) {
        for sha in TypedJSON.blobReferences(in: payload) where referenced[sha] == nil {
            referenced[sha] = position
            referencedInOrder.append(sha)
        }
    }

    func checkBlobs() throws {
        for sha in referencedInOrder where !carried.contains(sha) {
            throw ImportError(file: context.file, at: referenced[sha], "the event refers to data \(sha) that the file does not carry (was it exported with --class?)")
        }
    }
}

/// Reads `muevalctl export --format jsonl`: one JSON object per line, a `session` line first, then the
/// events (the stored columns and the typed JSON payload, kept byte for byte), `media`, `speech` and
/// `blob` lines.
struct JSONLinesExportReader: ImportReader {
    private var records: ExportRecords
    private var line = 0

    init(context: ImportContext) {
        records = ExportRecords(context: context)
    }

    private var context: ImportContext { records.context }

    mutating func read(_ chunks: inout FileChunks, into draft: SessionDraft) throws -> ReadSummary {
        var pending: [UInt8] = []
        while case let chunk = try chunks.next(), !chunk.isEmpty {
            var start = 0
            while let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) {
                if pending.isEmpty {
                    try chunk.withUnsafeBufferPointer { try self.line(UnsafeBufferPointer(rebasing: $0[start..<newline]), into: draft) }
                } else {
                    pending.append(contentsOf: chunk[start..<newline])
                    try pending.withUnsafeBufferPointer { try self.line($0, into: draft) }
                    pending.removeAll(keepingCapacity: pending.capacity <= 1 << 20)
                }
                start = newline + 1
            }
            pending.append(contentsOf: chunk[start...])
            guard pending.count <= PlistArrayScanner.maxElementBytes else {
                throw ImportError(file: context.file, at: .text(line: line + 1, column: 1), "a line longer than \(PlistArrayScanner.maxElementBytes >> 20) MiB")
            }
        }
        if !pending.isEmpty { try pending.withUnsafeBufferPointer { try self.line($0, into: draft) } }
        try draft.flush()
        try records.checkBlobs()
        guard records.sawEvent || records.exported != nil else { throw ImportError(file: context.file, "holds no session and no event") }
        return ReadSummary(exported: records.exported, device: nil)
    }

    private mutating func line(_ bytes: UnsafeBufferPointer<UInt8>, into draft: SessionDraft) throws {
        line += 1
        var bytes = bytes
        if bytes.last == UInt8(ascii: "\r") { bytes = UnsafeBufferPointer(rebasing: bytes.dropLast()) }
        guard bytes.contains(where: { $0 != 0x20 && $0 != 0x09 }) else { return }
        let lineStart = TextPosition(line: line, column: 1)
        func at(_ offset: Int) -> ImportError.Position { lineStart.advanced(over: bytes.prefix(offset)).errorPosition }
        let members: [(key: String, value: Range<Int>)]
        do {
            members = try PlainJSON.members(bytes)
        } catch {
            throw ImportError(file: context.file, at: at(error.offset), error.message)
        }
        func value(_ key: String) -> (bytes: UnsafeBufferPointer<UInt8>, at: ImportError.Position)? {
            members.first { $0.key == key }.map { (UnsafeBufferPointer(rebasing: bytes[$0.value]), at($0.value.lowerBound)) }
        }
        func decode<T: Decodable>(_ type: T.Type, _ key: String) throws -> T {
            let (slice, position) = value(key)!
            do {
                return try JSONDecoder().decode(T.self, from: Data(slice))
            } catch {
                throw ImportError(file: context.file, at: position, "a \(key) record that cannot be read: \(Self.explain(error))")
            }
        }
        if members.count == 1, let key = members.first?.key {
            switch key {
            case "session":
                return try records.session(try decode(ExportedSession.self, key), at: at(0), into: draft)
            case "speech":
                let segment = try decode(TranscriptSegment.self, key)
                try records.check(segment, at: at(0))
                return draft.addSpeech(segment)
            case "media":
                let media = try decode(JournalExporter.ExportedMedia.self, key)
                guard let format = MediaFormat(contentType: media.contentType) else {
                    throw ImportError(file: context.file, at: at(0), "media of unknown content type \"\(media.contentType)\"")
                }
                guard let bytes = Data(base64Encoded: media.data) else {
                    throw ImportError(file: context.file, at: value(key)!.at, "media data that is not base64")
                }
                let chunk = WireMedia(stream: media.stream, format: format, part: media.part, start: media.start,
                                      duration: media.duration, seq: media.seq, bytes: [UInt8](bytes))
                try records.check(chunk, received: media.received, at: at(0))
                return try draft.add(chunk, device: media.device, received: media.received)
            case "blob":
                let blob = try decode(JournalExporter.ExportedBlob.self, key)
                guard let data = Data(base64Encoded: blob.data), lowercaseHex(SHA256.hash(data: data)) == blob.sha256 else {
                    throw ImportError(file: context.file, at: value(key)!.at, "blob \(blob.sha256): its data is not base64 of bytes with that SHA-256")
                }
                try draft.addBlob(sha256: blob.sha256, bytes: [UInt8](data))
                records.carried.insert(blob.sha256)
                return
            default:
                break
            }
        }
        guard value("class") != nil else {
            throw ImportError(file: context.file, at: at(0), "a line that is neither an event (it has no \"class\") nor a session, media, speech or blob record")
        }
        try event(members: value, into: draft, at: at(0))
    }

    /// An event line: `class`, `device`, `received`, `timestamp`, `timestampEstimated`, `seq` and `payload`.
    private mutating func event(members value: (String) -> (bytes: UnsafeBufferPointer<UInt8>, at: ImportError.Position)?,
                                into draft: SessionDraft, at lineStart: ImportError.Position) throws {
        func column(_ key: String, optional: Bool = false) throws -> PlistValue? {
            guard let (bytes, position) = value(key) else {
                if optional { return nil }
                throw ImportError(file: context.file, at: lineStart, "an event line without \"\(key)\"")
            }
            do {
                return try PlainJSON.decode(bytes)
            } catch {
                throw ImportError(file: context.file, at: position, error.message)
            }
        }
        func fail(_ key: String, _ expected: String) -> ImportError {
            ImportError(file: context.file, at: value(key)?.at ?? lineStart, "\"\(key)\" must be \(expected)")
        }
        guard let eventClass = try column("class")?.string else { throw fail("class", "a string") }
        guard let device = try column("device")?.string else { throw fail("device", "a string") }
        guard let received = try column("received")?.number else { throw fail("received", "a number") }
        guard let timestamp = try column("timestamp")?.number else { throw fail("timestamp", "a number") }
        let estimated = try column("timestampEstimated", optional: true)
        guard estimated == nil || estimated?.bool != nil else { throw fail("timestampEstimated", "true or false") }
        let seqValue = try column("seq", optional: true)
        var seq: Int64?
        if let seqValue {
            guard case .integer(let number) = seqValue else { throw fail("seq", "an integer") }
            seq = number
        }
        guard let (payload, payloadAt) = value("payload") else { throw ImportError(file: context.file, at: lineStart, "an event line without \"payload\"") }
        let decoded: PlistValue
        do {
            decoded = try TypedJSON.decodeLeavingBlobs(payload)
        } catch let error as TypedJSONError {
            let position: ImportError.Position
            if case .text(let line, let column) = payloadAt { position = .text(line: line, column: column + error.offset) } else { position = payloadAt }
            throw ImportError(file: context.file, at: position, "the payload is not typed JSON: \(error.message)")
        }
        guard case .dict(let fields) = decoded, fields["class"]?.string == eventClass else {
            throw ImportError(file: context.file, at: payloadAt, "the payload must be the event's dict, with the line's \"class\"")
        }
        let ranges = ValueRanges.default
        try records.check(ranges.problem(received, as: .time, at: "received"), at: value("received")?.at ?? lineStart, "an event line")
        try records.check(ranges.problem(timestamp: timestamp), at: value("timestamp")?.at ?? lineStart, "an event line")
        try records.check(ranges.problem(inEvent: decoded), at: payloadAt, "the payload")
        records.noteBlobs(in: payload, at: payloadAt)
        let event = WireEvent(eventClass: eventClass, timestamp: estimated?.bool == true ? nil : timestamp, seq: seq,
                              sensor: fields["sensor"]?.string, payload: Array(payload), blobs: [])
        try records.event(event, device: device, received: received, at: lineStart, into: draft)
    }

    static func explain(_ error: Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, _)?: "it has no \"\(key.stringValue)\""
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .dataCorrupted(let context)?:
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default: "\(error)"
        }
    }
}

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
