internal import MuEvalWire
public import SessionModel
internal import WireProtocol

/// The write side of one session file. Owned by a `JournalWriter`, which serialises every use
/// (`JournalWriter.perform`): never keep a reference to it.
///
/// While it is open, `events` has no indexes (see `SessionFileSchema.eventIndexes`) and
/// duplicates are found in memory; `finish(buildingIndexes: true)` builds the indexes when the
/// session ends. A file of a session that is still open (muevald stopped or crashed) gets them
/// when that session is stopped after muevald reopened it.
public final class SessionFile {
    let database: SQLiteDatabase
    private let insertEvent: SQLiteStatement
    private let insertBlob: SQLiteStatement
    private let insertMedia: SQLiteStatement
    private var stored = SeqLedger()
    /// `storage.cache_kib`'s default.
    public static let defaultCacheKiB = 512

    /// Opens (creating if needed) the session file at `path` for writing. `indexed` keeps (or builds)
    /// the indexes, for a stopped session's file that takes one more row (an observer's note made
    /// during replay): then the unique index, not the in-memory ledger, keeps (device, seq) unique.
    /// `cacheKiB`: SQLite's page cache for this connection. Appending needs few pages (the tables' right
    /// edges); SQLite's default of 2,000 KiB filled up in every open session and stayed, 2 MB per session
    /// of a study's many (docs/BENCHMARKS.md).
    package init(path: String, synchronous: JournalSynchronous, indexed: Bool = false, cacheKiB: Int = SessionFile.defaultCacheKiB) throws {
        database = try SQLiteDatabase(path: path)
        try DataDirectory.restrict(path)
        try database.execute("""
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = \(synchronous.pragmaValue);
            PRAGMA cache_size = -\(max(cacheKiB, 1));
            PRAGMA application_id = \(SessionFileSchema.applicationID);
            PRAGMA user_version = \(SessionFileSchema.version);
            """)
        try database.execute(SessionFileSchema.tables)
        try database.execute(indexed ? SessionFileSchema.createIndexes : SessionFileSchema.dropIndexes)
        insertEvent = try database.prepare("""
            INSERT INTO events (device, seq, class, timestamp, timestamp_estimated, received, payload)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        insertBlob = try database.prepare("INSERT OR IGNORE INTO blobs (sha256, size, bytes) VALUES (?, ?, ?)")
        insertMedia = try database.prepare("""
            INSERT OR IGNORE INTO media (device, seq, stream, kind, content_type, part, start, duration, received, bytes)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        if indexed { return }
        let seqs = try database.prepare("""
            SELECT device, seq FROM events WHERE seq IS NOT NULL UNION ALL SELECT device, seq FROM media WHERE seq IS NOT NULL
            """)
        try seqs.forEachRow { row in _ = stored.insert(device: row.string(0) ?? "", seq: row.int64(1)) }
    }

    /// Stores a batch (as appended: one array per append) in one transaction: the row id of each
    /// record, nil where (device, seq) was already stored. When it throws, none of it is stored.
    package func store(_ batch: [[JournalRecord]]) throws -> [Int64?] {
        var rowIDs: [Int64?] = []
        rowIDs.reserveCapacity(batch.reduce(0) { $0 + $1.count })
        do {
            try database.transaction {
                for records in batch {
                    // Through the buffer, so that no record is copied (and retained) on this hot path.
                    try records.withUnsafeBufferPointer { records in
                        for index in records.indices {
                            rowIDs.append(try insert(records.baseAddress! + index))
                        }
                    }
                }
            }
        } catch {
            for (record, rowID) in zip(batch.joined(), rowIDs) where rowID != nil {
                if let seq = record.seq { stored.remove(device: record.device, seq: seq) }
            }
            throw error
        }
        return rowIDs
    }

    private func insert(_ record: UnsafePointer<JournalRecord>) throws -> Int64? {
        if let seq = record.pointee.seq, !stored.insert(device: record.pointee.device, seq: seq) { return nil }
        switch record.pointee.content {
        case .event(let event): return try insert(event, of: record)
        case .media(let media): return try insert(media, of: record)
        }
    }

    private func insert(_ event: WireEvent, of record: UnsafePointer<JournalRecord>) throws -> Int64? {
        for blob in event.blobs {
            insertBlob.bind(1, blob.sha256)
            insertBlob.bind(2, Int64(blob.bytes.count))
            try blob.bytes.withUnsafeBytes { bytes in
                insertBlob.bindBlob(3, bytes)
                try insertBlob.run()
            }
        }
        let timestamp = event.timestamp
        insertEvent.bind(1, record.pointee.device)
        insertEvent.bind(2, event.seq)
        insertEvent.bind(3, event.eventClass)
        insertEvent.bind(4, timestamp ?? record.pointee.received)
        insertEvent.bind(5, Int64(timestamp == nil ? 1 : 0))
        insertEvent.bind(6, record.pointee.received)
        try event.payload.withUnsafeBytes { payload in
            insertEvent.bindText(7, utf8: payload)
            try insertEvent.run()
        }
        return database.lastInsertRowID
    }

    /// A chunk whose (device, stream, part) is already stored (a resend without seq) is stored once: nil.
    private func insert(_ media: WireMedia, of record: UnsafePointer<JournalRecord>) throws -> Int64? {
        insertMedia.bind(1, record.pointee.device)
        insertMedia.bind(2, media.seq)
        insertMedia.bind(3, media.stream)
        insertMedia.bind(4, media.kind.rawValue)
        insertMedia.bind(5, media.format.rawValue)
        insertMedia.bind(6, media.part)
        insertMedia.bind(7, media.start)
        insertMedia.bind(8, media.duration)
        insertMedia.bind(9, record.pointee.received)
        try media.bytes.withUnsafeBytes { bytes in
            insertMedia.bindBlob(10, bytes)
            try insertMedia.run()
        }
        return database.changes > 0 ? database.lastInsertRowID : nil
    }

    /// The device's previous session stored its seqs up to `seq` and stopped while the device was away: what
    /// the device resends of them here is a duplicate, acknowledged and not stored (docs/SESSION-CORE.md, "Drops").
    package func setResendFloor(_ seq: Int64, of device: String) {
        stored.setFloor(seq, of: device)
    }

    /// The highest seq stored of `device`, its resend floor included; nil when none (or the file is `indexed`).
    package func highestSeq(of device: String) -> Int64? {
        stored.highest(of: device)
    }

    /// Writes the session's own row, so that the file describes itself when copied away.
    public func writeMetadata(_ session: SessionRecord) throws {
        let statement = try database.prepare("""
            INSERT INTO session (\(SessionRow.columns))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET
                name = excluded.name, test_user = excluded.test_user, notes = excluded.notes,
                sensors = excluded.sensors, bound_device = excluded.bound_device, device = excluded.device,
                state = excluded.state, started = excluded.started, stopped = excluded.stopped,
                filtered = excluded.filtered, duplicates = excluded.duplicates
            """)
        statement.bind(SessionRow.values(session))
        try statement.run()
    }

    /// The session's study, iteration, participant and tasks (one row, JSON), so that a copied file
    /// is analysed as part of its study without the catalog.
    public func writeStudyContext(_ context: StudyContext) throws {
        try database.transaction {
            try database.execute("DELETE FROM study")
            let statement = try database.prepare("INSERT INTO study (context) VALUES (?)")
            statement.bind(1, try JSONColumn.text(context))
            try statement.run()
        }
    }

    /// The file this session was imported from (or one merged into it), so that a copied file says so.
    package func recordImport(_ source: SessionImportRecord) throws {
        let statement = try database.prepare("INSERT INTO imports (\(ImportRow.columns)) VALUES (\(ImportRow.placeholders))")
        statement.bind(ImportRow.values(source))
        try statement.run()
    }

    public func writeDevice(_ device: DeviceRecord) throws {
        let statement = try database.prepare(DeviceRow.upsert)
        statement.bind(DeviceRow.values(device))
        try statement.run()
    }

    /// A `data` value's bytes under their SHA-256, as an import brings them (kept once).
    package func storeBlob(sha256: String, bytes: [UInt8]) throws {
        insertBlob.bind(1, sha256)
        insertBlob.bind(2, Int64(bytes.count))
        try bytes.withUnsafeBytes { bytes in
            insertBlob.bindBlob(3, bytes)
            try insertBlob.run()
        }
    }

    /// Events stored under `placeholder` get `device` (an import that learns the device at the end).
    package func renameDevice(_ placeholder: String, to device: String) throws {
        let statement = try database.prepare("UPDATE events SET device = ? WHERE device = ?")
        statement.bind([.text(device), .text(placeholder)])
        try statement.run()
    }

    /// A gap as an import brings it, already closed or not.
    package func addGap(_ gap: SessionGap) throws {
        let statement = try database.prepare("INSERT INTO gaps (start, \"end\", reason) VALUES (?, ?, ?)")
        statement.bind([.real(gap.start), gap.end.map { .real($0) } ?? .null, .text(gap.reason)])
        try statement.run()
    }

    /// Numbers the events again in time order (ties in their old order): after `import --into` merged a
    /// track into a session, the analysis reads them in the order they happened.
    package func renumberEventsByTime() throws {
        try database.transaction {
            try database.execute("""
                CREATE TEMP TABLE ordered AS
                    SELECT device, seq, class, timestamp, timestamp_estimated, received, payload FROM events ORDER BY timestamp, id;
                DELETE FROM events;
                INSERT INTO events (device, seq, class, timestamp, timestamp_estimated, received, payload)
                    SELECT device, seq, class, timestamp, timestamp_estimated, received, payload FROM ordered ORDER BY rowid;
                DROP TABLE ordered;
                """)
        }
    }

    public func openGap(at start: Double, reason: String) throws {
        let statement = try database.prepare("INSERT INTO gaps (start, \"end\", reason) VALUES (?, NULL, ?)")
        statement.bind(1, start)
        statement.bind(2, reason)
        try statement.run()
    }

    public func closeGaps(at end: Double) throws {
        let statement = try database.prepare("UPDATE gaps SET \"end\" = ? WHERE \"end\" IS NULL")
        statement.bind(1, end)
        try statement.run()
    }

    /// Builds the indexes of `events` (when asked) and folds the WAL into the main file, so that
    /// the file alone is complete when copied.
    package func finish(buildingIndexes: Bool) throws {
        if buildingIndexes { try database.execute(SessionFileSchema.createIndexes) }
        try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}

/// How hard a commit waits for the disk.
public enum JournalSynchronous: String, Sendable, CaseIterable {
    /// fsync the WAL at every group commit: survives power loss (the default).
    case full
    /// fsync only at checkpoints: survives a crash of muevald, not of the machine.
    case normal

    var pragmaValue: String { rawValue.uppercased() }
}
