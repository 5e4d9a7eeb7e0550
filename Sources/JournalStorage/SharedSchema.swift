/// What the catalog and a session file both have (docs/STORAGE.md): the columns of a session's row
/// (the catalog's `sessions`, a file's `session`), the `devices` table, and the columns of an import.
/// Defined once so that the two cannot drift apart. The text is what both wrote before (`sqlite_master`
/// keeps each statement verbatim) and what the catalog's migrations made: a change is a new migration
/// of both.
enum SharedSchema {
    /// The columns both session tables begin with, one a line, indented as inside a CREATE TABLE.
    static let sessionColumns = """
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
            duplicates INTEGER NOT NULL DEFAULT 0
        """

    static let devices = """
        CREATE TABLE IF NOT EXISTS devices (
            device TEXT PRIMARY KEY,
            name TEXT, model TEXT, system_version TEXT, app_id TEXT, app_version TEXT,
            screen_width REAL, screen_height REAL, screen_scale REAL,
            address TEXT,
            first_seen REAL NOT NULL,
            last_seen REAL NOT NULL
        );
        """

    /// The columns of an imported file (the catalog's `session_imports` after its `session`, a file's `imports`).
    static let importColumns = """
            file TEXT NOT NULL,
            format TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            imported REAL NOT NULL,
            events INTEGER NOT NULL,
            cut_short TEXT
        """
}
