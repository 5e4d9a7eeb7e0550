internal import JournalStorage

/// testers.sqlite's tables. Kept apart from the catalog and the recordings, so that a tester's profile
/// is deleted by deleting rows of one small file, and a copy of the recordings carries no profiles.
enum PoolSchema {
    static let version = 2

    static func create(_ database: SQLiteDatabase) throws {
        let statement = try database.prepare("PRAGMA user_version")
        _ = try statement.step()
        let found = statement.int64(0)
        statement.reset()
        guard found <= version else { throw PoolStoreError.newerPool(path: database.path, version: found) }
        guard found < version else { return }
        try database.transaction {
            if found < 1 {
                try database.execute("""
                    CREATE TABLE consents (
                        version INTEGER PRIMARY KEY,
                        text TEXT NOT NULL,
                        created REAL NOT NULL
                    );
                    CREATE TABLE settings (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        fields TEXT NOT NULL,
                        enrolment_key TEXT NOT NULL,
                        updated REAL NOT NULL
                    );
                    CREATE TABLE testers (
                        code TEXT PRIMARY KEY,
                        profile TEXT NOT NULL,
                        consent_version INTEGER NOT NULL,
                        enrolled REAL NOT NULL,
                        secret_sha256 TEXT NOT NULL
                    );
                    """)
            }
            // Version 2 (issue 38): a withdrawal is recorded before it is carried out, and its row stays once
            // it finished: its code is never drawn again, and the tester's retry hears that it is done.
            // (A PRAGMA takes no bound parameter; `version` is this type's constant, not a value from outside.)
            try database.execute("""
                CREATE TABLE withdrawals (
                    code TEXT PRIMARY KEY,
                    secret_sha256 TEXT NOT NULL,
                    delete_recordings INTEGER NOT NULL,
                    requested REAL NOT NULL,
                    finished REAL
                );
                PRAGMA user_version = \(version);
                """)
        }
    }
}

/// Why testers.sqlite cannot be used, worded for whoever runs muevald.
public enum PoolStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    case newerPool(path: String, version: Int64)

    public var description: String {
        switch self {
        case .newerPool(let path, let version):
            "\(path) has schema version \(version), written by a newer muEval; this muevald knows version \(PoolSchema.version) and leaves it untouched"
        }
    }
}
