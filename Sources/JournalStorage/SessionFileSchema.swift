/// The schema of a session file, a portable SQLite document (docs/STORAGE.md).
enum SessionFileSchema {
    /// `PRAGMA application_id`: "muEv", so that `file(1)` and tools can tell a session file apart.
    static let applicationID: Int32 = 0x6D75_4576
    static let version = 1

    static let tables = """
        CREATE TABLE IF NOT EXISTS session (
        \(SharedSchema.sessionColumns)
        );
        \(SharedSchema.devices)
        CREATE TABLE IF NOT EXISTS events (
            id INTEGER PRIMARY KEY,
            device TEXT NOT NULL,
            seq INTEGER,
            class TEXT NOT NULL,
            timestamp REAL NOT NULL,
            timestamp_estimated INTEGER NOT NULL DEFAULT 0,
            received REAL NOT NULL,
            payload TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS blobs (
            sha256 TEXT PRIMARY KEY,
            size INTEGER NOT NULL,
            bytes BLOB NOT NULL
        );
        CREATE TABLE IF NOT EXISTS gaps (
            start REAL NOT NULL,
            "end" REAL,
            reason TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS study (
            context TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS media (
            id INTEGER PRIMARY KEY,
            device TEXT NOT NULL,
            seq INTEGER,
            stream TEXT NOT NULL,
            kind TEXT NOT NULL,
            content_type TEXT NOT NULL,
            part INTEGER NOT NULL,
            start REAL NOT NULL,
            duration REAL,
            received REAL NOT NULL,
            bytes BLOB NOT NULL,
            UNIQUE (device, stream, part)
        );
        CREATE TABLE IF NOT EXISTS transcripts (
            id INTEGER PRIMARY KEY,
            device TEXT NOT NULL,
            stream TEXT NOT NULL,
            start REAL NOT NULL,
            "end" REAL NOT NULL,
            text TEXT NOT NULL,
            confidence REAL,
            exclamation TEXT
        );
        CREATE INDEX IF NOT EXISTS transcripts_start ON transcripts(start);
        CREATE TABLE IF NOT EXISTS transcription (
            device TEXT NOT NULL,
            stream TEXT NOT NULL,
            state TEXT NOT NULL,
            progress REAL NOT NULL DEFAULT 0,
            engine TEXT,
            error TEXT,
            updated REAL NOT NULL,
            PRIMARY KEY (device, stream)
        );
        CREATE TABLE IF NOT EXISTS imports (
        \(SharedSchema.importColumns)
        );
        """

    /// The indexes of `events`, by name. A writer drops them while the session is open and builds
    /// them when the session stops: one bulk build per index instead of one b-tree insert per
    /// event and index, which held ingest to half its speed (docs/STORAGE.md, docs/BENCHMARKS.md).
    static let eventIndexes: [(name: String, columns: String, unique: Bool)] = [
        ("events_class", "class", false),
        ("events_timestamp", "timestamp", false),
        ("events_received", "received", false),
        ("events_device_seq", "device, seq", true),
    ]

    static var createIndexes: String {
        eventIndexes.map { index in
            "CREATE \(index.unique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(index.name) ON events(\(index.columns));"
        }.joined(separator: "\n")
    }

    static var dropIndexes: String {
        eventIndexes.map { "DROP INDEX IF EXISTS \($0.name);" }.joined(separator: "\n")
    }
}
