internal import MuEvalWire
public import SessionModel
internal import Foundation
internal import WireProtocol
internal import OrderedCollections

public enum JournalExporterError: Error, CustomStringConvertible {
    case missingBlob(sha256: String, eventID: Int64)
    case corruptPayload(eventID: Int64, reason: String)

    public var description: String {
        switch self {
        case .missingBlob(let sha, let id): "event \(id) refers to data \(sha) that is not in the blobs table"
        case .corruptPayload(let id, let reason): "event \(id) has an unreadable payload: \(reason)"
        }
    }
}

/// Writes a session's events back out, for other tools and for bug reports.
public struct JournalExporter {
    private let reader: SessionReader
    public let format: ExportFormat

    public init(path: String, format: ExportFormat) throws {
        reader = try SessionReader(path: path)
        self.format = format
    }

    /// Exports the whole session to `write`, in pages, so a session of any size exports in bounded memory.
    public func export(classes: [String] = [], to write: ([UInt8]) throws -> Void) throws {
        try write(header)
        var cursor: Int64 = 0
        while true {
            let page = try reader.page(classes: classes, afterID: cursor, limit: 1000, maxBytes: 1 << 20)
            guard let last = page.last else { break }
            for event in page { try write(try encode(event)) }
            cursor = last.id
        }
        try write(footer)
    }

    /// What comes before the first event.
    public var header: [UInt8] { format == .plist ? WireEncoder.plistHeader + Array("<array>\n".utf8) : [] }

    /// What comes after the last event.
    public var footer: [UInt8] { format == .plist ? Array("</array>\n".utf8) + WireEncoder.plistFooter : [] }

    /// One event in the export's format: a plist element with its `data` read back, or a JSON line.
    public func encode(_ event: StoredEvent) throws -> [UInt8] {
        switch format {
        case .plist: WireEncoder.plistElement(try value(of: event), indent: 1)
        case .jsonl: event.jsonLine()
        }
    }

    /// The session itself, after the events, media and transcript: an element (or line) whose one key is `session`,
    /// so that an import on another machine makes the same session of the file (docs/IMPORT.md).
    public func encode(_ session: ExportedSession) throws -> [UInt8] {
        switch format {
        case .plist:
            // Through JSON: the same fields and names as the jsonl line, as plist values.
            let json = try Self.jsonLine(session)
            let value = try json.dropLast().withUnsafeBufferPointer { try PlainJSON.decode($0) }
            return WireEncoder.plistElement(.dict(["session": value]), indent: 1)
        case .jsonl:
            return try Self.jsonLine(["session": session])
        }
    }

    /// The session's own description for `encode(_:)`, read from its file; `lab` is the one exporting it.
    public func exportedSession(lab: String) throws -> ExportedSession? {
        guard let session = try reader.session() else { return nil }
        return ExportedSession(session: session, lab: lab, devices: try reader.devices(), gaps: try reader.gaps(), study: try reader.studyContext())
    }

    /// A `data` value's bytes, after the events of a jsonl export (whose payloads name them by SHA-256):
    /// `{"blob":{"sha256":…,"size":N,"data":base64}}`. A plist export has them inline.
    public func encodeBlob(sha256: String, bytes: [UInt8]) throws -> [UInt8] {
        try Self.jsonLine(["blob": ExportedBlob(sha256: sha256, size: Int64(bytes.count), data: Data(bytes).base64EncodedString())])
    }

    /// A media chunk after the events: an element (or line) whose one key is `media`, so that no
    /// reader takes it for an event (those have a `class`). JSON lines carry the bytes as base64.
    public func encode(_ chunk: StoredMediaChunk) throws -> [UInt8] {
        switch format {
        case .plist:
            var fields: OrderedDictionary<String, PlistValue> = [
                "device": .string(chunk.device), "stream": .string(chunk.stream), "kind": .string(chunk.kind),
                "contentType": .string(chunk.contentType), "part": .integer(chunk.part), "start": .real(chunk.start),
            ]
            fields["duration"] = chunk.duration.map(PlistValue.real)
            fields["seq"] = chunk.seq.map(PlistValue.integer)
            fields["received"] = .real(chunk.received)
            fields["data"] = .data(chunk.bytes)
            return WireEncoder.plistElement(.dict(["media": .dict(fields)]), indent: 1)
        case .jsonl:
            return try Self.jsonLine(["media": ExportedMedia(chunk)])
        }
    }

    /// A transcript segment after the media, likewise under its one key, `speech`.
    public func encode(_ segment: TranscriptSegment) throws -> [UInt8] {
        switch format {
        case .plist:
            var fields: OrderedDictionary<String, PlistValue> = [
                "device": .string(segment.device), "stream": .string(segment.stream), "start": .real(segment.start),
                "end": .real(segment.end), "text": .string(segment.text),
            ]
            fields["confidence"] = segment.confidence.map(PlistValue.real)
            fields["exclamation"] = segment.exclamation.map(PlistValue.string)
            return WireEncoder.plistElement(.dict(["speech": .dict(fields)]), indent: 1)
        case .jsonl:
            return try Self.jsonLine(["speech": segment])
        }
    }

    private static func jsonLine<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A file recorded before values were checked at the edge may hold a chunk's start or a gap's end
        // that is no number: exported as the payloads' typed JSON names them, not a failed export.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return Array(try encoder.encode(value)) + [UInt8(ascii: "\n")]
    }

    /// A media chunk's JSON line: the columns, and the bytes in base64.
    package struct ExportedMedia: Codable {
        package var device, stream, kind, contentType: String
        package var part: Int64
        package var start: Double
        package var duration: Double?
        package var seq: Int64?
        package var received: Double
        package var data: String

        package init(_ chunk: StoredMediaChunk) {
            device = chunk.device
            stream = chunk.stream
            kind = chunk.kind
            contentType = chunk.contentType
            part = chunk.part
            start = chunk.start
            duration = chunk.duration
            seq = chunk.seq
            received = chunk.received
            data = Data(chunk.bytes).base64EncodedString()
        }
    }

    /// A blob's JSON line.
    package struct ExportedBlob: Codable {
        package var sha256: String
        package var size: Int64
        package var data: String
    }

    /// The event as sent, its `data` values read back from the blobs table.
    private func value(of event: StoredEvent) throws -> PlistValue {
        do {
            return try TypedJSON.decode(Array(event.payload.utf8)) { sha in
                guard let bytes = try reader.blob(sha256: sha) else {
                    throw JournalExporterError.missingBlob(sha256: sha, eventID: event.id)
                }
                return bytes
            }
        } catch let error as JournalExporterError {
            throw error
        } catch {
            throw JournalExporterError.corruptPayload(eventID: event.id, reason: "\(error)")
        }
    }
}

extension StoredEvent {
    /// The event as one line of JSON, keys sorted: the stored columns, then the typed JSON payload
    /// spliced in as it is (re-encoding it would lose the integer/real distinction). Used by
    /// `export --format jsonl`, `muevalctl events --json` and `tail --json`: one per event, so by hand.
    public func jsonLine() -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(160 + payload.utf8.count)
        JSONObject.key("class", to: &out)
        JSONString.append(eventClass, to: &out)
        JSONObject.key("device", to: &out)
        JSONString.append(device, to: &out)
        JSONObject.key("id", to: &out)
        JSONObject.integer(id, to: &out)
        JSONObject.key("received", to: &out)
        JSONObject.number(received, to: &out)
        if let seq { JSONObject.key("seq", to: &out); JSONObject.integer(seq, to: &out) }
        JSONObject.key("timestamp", to: &out)
        JSONObject.number(timestamp, to: &out)
        JSONObject.key("timestampEstimated", to: &out)
        JSONObject.bool(timestampEstimated, to: &out)
        JSONObject.key("payload", to: &out)
        out.append(contentsOf: payload.utf8)
        out.append(contentsOf: "}\n".utf8)
        return out
    }
}
