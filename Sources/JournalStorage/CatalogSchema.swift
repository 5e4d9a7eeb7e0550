internal import Foundation
internal import SessionModel

/// The catalog's schema, grown by numbered migrations (docs/STORAGE.md). `PRAGMA user_version`
/// holds the number of the last one applied; each runs in one transaction with its version bump,
/// so a catalog is either fully at one version or fully at the next, never in between.
enum CatalogSchema {
    struct Migration: Sendable {
        let version: Int
        let summary: String
        let apply: @Sendable (SQLiteDatabase) throws -> Void
    }

    static let migrations: [Migration] = [
        Migration(version: 1, summary: "sessions and devices (muEval 0.1.0)", apply: baseline),
        Migration(version: 2, summary: "studies, questionnaires, sessions' study assignment", apply: studies),
        Migration(version: 3, summary: "imported sessions' source files", apply: imports),
        Migration(version: 4, summary: "studies' recruitment and invitations", apply: recruitment),
        Migration(version: 5, summary: "studies' web apps", apply: webApps),
    ]

    /// The version this build writes.
    static var current: Int { migrations.last!.version }

    /// Brings the catalog to `current`. Refuses one written by a newer muEval, before touching it;
    /// copies an existing catalog aside before its first migration (`catalog.sqlite.vN.bak`).
    static func migrate(_ database: SQLiteDatabase, backupDirectory: String) throws -> [Migration] {
        let found = try userVersion(database)
        guard found <= current else {
            throw CatalogError.newerCatalog(path: database.path, version: found, supported: current)
        }
        let pending = migrations.filter { $0.version > found }
        guard !pending.isEmpty else { return [] }
        if try hasTable(database, "sessions") {
            let backup = "\(backupDirectory)/\(Catalog.fileName).v\(found).bak"
            try? FileManager.default.removeItem(atPath: backup)
            try database.execute("VACUUM INTO '\(backup.replacingOccurrences(of: "'", with: "''"))'")
            try DataDirectory.restrict(backup)
        }
        for migration in pending {
            try database.transaction {
                try migration.apply(database)
                try database.execute("PRAGMA user_version = \(migration.version)")
            }
        }
        return pending
    }

    static func userVersion(_ database: SQLiteDatabase) throws -> Int {
        let statement = try database.prepare("PRAGMA user_version")
        defer { statement.reset() }
        _ = try statement.step()
        return Int(statement.int64(0))
    }

    private static func hasTable(_ database: SQLiteDatabase, _ name: String) throws -> Bool {
        let statement = try database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        defer { statement.reset() }
        statement.bind(1, name)
        return try statement.step()
    }

    private static func columns(_ database: SQLiteDatabase, of table: String) throws -> [String] {
        let statement = try database.prepare("SELECT name FROM pragma_table_info('\(table)')")
        var names: [String] = []
        try statement.forEachRow { names.append($0.string(0) ?? "") }
        return names
    }

    /// What muEval 0.1.0 made, which set no user_version: idempotent, so that such a catalog (with or
    /// without the pairing code column added during 0.1.0's life) and an empty file both end up alike.
    private static func baseline(_ database: SQLiteDatabase) throws {
        try database.execute("""
            CREATE TABLE IF NOT EXISTS sessions (
            \(SharedSchema.sessionColumns),
                path TEXT NOT NULL,
                events INTEGER NOT NULL DEFAULT 0
            );
            \(SharedSchema.devices)
            """)
        if try !columns(database, of: "sessions").contains("pairing_code") {
            try database.execute("ALTER TABLE sessions ADD COLUMN pairing_code TEXT")
        }
    }

    private static func studies(_ database: SQLiteDatabase) throws {
        try database.execute("""
            CREATE TABLE studies (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL UNIQUE,
                app_id TEXT,
                description TEXT,
                created REAL NOT NULL
            );
            CREATE TABLE study_iterations (
                study INTEGER NOT NULL REFERENCES studies(id),
                number INTEGER NOT NULL,
                label TEXT,
                created REAL NOT NULL,
                PRIMARY KEY (study, number)
            );
            CREATE TABLE study_tasks (
                study INTEGER NOT NULL REFERENCES studies(id),
                position INTEGER NOT NULL,
                name TEXT NOT NULL,
                instructions TEXT,
                time_limit REAL,
                success TEXT NOT NULL,
                expected_path TEXT NOT NULL DEFAULT '[]',
                PRIMARY KEY (study, name)
            );
            CREATE TABLE study_participants (
                study INTEGER NOT NULL REFERENCES studies(id),
                code TEXT NOT NULL,
                attributes TEXT NOT NULL DEFAULT '{}',
                created REAL NOT NULL,
                PRIMARY KEY (study, code)
            );
            CREATE TABLE study_questions (
                study INTEGER NOT NULL REFERENCES studies(id),
                position INTEGER NOT NULL,
                id TEXT NOT NULL,
                text TEXT NOT NULL,
                PRIMARY KEY (study, id)
            );
            CREATE TABLE sus_responses (
                study INTEGER NOT NULL REFERENCES studies(id),
                iteration INTEGER NOT NULL,
                participant TEXT NOT NULL,
                items TEXT NOT NULL,
                recorded REAL NOT NULL,
                PRIMARY KEY (study, iteration, participant)
            );
            CREATE TABLE seq_responses (
                study INTEGER NOT NULL REFERENCES studies(id),
                iteration INTEGER NOT NULL,
                participant TEXT NOT NULL,
                task TEXT NOT NULL,
                rating INTEGER NOT NULL,
                recorded REAL NOT NULL,
                PRIMARY KEY (study, iteration, participant, task)
            );
            CREATE TABLE question_answers (
                study INTEGER NOT NULL REFERENCES studies(id),
                iteration INTEGER NOT NULL,
                participant TEXT NOT NULL,
                question TEXT NOT NULL,
                answer TEXT NOT NULL,
                recorded REAL NOT NULL,
                PRIMARY KEY (study, iteration, participant, question)
            );
            ALTER TABLE sessions ADD COLUMN study TEXT;
            ALTER TABLE sessions ADD COLUMN iteration INTEGER;
            ALTER TABLE sessions ADD COLUMN participant TEXT;
            CREATE INDEX sessions_study ON sessions(study, iteration, participant);
            """)
    }
}

extension CatalogSchema {
    /// The files sessions were imported from, by content hash: so that the same file imported twice is noticed.
    fileprivate static func imports(_ database: SQLiteDatabase) throws {
        try database.execute("""
            CREATE TABLE session_imports (
                session INTEGER NOT NULL REFERENCES sessions(id),
            \(SharedSchema.importColumns)
            );
            CREATE INDEX session_imports_sha256 ON session_imports(sha256);
            CREATE INDEX session_imports_session ON session_imports(session);
            """)
    }

    /// A study's recruitment from the tester pool and the invitations it sent (issue 32).
    fileprivate static func recruitment(_ database: SQLiteDatabase) throws {
        try database.execute("""
            CREATE TABLE recruitment (
                study INTEGER PRIMARY KEY REFERENCES studies(id),
                iteration INTEGER NOT NULL,
                target INTEGER NOT NULL,
                deadline REAL,
                created REAL NOT NULL,
                seed INTEGER NOT NULL,
                completed REAL,
                completion_reason TEXT,
                report TEXT
            );
            CREATE TABLE invitations (
                code TEXT PRIMARY KEY,
                study INTEGER NOT NULL REFERENCES studies(id),
                iteration INTEGER NOT NULL,
                participant TEXT NOT NULL,
                status TEXT NOT NULL,
                created REAL NOT NULL,
                expires REAL NOT NULL,
                session INTEGER,
                device TEXT
            );
            CREATE INDEX invitations_study ON invitations(study, participant);
            CREATE INDEX invitations_participant ON invitations(participant);
            """)
    }
}

extension CatalogSchema {
    /// The web app a study's testers open from their invitation page (issue 40); earlier studies have none.
    fileprivate static func webApps(_ database: SQLiteDatabase) throws {
        try database.execute("ALTER TABLE studies ADD COLUMN web_app TEXT")
    }
}

/// Why the catalog, or a row of it, cannot be used, worded for whoever runs muevald.
public enum CatalogError: Error, Equatable, Sendable, CustomStringConvertible {
    case newerCatalog(path: String, version: Int, supported: Int)
    /// An invitation whose stored status is none this muevald knows: refused rather than taken for another.
    case unknownInvitationStatus(path: String, code: String, status: String)

    public var description: String {
        switch self {
        case .newerCatalog(let path, let version, let supported):
            "\(path) has schema version \(version), written by a newer muEval; this muevald knows versions up to \(supported) and leaves it untouched: run the newer muevald, or give this one another --data-dir"
        case .unknownInvitationStatus(let path, let code, let status):
            "\(path): invitation \"\(code)\" has the status \"\(status)\", which this muevald does not know (it knows "
                + InvitationStatus.allCases.map(\.rawValue).joined(separator: ", ")
                + "): a newer muEval wrote it, or the catalog was edited; run the newer muevald, or give the invitation one of these statuses"
        }
    }
}
