public import SessionModel
internal import WireProtocol
internal import Foundation

/// Read-only access to one session file, for `muevalctl events`, export and analysis.
/// Works on a live file (WAL lets it read while the writer commits) and on a copied one.
public final class SessionReader {
    let database: SQLiteDatabase

    public init(path: String) throws {
        database = try SQLiteDatabase(path: path, readOnly: true)
    }

    /// The session's own description, as written into the file.
    public func session() throws -> SessionRecord? {
        let statement = try database.prepare("SELECT \(SessionRow.columns) FROM session LIMIT 1")
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        var record = SessionRow.read(statement, path: database.path, events: try eventCount())
        record.assignment = try studyContext()?.assignment
        let imports = try self.imports()
        record.imports = imports.isEmpty ? nil : imports
        return record
    }

    /// The files the session was imported from, oldest first; empty for a session recorded live (and
    /// for files made before imports existed).
    public func imports() throws -> [SessionImportRecord] {
        guard try hasTable("imports") else { return [] }
        let statement = try database.prepare("SELECT \(ImportRow.columns) FROM imports ORDER BY rowid")
        var result: [SessionImportRecord] = []
        try statement.forEachRow { result.append(ImportRow.read($0)) }
        return result
    }

    /// The study the session records, as written at its start; nil for a session outside any study
    /// (and for files made before studies existed, which have no `study` table).
    public func studyContext() throws -> StudyContext? {
        guard try hasTable("study") else { return nil }
        let statement = try database.prepare("SELECT context FROM study LIMIT 1")
        defer { statement.reset() }
        guard try statement.step(), let text = statement.string(0) else { return nil }
        do {
            return try JSONDecoder().decode(StudyContext.self, from: Data(text.utf8))
        } catch {
            throw SQLiteError(code: 0, message: "its study table cannot be read: \(error)", context: database.path)
        }
    }

    /// A consistent copy of the file (its WAL folded in) at `path`, which must not exist.
    package func copy(to path: String) throws {
        try database.execute("VACUUM INTO '\(path.replacingOccurrences(of: "'", with: "''"))'")
        try DataDirectory.restrict(path)
    }

    public func eventCount() throws -> Int64 {
        let statement = try database.prepare("SELECT COUNT(*) FROM events")
        defer { statement.reset() }
        _ = try statement.step()
        return statement.int64(0)
    }

    /// Receive time minus device time of the newest event a device timestamped (observers' notes
    /// left out): how to put a moment on the device's clock. Nil when no event has a device time.
    public func clockOffset() throws -> Double? {
        let statement = try database.prepare("""
            SELECT received - timestamp FROM events WHERE timestamp_estimated = 0 AND class <> ? ORDER BY id DESC LIMIT 1
            """)
        defer { statement.reset() }
        statement.bind(1, ObserverNote.eventClass)
        return try statement.step() ? statement.double(0) : nil
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

    /// Every event in storage order, optionally of some classes only: for tests and tools that know the
    /// session is small; the daemon reads with `page`, so that no session has to fit in memory.
    public func events(classes: [String] = []) throws -> [StoredEvent] {
        var result: [StoredEvent] = []
        try forEachEvent(classes: classes) { result.append($0) }
        return result
    }

    /// The newest `count` events in storage order, optionally of some classes only.
    public func events(classes: [String] = [], last count: Int) throws -> [StoredEvent] {
        try page(classes: classes, afterID: try idBefore(last: count, classes: classes), limit: count)
    }

    /// Up to `limit` events stored after `afterID`, in storage order, and no more once `maxBytes` of
    /// payload have been read (one event at least): a page of a session of any size in bounded memory.
    /// `until`: only events of that device time or before, and none stored after the first event past it (storage
    /// order is the devices' order, so the read ends there instead of going on to the end of the file).
    public func page(classes: [String] = [], afterID: Int64, until: Double? = nil, limit: Int, maxBytes: Int = .max) throws -> [StoredEvent] {
        let window = until == nil ? "" : " AND timestamp <= ?2 AND id < (SELECT coalesce(min(id), 9223372036854775807) FROM events WHERE id > ?1 AND timestamp > ?2)"
        let statement = try database.prepare(
            "SELECT \(StoredEventRow.columns) FROM events WHERE id > ?1\(window)\(classFilter(classes, from: 3)) ORDER BY id LIMIT ?\(3 + classes.count)")
        defer { statement.reset() }
        statement.bind([.integer(afterID), .real(until ?? 0)] + classes.map { .text($0) } + [.integer(Int64(limit))])
        var result: [StoredEvent] = []
        var bytes = 0
        while bytes < maxBytes, try statement.step() {
            let event = StoredEventRow.read(statement)
            bytes += event.payload.utf8.count
            result.append(event)
        }
        return result
    }

    /// The id of the last event of `eventClass` at device time `time` or before, else of its first one; nil when the
    /// session has none (a page replay's snapshot in force at `time`).
    public func eventID(of eventClass: String, inForceAt time: Double) throws -> Int64? {
        let statement = try database.prepare("""
            SELECT id FROM events WHERE class = ?1 ORDER BY (timestamp <= ?2) DESC,
                CASE WHEN timestamp <= ?2 THEN -timestamp ELSE timestamp END, id DESC LIMIT 1
            """)
        defer { statement.reset() }
        statement.bind([.text(eventClass), .real(time)])
        return try statement.step() ? statement.int64(0) : nil
    }

    /// The id after which the newest `count` events (of `classes`) begin; 0 when there are no more than `count`.
    public func idBefore(last count: Int, classes: [String] = []) throws -> Int64 {
        let statement = try database.prepare(
            "SELECT id FROM events WHERE 1\(classFilter(classes)) ORDER BY id DESC LIMIT 1 OFFSET ?")
        defer { statement.reset() }
        statement.bind(classes.map { .text($0) } + [.integer(Int64(count))])
        return try statement.step() ? statement.int64(0) : 0
    }

    /// One event by its id.
    public func event(id: Int64) throws -> StoredEvent? {
        let statement = try database.prepare("SELECT \(StoredEventRow.columns) FROM events WHERE id = ?")
        defer { statement.reset() }
        statement.bind([.integer(id)])
        return try statement.step() ? StoredEventRow.read(statement) : nil
    }

    /// The newest event of `eventClass` with one of `keys` in its payload (the console's latest
    /// screenshot). Newest first by id: it stops at the first match, without an index.
    public func lastEvent(of eventClass: String, havingAnyOf keys: [String]) throws -> StoredEvent? {
        let having = keys.map { _ in "json_type(payload, ?) IS NOT NULL" }.joined(separator: " OR ")
        let statement = try database.prepare(
            "SELECT \(StoredEventRow.columns) FROM events WHERE class = ? AND (\(having)) ORDER BY id DESC LIMIT 1")
        defer { statement.reset() }
        statement.bind([.text(eventClass)] + keys.map { .text("$.\"" + $0 + "\"") })
        return try statement.step() ? StoredEventRow.read(statement) : nil
    }

    /// Streams events in storage order without holding them all in memory (analysis).
    public func forEachEvent(classes: [String] = [], _ body: (StoredEvent) throws -> Void) throws {
        let statement = try database.prepare("SELECT \(StoredEventRow.columns) FROM events WHERE 1\(classFilter(classes)) ORDER BY id")
        statement.bind(classes.map { .text($0) })
        try statement.forEachRow { try body(StoredEventRow.read($0)) }
    }

    /// The bytes of a `data` value, by the SHA-256 its payload names.
    public func blob(sha256: String) throws -> [UInt8]? {
        let statement = try database.prepare("SELECT bytes FROM blobs WHERE sha256 = ?")
        defer { statement.reset() }
        statement.bind(1, sha256)
        return try statement.step() ? statement.bytes(0) : nil
    }

    /// Blobs after `afterSHA256` in name order, up to `limit` and no more once `maxBytes` were read (one
    /// at least): every `data` value of a session a page at a time (a jsonl export's `blob` lines).
    public func blobPage(after afterSHA256: String, limit: Int, maxBytes: Int) throws -> [(sha256: String, bytes: [UInt8])] {
        let statement = try database.prepare("SELECT sha256, bytes FROM blobs WHERE sha256 > ? ORDER BY sha256 LIMIT ?")
        defer { statement.reset() }
        statement.bind([.text(afterSHA256), .integer(Int64(limit))])
        var result: [(sha256: String, bytes: [UInt8])] = []
        var total = 0
        while total < maxBytes, try statement.step() {
            let bytes = statement.bytes(1)
            total += bytes.count
            result.append((statement.string(0) ?? "", bytes))
        }
        return result
    }

    /// `AND class IN (?, …)`; with `from`, numbered parameters from that one on.
    private func classFilter(_ classes: [String], from first: Int? = nil) -> String {
        guard !classes.isEmpty else { return "" }
        let marks = classes.indices.map { index in first.map { "?\($0 + index)" } ?? "?" }
        return " AND class IN (\(marks.joined(separator: ", ")))"
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
