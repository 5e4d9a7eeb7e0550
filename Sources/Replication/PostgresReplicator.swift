internal import Foundation
public import JournalStorage
public import Logging
internal import NIOConcurrencyHelpers
internal import NIOCore
internal import NIOPosix
internal import PostgresNIO
public import SessionModel
public import ServiceLifecycle

/// Copies what muevald stores into a shared PostgreSQL (docs/POSTGRES.md): sessions, devices, events
/// (payloads as JSONB), blobs once per SHA-256. The session files stay the source of truth and the
/// backlog: devices are acknowledged by the local commit, and this service follows in batches. Each
/// batch is one PostgreSQL transaction that also moves the session's position, and rows are keyed by
/// the session's uuid and the local event id with ON CONFLICT DO NOTHING, so a batch that is sent
/// again (after PostgreSQL or muevald went down mid-commit) is stored once. A session row belongs to
/// the lab that first sent it: another lab's write to it is refused and reported in `status`.
public final class PostgresReplicator: Service, Sendable {
    private let settings: ReplicationSettings
    private let catalog: Catalog
    private let logger: Logger
    private let status = NIOLockedValueBox(ReplicationStatus(target: "", state: "starting", pendingEvents: 0, lagSeconds: nil, sessions: []))

    private let doorbell = Doorbell()
    /// After a commit rang, how long the replicator waits for more before its pass, so that a burst of
    /// commits (a busy lab commits every few milliseconds) makes one pass, not one each.
    static let gatherDelay = Duration.milliseconds(50)

    public init(settings: ReplicationSettings, catalog: Catalog, logger: Logger) {
        self.settings = settings
        self.catalog = catalog
        self.logger = logger
    }

    public var current: ReplicationStatus { status.withLockedValue { $0 } }

    /// Events were committed locally: replicate them now rather than at the next `interval`.
    public func committed() {
        doorbell.ring()
    }

    public func run() async throws {
        let target: PostgresTarget
        do {
            target = try PostgresTarget(url: settings.url, passwordFile: settings.passwordFile)
        } catch {
            setState("not replicating: \(error)")
            logger.error("postgres: \(error); recording locally only")
            try? await gracefulShutdown()
            return
        }
        status.withLockedValue { $0.target = target.description }
        await cancelWhenGracefulShutdown { await self.replicate(target) }
    }

    /// One connection, kept while it works; any failure closes it, and the next pass connects
    /// again and asks PostgreSQL where each session stands. (One connection, not PostgresClient's
    /// pool: a pool's query waits for a server that is down, where this must say so and retry.)
    private func replicate(_ target: PostgresTarget) async {
        var pass = Pass()
        var connection: PostgresConnection?
        while !Task.isCancelled {
            var more = false
            do {
                let live: PostgresConnection
                if let connection, !connection.isClosed {
                    live = connection
                } else {
                    pass.positions = nil
                    live = try await target.connect(timeout: Int64(min(settings.timeout, 30)))
                    connection = live
                }
                // A pass that takes longer than `timeout` (a server or network that stopped
                // answering) closes the connection and is tried again on a new one.
                let started = pass
                (pass, more) = try await Deadline.run(seconds: settings.timeout, expire: { try? await live.close() }) {
                    var next = started
                    if next.positions == nil {
                        try await PostgresSchema.migrate(live, logger: self.logger)
                        next.positions = try await self.positions(live)
                    }
                    let more = try await self.replicateOnce(live, &next)
                    return (next, more)
                }
                if current.state != "replicating" { logger.notice("postgres: replicating into \(target.description)") }
                setState("replicating")
            } catch {
                if Task.isCancelled { break }
                // Our own errors (a newer schema) are no network trouble: say what they are.
                let cause = Self.cause(of: error)
                let ours = cause as? ReplicationError
                let reason = ours.map { $0.isConnectionTrouble ? "unreachable: \($0)" : "not replicating: \($0)" }
                    ?? "unreachable: \(Self.reason(for: cause))"
                if current.state != reason { logger.error("postgres: \(target.description) \(reason); recording locally, retrying") }
                setState(reason)
                await countBacklog()
                try? await connection?.close()
                connection = nil
            }
            if !more, current.state == "replicating" {
                await doorbell.wait(upTo: settings.interval)
                try? await Task.sleep(for: Self.gatherDelay)
            } else if !more {
                try? await Task.sleep(for: .seconds(settings.interval))
            }
        }
        try? await connection?.close()
    }

    /// What one pass remembers of the next: positions, and what was already sent once.
    private struct Pass: Sendable {
        /// Where PostgreSQL has each session; nil until asked after a (re)connect.
        var positions: [String: ReplicationPosition]? = nil
        var details: [String: SessionDetails] = [:]
        var studies: [String: StudyData] = [:]
        var studiesRead: ContinuousClock.Instant?
        var blobs: Set<String> = []
        /// Stopped sessions whose every event is in PostgreSQL, with their last id.
        var complete: [String: Int64] = [:]
        /// Sessions whose uuid is another lab's in PostgreSQL, with that lab: tried again once per
        /// `interval` (an administrator may settle it), skipped in between.
        var refused: [String: String] = [:]
    }

    /// Every session's new events and media, a batch each; true when some session has more waiting.
    private func replicateOnce(_ connection: PostgresConnection, _ pass: inout Pass) async throws -> Bool {
        let catalog = catalog
        // Studies change by hand (a questionnaire answered): looked at once per `interval`, not on
        // every pass a commit wakes while a session records.
        let lookAtStudies = pass.studiesRead.map { $0.duration(to: .now) >= .seconds(settings.interval) } ?? true
        let (sessions, studies) = try await NIOThreadPool.singleton.runIfActive {
            (try catalog.sessions(), lookAtStudies ? try catalog.studies().map { try catalog.studyData($0.name) } : [])
        }
        for study in studies where pass.studies[study.study.name] != study {
            try await describe(study, connection)
            pass.studies[study.study.name] = study
        }
        if lookAtStudies { pass.studiesRead = .now }
        var more = false
        var report: [SessionReplication] = []
        var oldestWaiting: Double?
        for session in sessions {
            // A stopped session that is all in PostgreSQL and unchanged since: nothing to read.
            if pass.details[session.uuid]?.record == session, session.state == .stopped, let done = pass.complete[session.uuid] {
                report.append(SessionReplication(session: session.id, uuid: session.uuid, replicated: done, pending: 0))
                continue
            }
            if let owner = pass.refused[session.uuid], !lookAtStudies {
                report.append(SessionReplication(session: session.id, uuid: session.uuid, replicated: 0, pending: 0, ownedBy: owner))
                continue
            }
            let position = pass.positions?[session.uuid] ?? ReplicationPosition()
            let known = pass.blobs
            let limit = settings.batchEvents
            let batch = try await NIOThreadPool.singleton.runIfActive {
                try SessionBatch(session: session, after: position, limit: limit, knownBlobs: known)
            }
            do {
                if pass.details[session.uuid] != batch.details {
                    try await describe(batch.details, connection)
                    pass.details[session.uuid] = batch.details
                }
                if batch.generation != position.generation {
                    try await forgetEvents(of: session, generation: batch.generation, connection)
                    pass.positions?[session.uuid] = ReplicationPosition(generation: batch.generation)
                    more = true
                } else if !batch.events.isEmpty || !batch.media.isEmpty {
                    let next = ReplicationPosition(event: batch.events.last?.id ?? position.event, media: batch.media.last?.id ?? position.media,
                                                   generation: position.generation)
                    try await store(batch, of: session, at: next, connection)
                    pass.positions?[session.uuid] = next
                    for blob in batch.blobs { pass.blobs.insert(blob.sha256) }
                    if batch.events.count == limit || !batch.media.isEmpty { more = true }
                    if let first = batch.events.first { oldestWaiting = min(oldestWaiting ?? first.received, first.received) }
                }
            } catch {
                // Another lab's session (an import that kept its uuid, a copied data directory): this one
                // is left out and said so; the others go on.
                guard case .ownedByAnotherLab(let owner)? = Self.cause(of: error) as? ReplicationError else { throw error }
                if pass.refused.updateValue(owner, forKey: session.uuid) != owner {
                    logger.error("postgres: session \(session.id) has uuid \(session.uuid), which is \(owner)'s session in PostgreSQL: not replicating it (docs/POSTGRES.md, Whose session)")
                }
                report.append(SessionReplication(session: session.id, uuid: session.uuid, replicated: 0, pending: 0, ownedBy: owner))
                continue
            }
            pass.refused[session.uuid] = nil
            let replicated = pass.positions?[session.uuid]?.event ?? 0
            pass.complete[session.uuid] = replicated >= batch.newest && batch.media.isEmpty ? replicated : nil
            report.append(SessionReplication(session: session.id, uuid: session.uuid, replicated: replicated,
                                             pending: max(0, batch.newest - replicated)))
        }
        let now = Date().timeIntervalSince1970
        status.withLockedValue { $0.record(report, lagSeconds: more ? oldestWaiting.map { now - $0 } : nil) }
        return more
    }

    /// The positions PostgreSQL has of this lab's sessions, after a (re)connect: the truth, whatever
    /// this process remembered.
    private func positions(_ connection: PostgresConnection) async throws -> [String: ReplicationPosition] {
        var positions: [String: ReplicationPosition] = [:]
        let rows = try await connection.query("""
            SELECT session::text, last_event, last_media, generation FROM replication WHERE lab = \(settings.lab)
            """, logger: logger)
        for try await (session, event, media, generation) in rows.decode((String, Int64, Int64, Int).self) {
            positions[session] = ReplicationPosition(event: event, media: media, generation: generation)
        }
        return positions
    }

    /// The session's row, devices, gaps and transcript, in one transaction (gaps and transcript whole).
    /// The row is updated only while it is this lab's (`WHERE sessions.lab = excluded.lab`): when
    /// another lab has the uuid, nothing is written and `ownedByAnotherLab` says whose it is.
    private func describe(_ details: SessionDetails, _ connection: PostgresConnection) async throws {
        let session = details.record
        let uuid = try Self.uuid(session.uuid)
        let encoder = JSONEncoder()
        let sensors = String(decoding: try encoder.encode(session.sensors), as: UTF8.self)
        let study = try details.study.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        let imports = String(decoding: try encoder.encode(details.imports), as: UTF8.self)
        let transcription = String(decoding: try encoder.encode(details.transcription), as: UTF8.self)
        let gaps = String(decoding: try encoder.encode(details.gaps), as: UTF8.self)
        let transcript = String(decoding: try encoder.encode(details.transcript), as: UTF8.self)
        let (lab, logger) = (settings.lab, logger)
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
    private func describe(_ data: StudyData, _ connection: PostgresConnection) async throws {
        let encoder = JSONEncoder()
        let study = String(decoding: try encoder.encode(data.study), as: UTF8.self)
        let responses = String(decoding: try encoder.encode(data.responses), as: UTF8.self)
        try await connection.query("""
            INSERT INTO studies (lab, name, study, responses, updated) VALUES (\(settings.lab), \(data.study.name), \(study)::jsonb, \(responses)::jsonb, now())
            ON CONFLICT (lab, name) DO UPDATE SET study = excluded.study, responses = excluded.responses, updated = now()
            """, logger: logger)
    }

    /// The session's events and media under an old numbering go; the position starts again at 0.
    private func forgetEvents(of session: SessionRecord, generation: Int, _ connection: PostgresConnection) async throws {
        let uuid = try Self.uuid(session.uuid)
        let (lab, logger) = (settings.lab, logger)
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
    private func store(_ batch: SessionBatch, of session: SessionRecord, at position: ReplicationPosition,
                       _ connection: PostgresConnection) async throws {
        let uuid = try Self.uuid(session.uuid)
        let events = batch.events, media = batch.media.map(\.chunk), mediaIDs = batch.media.map(\.id)
        let (lab, logger) = (settings.lab, logger)
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

    /// While PostgreSQL is away: how many events wait, from each file's newest event and the last
    /// positions PostgreSQL confirmed (so that `status` shows the backlog growing). Stopped sessions
    /// known to be complete are not opened.
    private func countBacklog() async {
        let catalog = catalog
        let known = status.withLockedValue { Dictionary($0.sessions.map { ($0.uuid, $0) }) { first, _ in first } }
        let counted = try? await NIOThreadPool.singleton.runIfActive { () -> [SessionReplication] in
            try catalog.sessions().map { session in
                if let owner = known[session.uuid]?.ownedBy {
                    return SessionReplication(session: session.id, uuid: session.uuid, replicated: 0, pending: 0, ownedBy: owner)
                }
                let replicated = known[session.uuid]?.replicated ?? 0
                if session.state == .stopped, let last = known[session.uuid], last.pending == 0 {
                    return SessionReplication(session: session.id, uuid: session.uuid, replicated: replicated, pending: 0)
                }
                let newest = (try? SessionReader(path: session.path).events(last: 1).last?.id) ?? nil
                return SessionReplication(session: session.id, uuid: session.uuid, replicated: replicated,
                                          pending: max(0, (newest ?? session.events) - replicated))
            }
        }
        guard let counted else { return }
        status.withLockedValue { $0.record(counted, lagSeconds: nil) }
    }

    private func setState(_ state: String) {
        status.withLockedValue { $0.state = state }
    }

    private static func uuid(_ text: String) throws -> UUID {
        guard let uuid = UUID(uuidString: text) else { throw ReplicationError.badSettings("session uuid \(text) is not a UUID") }
        return uuid
    }

    /// What went wrong inside a transaction, rather than the transaction's wrapper around it.
    static func cause(of error: any Error) -> any Error {
        guard let transaction = error as? PostgresTransactionError else { return error }
        return transaction.closureError ?? transaction.beginError ?? transaction.commitError ?? error
    }

    /// PostgresNIO's errors print their query; say what went wrong and no more (no credentials either).
    static func reason(for error: Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            return "\(error.code)"
        }
        return "\(error)"
    }
}
