public import SessionModel
internal import Foundation
internal import WireProtocol

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
