package import Logging
package import PostgresNIO

/// The shared database's schema (docs/POSTGRES.md), grown by numbered migrations like the catalog's.
/// `mueval_schema` holds the version; each migration runs in one transaction under an advisory lock,
/// so that several labs' muevald starting at once migrate it once.
package enum PostgresSchema {
    static let migrations: [(version: Int, sql: [String])] = [
        (1, [
            """
            CREATE TABLE IF NOT EXISTS mueval_schema (version integer NOT NULL)
            """,
            """
            CREATE TABLE sessions (
                uuid uuid PRIMARY KEY,
                lab text NOT NULL,
                local_id bigint NOT NULL,
                name text NOT NULL,
                test_user text,
                notes text,
                sensors jsonb NOT NULL,
                device text,
                state text NOT NULL,
                created double precision NOT NULL,
                started double precision,
                stopped double precision,
                events bigint NOT NULL,
                filtered bigint NOT NULL DEFAULT 0,
                duplicates bigint NOT NULL DEFAULT 0,
                bound_device text,
                study text,
                iteration integer,
                participant text,
                study_context jsonb,
                imports jsonb NOT NULL DEFAULT '[]',
                transcription jsonb NOT NULL DEFAULT '[]',
                updated timestamptz NOT NULL DEFAULT now()
            )
            """,
            "CREATE INDEX sessions_lab ON sessions (lab)",
            "CREATE INDEX sessions_study ON sessions (study, iteration, participant)",
            """
            CREATE TABLE devices (
                session uuid NOT NULL REFERENCES sessions (uuid),
                device text NOT NULL,
                name text, model text, system_version text, app_id text, app_version text,
                screen_width double precision, screen_height double precision, screen_scale double precision,
                first_seen double precision NOT NULL,
                last_seen double precision NOT NULL,
                PRIMARY KEY (session, device)
            )
            """,
            """
            CREATE TABLE events (
                session uuid NOT NULL REFERENCES sessions (uuid),
                id bigint NOT NULL,
                device text NOT NULL,
                seq bigint,
                class text NOT NULL,
                "timestamp" double precision NOT NULL,
                timestamp_estimated boolean NOT NULL,
                received double precision NOT NULL,
                payload jsonb NOT NULL,
                document text NOT NULL,
                replicated timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (session, id)
            )
            """,
            "CREATE INDEX events_class ON events (class, session)",
            """
            CREATE TABLE gaps (
                session uuid NOT NULL REFERENCES sessions (uuid),
                start double precision NOT NULL,
                "end" double precision,
                reason text NOT NULL
            )
            """,
            "CREATE INDEX gaps_session ON gaps (session)",
            """
            CREATE TABLE transcripts (
                session uuid NOT NULL REFERENCES sessions (uuid),
                device text NOT NULL,
                stream text NOT NULL,
                start double precision NOT NULL,
                "end" double precision NOT NULL,
                text text NOT NULL,
                confidence double precision,
                exclamation text
            )
            """,
            "CREATE INDEX transcripts_session ON transcripts (session, start)",
            "CREATE INDEX transcripts_exclamation ON transcripts (exclamation) WHERE exclamation IS NOT NULL",
            """
            CREATE TABLE media (
                session uuid NOT NULL REFERENCES sessions (uuid),
                id bigint NOT NULL,
                device text NOT NULL,
                seq bigint,
                stream text NOT NULL,
                kind text NOT NULL,
                content_type text NOT NULL,
                part bigint NOT NULL,
                start double precision NOT NULL,
                duration double precision,
                received double precision NOT NULL,
                bytes bytea NOT NULL,
                PRIMARY KEY (session, id)
            )
            """,
            """
            CREATE TABLE blobs (
                sha256 text PRIMARY KEY,
                size bigint NOT NULL,
                bytes bytea NOT NULL
            )
            """,
            """
            CREATE TABLE studies (
                lab text NOT NULL,
                name text NOT NULL,
                study jsonb NOT NULL,
                responses jsonb NOT NULL,
                updated timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (lab, name)
            )
            """,
            """
            CREATE TABLE replication (
                session uuid PRIMARY KEY REFERENCES sessions (uuid),
                lab text NOT NULL,
                last_event bigint NOT NULL,
                last_media bigint NOT NULL DEFAULT 0,
                generation integer NOT NULL DEFAULT 0,
                updated timestamptz NOT NULL DEFAULT now()
            )
            """,
        ]),
    ]

    package static var current: Int { migrations.last!.version }

    /// Brings the database to `current`; refuses one a newer muEval wrote.
    package static func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.withTransaction(logger: logger) { connection in
            // One lab at a time, whatever the others do (the key is "muEval" in ASCII).
            try await connection.query("SELECT pg_advisory_xact_lock(1836411245)", logger: logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS mueval_schema (version integer NOT NULL)", logger: logger)
            var found = 0
            for try await version in try await connection.query("SELECT COALESCE(MAX(version), 0) FROM mueval_schema", logger: logger)
                .decode(Int.self) { found = version }
            guard found <= current else { throw ReplicationError.newerSchema(found: found, known: current) }
            for migration in migrations where migration.version > found {
                for statement in migration.sql.dropFirst(migration.version == 1 ? 1 : 0) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("DELETE FROM mueval_schema", logger: logger)
                try await connection.query("INSERT INTO mueval_schema (version) VALUES (\(migration.version))", logger: logger)
                logger.notice("postgres: schema migrated to version \(migration.version)")
            }
        }
    }
}
