internal import Crypto
internal import Foundation
internal import JournalStorage
internal import MuEvalWire
internal import SessionModel
internal import WireProtocol

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
