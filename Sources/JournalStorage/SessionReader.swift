public import SessionModel
internal import WireProtocol

/// Read-only access to one session file, for `muevalctl events`, export and analysis.
/// Works on a live file (WAL lets it read while the writer commits) and on a copied one.
public final class SessionReader {
    private let database: SQLiteDatabase

    public init(path: String) throws {
        database = try SQLiteDatabase(path: path, readOnly: true)
    }

    /// The session's own description, as written into the file.
    public func session() throws -> SessionRecord? {
        let statement = try database.prepare("SELECT \(SessionRow.columns) FROM session LIMIT 1")
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return SessionRow.read(statement, path: database.path, events: try eventCount())
    }

    public func eventCount() throws -> Int64 {
        let statement = try database.prepare("SELECT COUNT(*) FROM events")
        defer { statement.reset() }
        _ = try statement.step()
        return statement.int64(0)
    }

    public func devices() throws -> [DeviceRecord] {
        let statement = try database.prepare("SELECT \(DeviceRow.columns) FROM devices ORDER BY first_seen")
        var result: [DeviceRecord] = []
        try statement.forEachRow { result.append(DeviceRow.read($0)) }
        return result
    }

    public func gaps() throws -> [SessionGap] {
        let statement = try database.prepare("SELECT start, \"end\", reason FROM gaps ORDER BY start")
        var result: [SessionGap] = []
        try statement.forEachRow { row in
            result.append(SessionGap(start: row.double(0), end: optionalDouble(row, 1), reason: row.string(2) ?? ""))
        }
        return result
    }

    /// Events in storage order, optionally of some classes only; `last` keeps the newest N (still in order).
    public func events(classes: [String] = [], afterID: Int64 = 0, last: Int? = nil) throws -> [StoredEvent] {
        var result: [StoredEvent] = []
        if let last {
            let sql = "SELECT * FROM (SELECT \(StoredEventRow.columns) FROM events WHERE id > ?\(classFilter(classes)) ORDER BY id DESC LIMIT ?) ORDER BY id"
            let statement = try database.prepare(sql)
            statement.bind([.integer(afterID)] + classes.map { .text($0) } + [.integer(Int64(last))])
            try statement.forEachRow { result.append(StoredEventRow.read($0)) }
        } else {
            try forEachEvent(classes: classes, afterID: afterID) { result.append($0) }
        }
        return result
    }

    /// Streams events in storage order without holding them all in memory; at most `limit` when given.
    public func forEachEvent(classes: [String] = [], afterID: Int64 = 0, limit: Int? = nil,
                             _ body: (StoredEvent) throws -> Void) throws {
        let statement = try database.prepare(
            "SELECT \(StoredEventRow.columns) FROM events WHERE id > ?\(classFilter(classes)) ORDER BY id LIMIT ?")
        statement.bind([.integer(afterID)] + classes.map { .text($0) } + [.integer(Int64(limit ?? -1))])
        try statement.forEachRow { try body(StoredEventRow.read($0)) }
    }

    /// The bytes of a `data` value, by the SHA-256 its payload names.
    public func blob(sha256: String) throws -> [UInt8]? {
        let statement = try database.prepare("SELECT bytes FROM blobs WHERE sha256 = ?")
        defer { statement.reset() }
        statement.bind(1, sha256)
        return try statement.step() ? statement.bytes(0) : nil
    }

    private func classFilter(_ classes: [String]) -> String {
        classes.isEmpty ? "" : " AND class IN (\(classes.map { _ in "?" }.joined(separator: ", ")))"
    }
}

enum StoredEventRow {
    static let columns = "id, device, seq, class, timestamp, timestamp_estimated, received, payload"

    static func read(_ row: SQLiteStatement) -> StoredEvent {
        StoredEvent(id: row.int64(0), device: row.string(1) ?? "", seq: row.isNull(2) ? nil : row.int64(2),
                    eventClass: row.string(3) ?? "", timestamp: row.double(4), timestampEstimated: row.int64(5) != 0,
                    received: row.double(6), payload: row.string(7) ?? "{}")
    }
}
