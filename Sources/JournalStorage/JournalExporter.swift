import Foundation
import WireProtocol

/// Writes a session's events back out, for other tools and for bug reports.
public enum ExportFormat: String, Sendable, CaseIterable, Codable {
    /// One Apple XML property list whose root array holds every event as sent, `data` values included.
    case plist
    /// One JSON object per line: the stored columns plus the typed JSON payload (`data` as SHA-256 references).
    case jsonl
}

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
        while let last = try exportPage(classes: classes, after: cursor, limit: 1000, to: write) { cursor = last }
        try write(footer)
    }

    /// What comes before the first event.
    public var header: [UInt8] { format == .plist ? WireEncoder.plistHeader + Array("<array>\n".utf8) : [] }

    /// What comes after the last event.
    public var footer: [UInt8] { format == .plist ? Array("</array>\n".utf8) + WireEncoder.plistFooter : [] }

    /// Exports up to `limit` events stored after id `after`; returns the last id written, nil when there was none.
    public func exportPage(classes: [String] = [], after: Int64, limit: Int, to write: ([UInt8]) throws -> Void) throws -> Int64? {
        var last: Int64?
        try reader.forEachEvent(classes: classes, afterID: after, limit: limit) { event in
            switch format {
            case .plist: try write(WireEncoder.plistElement(try value(of: event), indent: 1))
            case .jsonl: try write(event.jsonLine())
            }
            last = event.id
        }
        return last
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
    /// The event as one line of JSON: the stored columns, then the typed JSON payload spliced in
    /// as it is (re-encoding it would lose the integer/real distinction). Used by `export --format jsonl`
    /// and `muevalctl events --json`.
    public func jsonLine() -> [UInt8] {
        var meta = (try? JSONEncoder.sortedKeys.encode(ExportLine(self))) ?? Data("{}".utf8)
        meta.removeLast()
        return Array(meta) + Array(",\"payload\":".utf8) + Array(payload.utf8) + Array("}\n".utf8)
    }
}

extension JSONEncoder {
    fileprivate static var sortedKeys: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

private struct ExportLine: Encodable {
    var id: Int64
    var device: String
    var seq: Int64?
    var `class`: String
    var timestamp: Double
    var timestampEstimated: Bool
    var received: Double

    init(_ event: StoredEvent) {
        id = event.id
        device = event.device
        seq = event.seq
        self.class = event.eventClass
        timestamp = event.timestamp
        timestampEstimated = event.timestampEstimated
        received = event.received
    }
}
