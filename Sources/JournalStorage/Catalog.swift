public import SessionModel
internal import Foundation
internal import NIOConcurrencyHelpers

/// The data directory's index: every session and every device ever seen (docs/STORAGE.md).
///
/// Session files stay the source of truth for events; the catalog lets the daemon list sessions
/// without opening every file. All access is serialised by a lock; calls are short.
public final class Catalog: @unchecked Sendable {
    public let directory: String
    let database: SQLiteDatabase
    let lock = NIOLock()

    public static let fileName = "catalog.sqlite"
    public static let sessionsFolder = "sessions"

    /// Opens the catalog of `directory`, creating the directory (mode 0700) and the catalog if needed,
    /// and migrating a catalog of an earlier release in place (`CatalogSchema`). `migrated` lists the
    /// migrations this open applied, for the log.
    public init(directory: String) throws {
        self.directory = directory
        try DataDirectory.prepare(directory)
        try DataDirectory.prepare(directory + "/" + Self.sessionsFolder)
        database = try SQLiteDatabase(path: directory + "/" + Self.fileName)
        try database.execute("""
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = FULL;
            """)
        try DataDirectory.restrict(directory + "/" + Self.fileName)
        migrated = try CatalogSchema.migrate(database, backupDirectory: directory).map { "version \($0.version): \($0.summary)" }
        try relocateSessionFiles()
    }

    /// The migrations opening the catalog applied ("version 2: studies, …"); empty when it was current.
    public let migrated: [String]

    /// A data directory copied, moved or restored elsewhere keeps its sessions: paths that point into
    /// another directory's `sessions` folder are pointed at this one's when the file is here, so that
    /// a copy never writes into the files of the directory it was copied from.
    private func relocateSessionFiles() throws {
        let folder = directory + "/" + Self.sessionsFolder
        let rows = try database.prepare("SELECT id, path FROM sessions")
        var moved: [(Int64, String)] = []
        try rows.forEachRow { row in
            guard let path = row.string(1) else { return }
            let here = folder + "/" + (path as NSString).lastPathComponent
            if here != path, FileManager.default.fileExists(atPath: here) { moved.append((row.int64(0), here)) }
        }
        guard !moved.isEmpty else { return }
        try database.transaction {
            let update = try database.prepare("UPDATE sessions SET path = ? WHERE id = ?")
            for (id, path) in moved {
                update.bind(1, path)
                update.bind(2, id)
                try update.run()
            }
        }
    }

    /// Creates a new session in state `waiting` and reserves its file path.
    /// With `study`, the session records that study's iteration and participant, checked to exist.
    public func createSession(name: String?, testUser: String?, notes: String?, sensors: [String],
                              boundDevice: String?, pairingCode: String? = nil, study: StudyAssignment? = nil,
                              now: Double) throws -> SessionRecord {
        try lock.withLock {
            try database.transaction {
                if let study { _ = try context(of: study) }
                let next = try database.prepare("SELECT COALESCE(MAX(id), 0) + 1 FROM sessions")
                _ = try next.step()
                let id = next.int64(0)
                next.reset()
                let path = "\(directory)/\(Self.sessionsFolder)/session-\(id).sqlite"
                let record = SessionRecord(
                    id: id, uuid: UUID().uuidString.lowercased(), name: name ?? "session-\(id)",
                    testUser: testUser, notes: notes, sensors: sensors, boundDevice: boundDevice,
                    state: .waiting, created: now, path: path, pairingCode: pairingCode, assignment: study)
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
            INSERT OR REPLACE INTO sessions (\(SessionRow.columns), \(Self.catalogColumns))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        statement.bind(SessionRow.values(session) + [
            .text(session.path), .integer(session.events), session.pairingCode.map { .text($0) } ?? .null,
            session.study.map { .text($0) } ?? .null, session.iteration.map { .integer(Int64($0)) } ?? .null,
            session.participant.map { .text($0) } ?? .null,
        ])
        try statement.run()
    }

    /// The columns only the catalog's `sessions` table has, after `SessionRow.columns`.
    private static let catalogColumns = "path, events, pairing_code, study, iteration, participant"

    public func sessions() throws -> [SessionRecord] {
        try lock.withLock { try sessions(where: "") }
    }

    /// Sessions matching `condition` (an SQL `WHERE …` over the catalog's columns), in id order; under the lock.
    func sessions(where condition: String, _ values: [SQLiteValue] = []) throws -> [SessionRecord] {
        let statement = try database.prepare("SELECT \(SessionRow.columns), \(Self.catalogColumns) FROM sessions \(condition) ORDER BY id")
        statement.bind(values)
        var result: [SessionRecord] = []
        try statement.forEachRow { row in
            var record = SessionRow.read(row, path: row.string(14) ?? "", events: row.int64(15))
            record.pairingCode = row.string(16)
            record.study = row.string(17)
            record.iteration = row.isNull(18) ? nil : Int(row.int64(18))
            record.participant = row.string(19)
            result.append(record)
        }
        guard !result.isEmpty else { return result }
        // Few sessions are imported: one query for all of them, rather than one per session.
        var imports: [Int64: [SessionImportRecord]] = [:]
        let sources = try database.prepare("SELECT session, \(ImportRow.columns) FROM session_imports ORDER BY rowid")
        try sources.forEachRow { row in imports[row.int64(0), default: []].append(ImportRow.read(row, from: 1)) }
        if !imports.isEmpty {
            for index in result.indices { result[index].imports = imports[result[index].id] }
        }
        return result
    }

    /// The session a file with this content was imported into, if any.
    public func session(importedFrom sha256: String) throws -> SessionRecord? {
        try lock.withLock {
            try sessions(where: "WHERE id IN (SELECT session FROM session_imports WHERE sha256 = ?)", [.text(sha256)]).first
        }
    }

    /// Adds an imported session: in one catalog transaction, takes the next id, lets `place` put the
    /// finished file at the session's path (it writes the session's own row into the file and renames
    /// it there), and records the session with its source. If `place` throws, the catalog is as before.
    public func addImportedSession(_ draft: SessionRecord, source: SessionImportRecord,
                                   place: (SessionRecord) throws -> Void) throws -> SessionRecord {
        try lock.withLock {
            try database.transaction {
                if let assignment = draft.assignment { _ = try context(of: assignment) }
                let next = try database.prepare("SELECT COALESCE(MAX(id), 0) + 1 FROM sessions")
                _ = try next.step()
                let id = next.int64(0)
                next.reset()
                var record = draft
                record.id = id
                record.path = "\(directory)/\(Self.sessionsFolder)/session-\(id).sqlite"
                record.imports = [source]
                try upsert(record)
                try insertImport(source, session: id)
                try place(record)
                return record
            }
        }
    }

    /// Records one more file merged into an existing session (`import --into`), with its new counts;
    /// `place` replaces the session's file, inside the same catalog transaction.
    public func addImport(_ source: SessionImportRecord, to session: SessionRecord, place: () throws -> Void) throws -> SessionRecord {
        try lock.withLock {
            try database.transaction {
                var record = session
                record.imports = (session.imports ?? []) + [source]
                try upsert(record)
                try insertImport(source, session: session.id)
                try place()
                return record
            }
        }
    }

    private func insertImport(_ source: SessionImportRecord, session: Int64) throws {
        let statement = try database.prepare(
            "INSERT INTO session_imports (session, \(ImportRow.columns)) VALUES (?, \(ImportRow.placeholders))")
        statement.bind([.integer(session)] + ImportRow.values(source))
        try statement.run()
    }

    public func session(id: Int64) throws -> SessionRecord? {
        try sessions().first { $0.id == id }
    }

    /// Removes the session from the catalog and deletes its file (with WAL and shared-memory files).
    public func deleteSession(_ session: SessionRecord) throws {
        try lock.withLock {
            try database.transaction {
                for table in ["session_imports WHERE session", "sessions WHERE id"] {
                    let statement = try database.prepare("DELETE FROM \(table) = ?")
                    statement.bind(1, session.id)
                    try statement.run()
                }
            }
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
public enum DataDirectory {
    public static func prepare(_ path: String) throws {
        let manager = FileManager.default
        if !manager.fileExists(atPath: path) {
            try manager.createDirectory(atPath: path, withIntermediateDirectories: true,
                                        attributes: [.posixPermissions: 0o700])
        }
        try manager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
    }

    public static func restrict(_ file: String) throws {
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
    }
}
