internal import Foundation
internal import JournalStorage
internal import Logging
internal import NIOCore
internal import PostgresNIO
internal import ReplicationArchive
internal import SessionModel

/// What one lab writes into the shared database (docs/POSTGRES.md), statement by statement: its
/// sessions' rows, studies, batches and positions. Each write that touches a session first makes
/// sure the row is this lab's; when to write is the replicator's business.
struct SharedDatabaseWriter: Sendable {
    /// This lab's name in the shared database.
    let lab: String
    let logger: Logger

    /// The positions PostgreSQL has of this lab's sessions, after a (re)connect: the truth, whatever
    /// this process remembered.
    func positions(_ connection: PostgresConnection) async throws -> [String: ReplicationPosition] {
        var positions: [String: ReplicationPosition] = [:]
        let rows = try await connection.query("""
            SELECT session::text, last_event, last_media, generation FROM replication WHERE lab = \(lab)
            """, logger: logger)
        for try await (session, event, media, generation) in rows.decode((String, Int64, Int64, Int).self) {
            positions[session] = ReplicationPosition(event: event, media: media, generation: generation)
        }
        return positions
    }

    /// The session's row, devices, gaps and transcript, in one transaction (gaps and transcript whole).
    /// The row is updated only while it is this lab's (`WHERE sessions.lab = excluded.lab`): when
    /// another lab has the uuid, nothing is written and `ownedByAnotherLab` says whose it is.
    func describe(_ details: SessionDetails, _ connection: PostgresConnection) async throws {
        let session = details.record
        let uuid = try Self.uuid(session.uuid)
        let encoder = JSONEncoder()
        let sensors = String(decoding: try encoder.encode(session.sensors), as: UTF8.self)
        let study = try details.study.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        let imports = String(decoding: try encoder.encode(details.imports), as: UTF8.self)
        let transcription = String(decoding: try encoder.encode(details.transcription), as: UTF8.self)
        let gaps = String(decoding: try encoder.encode(details.gaps), as: UTF8.self)
        let transcript = String(decoding: try encoder.encode(details.transcript), as: UTF8.self)
        try await connection.withTransaction(logger: logger) { connection in
            let stored = try await connection.query("""
                INSERT INTO sessions (uuid, lab, local_id, name, test_user, notes, sensors, device, state, created, started, stopped, events,
                                      filtered, duplicates, bound_device, study, iteration, participant, study_context, imports, transcription, updated)
                VALUES (\(uuid), \(lab), \(session.id), \(session.name), \(session.testUser), \(session.notes), \(sensors)::jsonb,
                        \(session.device), \(session.state.rawValue), \(session.created), \(session.started), \(session.stopped), \(session.events),
                        \(session.filtered), \(session.duplicates), \(session.boundDevice), \(session.study), \(session.iteration), \(session.participant),
                        \(study)::jsonb, \(imports)::jsonb, \(transcription)::jsonb, now())
                ON CONFLICT (uuid) DO UPDATE SET lab = excluded.lab, local_id = excluded.local_id, name = excluded.name,
                    test_user = excluded.test_user, notes = excluded.notes, sensors = excluded.sensors, device = excluded.device,
                    state = excluded.state, created = excluded.created, started = excluded.started, stopped = excluded.stopped,
                    events = excluded.events, filtered = excluded.filtered, duplicates = excluded.duplicates,
                    bound_device = excluded.bound_device, study = excluded.study, iteration = excluded.iteration,
                    participant = excluded.participant, study_context = excluded.study_context, imports = excluded.imports,
                    transcription = excluded.transcription, updated = now()
                WHERE sessions.lab = excluded.lab
                RETURNING 1
                """, logger: logger)
            var ours = false
            for try await _ in stored { ours = true }
            guard ours else { throw ReplicationError.ownedByAnotherLab(owner: try await Self.owner(of: uuid, connection, logger: logger)) }
            for device in details.devices {
                try await connection.query("""
                    INSERT INTO devices (session, device, name, model, system_version, app_id, app_version, screen_width, screen_height,
                                         screen_scale, first_seen, last_seen)
                    VALUES (\(uuid), \(device.id), \(device.name), \(device.model), \(device.systemVersion), \(device.appId), \(device.appVersion),
                            \(device.screenWidth), \(device.screenHeight), \(device.screenScale), \(device.firstSeen), \(device.lastSeen))
                    ON CONFLICT (session, device) DO UPDATE SET name = excluded.name, model = excluded.model,
                        system_version = excluded.system_version, app_id = excluded.app_id, app_version = excluded.app_version,
                        screen_width = excluded.screen_width, screen_height = excluded.screen_height, screen_scale = excluded.screen_scale,
                        first_seen = excluded.first_seen, last_seen = excluded.last_seen
                    """, logger: logger)
            }
            // Small and nullable: as JSON records rather than arrays (PostgresNIO binds no NULL inside an array).
            try await connection.query("DELETE FROM gaps WHERE session = \(uuid)", logger: logger)
            try await connection.query("""
                INSERT INTO gaps (session, start, "end", reason)
                SELECT \(uuid), g.start, g."end", g.reason FROM jsonb_to_recordset(\(gaps)::jsonb) AS g(start float8, "end" float8, reason text)
                """, logger: logger)
            try await connection.query("DELETE FROM transcripts WHERE session = \(uuid)", logger: logger)
            try await connection.query("""
                INSERT INTO transcripts (session, device, stream, start, "end", text, confidence, exclamation)
                SELECT \(uuid), t.device, t.stream, t.start, t."end", t.text, t.confidence, t.exclamation
                FROM jsonb_to_recordset(\(transcript)::jsonb)
                    AS t(device text, stream text, start float8, "end" float8, text text, confidence float8, exclamation text)
                """, logger: logger)
        }
    }

    /// A study of this lab's catalog: its definition (iterations, tasks, participants, questions) and
    /// the questionnaire answers, as `study show` gives them.
    func describe(_ data: StudyData, _ connection: PostgresConnection) async throws {
        let encoder = JSONEncoder()
        let study = String(decoding: try encoder.encode(data.study), as: UTF8.self)
        let responses = String(decoding: try encoder.encode(data.responses), as: UTF8.self)
        try await connection.query("""
            INSERT INTO studies (lab, name, study, responses, updated) VALUES (\(lab), \(data.study.name), \(study)::jsonb, \(responses)::jsonb, now())
            ON CONFLICT (lab, name) DO UPDATE SET study = excluded.study, responses = excluded.responses, updated = now()
            """, logger: logger)
    }

    /// The session's events and media under an old numbering go; the position starts again at 0.
    func forgetEvents(of session: SessionRecord, generation: Int, _ connection: PostgresConnection) async throws {
        let uuid = try Self.uuid(session.uuid)
        try await connection.withTransaction(logger: logger) { connection in
            try await Self.claim(uuid, for: lab, connection, logger: logger)
            try await connection.query("DELETE FROM events WHERE session = \(uuid)", logger: logger)
            try await connection.query("DELETE FROM media WHERE session = \(uuid)", logger: logger)
            try await connection.query("""
                INSERT INTO replication (session, lab, last_event, last_media, generation, updated) VALUES (\(uuid), \(lab), 0, 0, \(generation), now())
                ON CONFLICT (session) DO UPDATE SET last_event = 0, last_media = 0, generation = excluded.generation, updated = now()
                """, logger: logger)
        }
    }

    /// One batch in one transaction: its blobs, events and media, and the session's new position.
    func store(_ batch: SessionBatch, of session: SessionRecord, at position: ReplicationPosition,
                       _ connection: PostgresConnection) async throws {
        let uuid = try Self.uuid(session.uuid)
        let events = batch.events, media = batch.media.map(\.chunk), mediaIDs = batch.media.map(\.id)
        try await connection.withTransaction(logger: logger) { connection in
            try await Self.claim(uuid, for: lab, connection, logger: logger)
            if !batch.blobs.isEmpty {
                let names = batch.blobs.map(\.sha256), sizes = batch.blobs.map { Int64($0.bytes.count) }
                let bytes = batch.blobs.map { ByteBuffer(bytes: $0.bytes) }
                try await connection.query("""
                    INSERT INTO blobs (sha256, size, bytes)
                    SELECT * FROM unnest(\(names)::text[], \(sizes)::bigint[], \(bytes)::bytea[])
                    ON CONFLICT (sha256) DO NOTHING
                    """, logger: logger)
            }
            if !events.isEmpty {
                try await connection.query("""
                    INSERT INTO events (session, id, device, seq, class, "timestamp", timestamp_estimated, received, payload, document)
                    SELECT \(uuid), e.id, e.device, CASE WHEN e.has_seq THEN e.seq END, e.class, e.ts, e.est, e.received, e.payload::jsonb,
                           e.payload
                    FROM unnest(\(events.map(\.id))::bigint[], \(events.map(\.device))::text[], \(events.map { $0.seq ?? 0 })::bigint[],
                                \(events.map { $0.seq != nil })::bool[],
                                \(events.map(\.eventClass))::text[], \(events.map(\.timestamp))::float8[], \(events.map(\.timestampEstimated))::bool[],
                                \(events.map(\.received))::float8[], \(events.map(\.payload))::text[])
                        AS e(id, device, seq, has_seq, class, ts, est, received, payload)
                    ON CONFLICT (session, id) DO NOTHING
                    """, logger: logger)
            }
            if !media.isEmpty {
                try await connection.query("""
                    INSERT INTO media (session, id, device, seq, stream, kind, content_type, part, start, duration, received, bytes)
                    SELECT \(uuid), m.id, m.device, CASE WHEN m.has_seq THEN m.seq END, m.stream, m.kind, m.content_type, m.part, m.start,
                           CASE WHEN m.has_duration THEN m.duration END, m.received, m.bytes
                    FROM unnest(\(mediaIDs)::bigint[], \(media.map(\.device))::text[], \(media.map { $0.seq ?? 0 })::bigint[],
                                \(media.map { $0.seq != nil })::bool[], \(media.map(\.stream))::text[], \(media.map(\.kind))::text[],
                                \(media.map(\.contentType))::text[], \(media.map(\.part))::bigint[], \(media.map(\.start))::float8[],
                                \(media.map { $0.duration ?? 0 })::float8[], \(media.map { $0.duration != nil })::bool[],
                                \(media.map(\.received))::float8[], \(media.map { ByteBuffer(bytes: $0.bytes) })::bytea[])
                        AS m(id, device, seq, has_seq, stream, kind, content_type, part, start, duration, has_duration, received, bytes)
                    ON CONFLICT (session, id) DO NOTHING
                    """, logger: logger)
            }
            try await connection.query("""
                INSERT INTO replication (session, lab, last_event, last_media, generation, updated)
                VALUES (\(uuid), \(lab), \(position.event), \(position.media), \(position.generation), now())
                ON CONFLICT (session) DO UPDATE SET last_event = GREATEST(replication.last_event, excluded.last_event),
                    last_media = GREATEST(replication.last_media, excluded.last_media), updated = now()
                """, logger: logger)
        }
    }

    /// Takes the session's row for the rest of the transaction (FOR SHARE: whose it is cannot change
    /// meanwhile) and goes no further when it is another lab's: every write to a session's events,
    /// media and position comes after this.
    private static func claim(_ uuid: UUID, for lab: String, _ connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.query("SELECT lab FROM sessions WHERE uuid = \(uuid) FOR SHARE", logger: logger)
        for try await owner in rows.decode(String.self) where owner != lab {
            throw ReplicationError.ownedByAnotherLab(owner: owner)
        }
    }

    /// The lab whose row `uuid` is.
    private static func owner(of uuid: UUID, _ connection: PostgresConnection, logger: Logger) async throws -> String {
        var owner = "another lab"
        for try await lab in try await connection.query("SELECT lab FROM sessions WHERE uuid = \(uuid)", logger: logger).decode(String.self) {
            owner = lab
        }
        return owner
    }

    private static func uuid(_ text: String) throws -> UUID {
        guard let uuid = UUID(uuidString: text) else { throw ReplicationError.badSettings("session uuid \(text) is not a UUID") }
        return uuid
    }

}
