public import SessionModel
internal import Foundation
internal import NIOConcurrencyHelpers

/// The data directory's index: every session and every device ever seen (docs/STORAGE.md).
///
/// Session files stay the source of truth for events; the catalog lets the daemon list sessions
/// without opening every file. All access is serialised by a lock; calls are short.
public final class Catalog: @unchecked Sendable {
    public let directory: String
    private let database: SQLiteDatabase
    private let lock = NIOLock()

    public static let fileName = "catalog.sqlite"
    public static let sessionsFolder = "sessions"

    /// Opens the catalog of `directory`, creating the directory (mode 0700) and the catalog if needed.
    public init(directory: String) throws {
        self.directory = directory
        try DataDirectory.prepare(directory)
        try DataDirectory.prepare(directory + "/" + Self.sessionsFolder)
        database = try SQLiteDatabase(path: directory + "/" + Self.fileName)
        try database.execute("""
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = FULL;
            CREATE TABLE IF NOT EXISTS sessions (
                id INTEGER PRIMARY KEY,
                uuid TEXT NOT NULL,
                name TEXT NOT NULL,
                test_user TEXT,
                notes TEXT,
                sensors TEXT NOT NULL DEFAULT '[]',
                bound_device TEXT,
                device TEXT,
                state TEXT NOT NULL,
                created REAL NOT NULL,
                started REAL,
                stopped REAL,
                filtered INTEGER NOT NULL DEFAULT 0,
                duplicates INTEGER NOT NULL DEFAULT 0,
                path TEXT NOT NULL,
                events INTEGER NOT NULL DEFAULT 0
            );
            CREATE TABLE IF NOT EXISTS devices (
                device TEXT PRIMARY KEY,
                name TEXT, model TEXT, system_version TEXT, app_id TEXT, app_version TEXT,
                screen_width REAL, screen_height REAL, screen_scale REAL,
                address TEXT,
                first_seen REAL NOT NULL,
                last_seen REAL NOT NULL
            );
            """)
        try DataDirectory.restrict(directory + "/" + Self.fileName)
        try addPairingCodeColumn()
    }

    /// Catalogs written before pairing codes existed get the column.
    private func addPairingCodeColumn() throws {
        let columns = try database.prepare("SELECT name FROM pragma_table_info('sessions')")
        var names: [String] = []
        try columns.forEachRow { names.append($0.string(0) ?? "") }
        if !names.contains("pairing_code") { try database.execute("ALTER TABLE sessions ADD COLUMN pairing_code TEXT") }
    }

    /// Creates a new session in state `waiting` and reserves its file path.
    public func createSession(name: String?, testUser: String?, notes: String?, sensors: [String],
                              boundDevice: String?, pairingCode: String? = nil, now: Double) throws -> SessionRecord {
        try lock.withLock {
            try database.transaction {
                let next = try database.prepare("SELECT COALESCE(MAX(id), 0) + 1 FROM sessions")
                _ = try next.step()
                let id = next.int64(0)
                next.reset()
                let path = "\(directory)/\(Self.sessionsFolder)/session-\(id).sqlite"
                let record = SessionRecord(
                    id: id, uuid: UUID().uuidString.lowercased(), name: name ?? "session-\(id)",
                    testUser: testUser, notes: notes, sensors: sensors, boundDevice: boundDevice,
                    state: .waiting, created: now, path: path, pairingCode: pairingCode)
                try upsert(record)
                return record
            }
        }
    }

    /// Writes every field of `session` (counts included).
    public func update(_ session: SessionRecord) throws {
        try lock.withLock { try upsert(session) }
    }

    private func upsert(_ session: SessionRecord) throws {
        let statement = try database.prepare("""
            INSERT OR REPLACE INTO sessions (\(SessionRow.columns), path, events, pairing_code)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        statement.bind(SessionRow.values(session) + [.text(session.path), .integer(session.events),
                                                      session.pairingCode.map { .text($0) } ?? .null])
        try statement.run()
    }

    public func sessions() throws -> [SessionRecord] {
        try lock.withLock {
            let statement = try database.prepare("SELECT \(SessionRow.columns), path, events, pairing_code FROM sessions ORDER BY id")
            var result: [SessionRecord] = []
            try statement.forEachRow { row in
                var record = SessionRow.read(row, path: row.string(14) ?? "", events: row.int64(15))
                record.pairingCode = row.string(16)
                result.append(record)
            }
            return result
        }
    }

    public func session(id: Int64) throws -> SessionRecord? {
        try sessions().first { $0.id == id }
    }

    /// Removes the session from the catalog and deletes its file (with WAL and shared-memory files).
    public func deleteSession(_ session: SessionRecord) throws {
        try lock.withLock {
            let statement = try database.prepare("DELETE FROM sessions WHERE id = ?")
            statement.bind(1, session.id)
            try statement.run()
        }
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: session.path + suffix)
        }
    }

    public func recordDevice(_ device: DeviceRecord) throws {
        try lock.withLock {
            let statement = try database.prepare(DeviceRow.upsert)
            statement.bind(DeviceRow.values(device))
            try statement.run()
        }
    }

    public func devices() throws -> [DeviceRecord] {
        try lock.withLock {
            let statement = try database.prepare("SELECT \(DeviceRow.columns) FROM devices ORDER BY last_seen DESC")
            var result: [DeviceRecord] = []
            try statement.forEachRow { result.append(DeviceRow.read($0)) }
            return result
        }
    }
}

/// Permissions of what muevald writes: recordings are private to the daemon's user (thesis 2.5.4).
enum DataDirectory {
    static func prepare(_ path: String) throws {
        let manager = FileManager.default
        if !manager.fileExists(atPath: path) {
            try manager.createDirectory(atPath: path, withIntermediateDirectories: true,
                                        attributes: [.posixPermissions: 0o700])
        }
        try manager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
    }

    static func restrict(_ file: String) throws {
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
    }
}
