internal import Foundation
public import JournalStorage
public import Logging
internal import NIOConcurrencyHelpers
internal import NIOCore
internal import NIOPosix
internal import PostgresNIO
public import SessionModel
public import ServiceLifecycle
internal import WireProtocol

/// Copies what muevald stores into a shared PostgreSQL (docs/POSTGRES.md): sessions, devices, events
/// (payloads as JSONB), blobs once per SHA-256. The session files stay the source of truth and the
/// backlog: devices are acknowledged by the local commit, and this service follows in batches. Each
/// batch is one PostgreSQL transaction that also moves the session's position, and rows are keyed by
/// the session's uuid and the local event id with ON CONFLICT DO NOTHING, so a batch that is sent
/// again (after PostgreSQL or muevald went down mid-commit) is stored once.
public final class PostgresReplicator: Service, Sendable {
    private let settings: ReplicationSettings
    private let catalog: Catalog
    private let logger: Logger
    private let status = NIOLockedValueBox(ReplicationStatus(target: "", state: "starting", pendingEvents: 0, lagSeconds: nil, sessions: []))

    public init(settings: ReplicationSettings, catalog: Catalog, logger: Logger) {
        self.settings = settings
        self.catalog = catalog
        self.logger = logger
    }

    public var current: ReplicationStatus { status.withLockedValue { $0 } }

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
                    live = try await connect(target)
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
                let reason = "unreachable: \(Self.describe(error))"
                if current.state != reason { logger.error("postgres: \(target.description) \(reason); recording locally, retrying") }
                setState(reason)
                await countBacklog()
                try? await connection?.close()
                connection = nil
            }
            if !more { try? await Task.sleep(for: .seconds(settings.interval)) }
        }
        try? await connection?.close()
    }

    private func connect(_ target: PostgresTarget) async throws -> PostgresConnection {
        var configuration = PostgresConnection.Configuration(host: target.host, port: target.port, username: target.user,
                                                            password: target.password, database: target.database, tls: try target.tls())
        configuration.options.connectTimeout = .seconds(Int64(min(settings.timeout, 30)))
        // PostgresNIO's own lines would repeat what `replicate` says once per state change. (A
        // logger of its own: a copy of ours shares the daemon's level, which a change would silence.)
        let quiet = Logger(label: "muevald.postgres") { _ in SwiftLogNoOpLogHandler() }
        return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: quiet)
    }

    /// What one pass remembers of the next: positions, and what was already sent once.
    private struct Pass: Sendable {
        /// Where PostgreSQL has each session; nil until asked after a (re)connect.
        var positions: [String: Int64]? = nil
        var described: [String: SessionRecord] = [:]
        var devices: [String: [DeviceRecord]] = [:]
        var blobs: Set<String> = []
        /// Sessions whose every event is in PostgreSQL, with their last id.
        var complete: [String: Int64] = [:]
    }

    /// Every session's new events, a batch each; true when some session has more waiting.
    private func replicateOnce(_ connection: PostgresConnection, _ pass: inout Pass) async throws -> Bool {
        let catalog = catalog
        let sessions = try await NIOThreadPool.singleton.runIfActive { try catalog.sessions() }
        var more = false
        var report: [SessionReplication] = []
        var oldestWaiting: Double?
        for session in sessions {
            // A stopped session that is all in PostgreSQL and unchanged since: nothing to read.
            if pass.described[session.uuid] == session, session.state == .stopped, let done = pass.complete[session.uuid] {
                report.append(SessionReplication(session: session.id, uuid: session.uuid, replicated: done, pending: 0))
                continue
            }
            if pass.described[session.uuid] != session {
                try await describe(session, connection)
                pass.described[session.uuid] = session
            }
            let position = pass.positions?[session.uuid] ?? 0
            let known = pass.blobs
            let batch = settings.batchEvents
            let page = try await NIOThreadPool.singleton.runIfActive { try Page(path: session.path, after: position, limit: batch, knownBlobs: known) }
            if pass.devices[session.uuid] != page.devices {
                try await describe(page.devices, of: session, connection)
                pass.devices[session.uuid] = page.devices
            }
            if let last = page.events.last {
                try await store(page, of: session, connection)
                pass.positions?[session.uuid] = last.id
                for blob in page.blobs { pass.blobs.insert(blob.sha256) }
                if page.events.count == batch { more = true }
                oldestWaiting = min(oldestWaiting ?? page.events[0].received, page.events[0].received)
            }
            let replicated = pass.positions?[session.uuid] ?? 0
            pass.complete[session.uuid] = replicated >= page.newest ? replicated : nil
            report.append(SessionReplication(session: session.id, uuid: session.uuid, replicated: replicated,
                                             pending: max(0, page.newest - replicated)))
        }
        let pending = report.reduce(0) { $0 + $1.pending }
        let now = Date().timeIntervalSince1970
        status.withLockedValue {
            $0.sessions = report
            $0.pendingEvents = pending
            $0.lagSeconds = more ? oldestWaiting.map { now - $0 } : nil
        }
        return more
    }

    /// The positions PostgreSQL has, after a (re)connect: the truth, whatever this process remembered.
    private func positions(_ connection: PostgresConnection) async throws -> [String: Int64] {
        var positions: [String: Int64] = [:]
        for try await (session, last) in try await connection.query("SELECT session::text, last_event FROM replication", logger: logger)
            .decode((String, Int64).self) { positions[session] = last }
        return positions
    }

    private func describe(_ session: SessionRecord, _ connection: PostgresConnection) async throws {
        let uuid = try Self.uuid(session.uuid)
        let sensors = String(decoding: try JSONEncoder().encode(session.sensors), as: UTF8.self)
        try await connection.query("""
            INSERT INTO sessions (uuid, lab, local_id, name, test_user, notes, sensors, device, state, created, started, stopped, events,
                                  study, iteration, participant, updated)
            VALUES (\(uuid), \(settings.lab), \(session.id), \(session.name), \(session.testUser), \(session.notes), \(sensors)::jsonb,
                    \(session.device), \(session.state.rawValue), \(session.created), \(session.started), \(session.stopped), \(session.events),
                    \(session.study), \(session.iteration), \(session.participant), now())
            ON CONFLICT (uuid) DO UPDATE SET lab = excluded.lab, local_id = excluded.local_id, name = excluded.name,
                test_user = excluded.test_user, notes = excluded.notes, sensors = excluded.sensors, device = excluded.device,
                state = excluded.state, created = excluded.created, started = excluded.started, stopped = excluded.stopped,
                events = excluded.events, study = excluded.study, iteration = excluded.iteration, participant = excluded.participant,
                updated = now()
            """, logger: logger)
    }

    private func describe(_ devices: [DeviceRecord], of session: SessionRecord, _ connection: PostgresConnection) async throws {
        let uuid = try Self.uuid(session.uuid)
        for device in devices {
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
    }

    /// One batch in one transaction: its blobs, its events, and the session's new position.
    private func store(_ page: Page, of session: SessionRecord, _ connection: PostgresConnection) async throws {
        let uuid = try Self.uuid(session.uuid)
        let events = page.events
        let ids = events.map(\.id), devices = events.map(\.device), classes = events.map(\.eventClass)
        let seqs = events.map { $0.seq ?? 0 }, hasSeq = events.map { $0.seq != nil }
        let timestamps = events.map(\.timestamp), estimated = events.map(\.timestampEstimated), received = events.map(\.received)
        let payloads = events.map(\.payload)
        let last = ids.last!
        let lab = settings.lab
        let logger = logger
        try await connection.withTransaction(logger: logger) { connection in
            if !page.blobs.isEmpty {
                let names = page.blobs.map(\.sha256), sizes = page.blobs.map { Int64($0.bytes.count) }
                let bytes = page.blobs.map { ByteBuffer(bytes: $0.bytes) }
                try await connection.query("""
                    INSERT INTO blobs (sha256, size, bytes)
                    SELECT * FROM unnest(\(names)::text[], \(sizes)::bigint[], \(bytes)::bytea[])
                    ON CONFLICT (sha256) DO NOTHING
                    """, logger: logger)
            }
            try await connection.query("""
                INSERT INTO events (session, id, device, seq, class, "timestamp", timestamp_estimated, received, payload)
                SELECT \(uuid), e.id, e.device, CASE WHEN e.has_seq THEN e.seq END, e.class, e.ts, e.est, e.received, e.payload::jsonb
                FROM unnest(\(ids)::bigint[], \(devices)::text[], \(seqs)::bigint[], \(hasSeq)::bool[], \(classes)::text[],
                            \(timestamps)::float8[], \(estimated)::bool[], \(received)::float8[], \(payloads)::text[])
                    AS e(id, device, seq, has_seq, class, ts, est, received, payload)
                ON CONFLICT (session, id) DO NOTHING
                """, logger: logger)
            try await connection.query("""
                INSERT INTO replication (session, lab, last_event, updated) VALUES (\(uuid), \(lab), \(last), now())
                ON CONFLICT (session) DO UPDATE SET last_event = GREATEST(replication.last_event, excluded.last_event), updated = now()
                """, logger: logger)
        }
    }

    /// While PostgreSQL is away: how many events wait, from the catalog's counts and the last
    /// positions PostgreSQL confirmed (so that `status` shows the backlog growing).
    private func countBacklog() async {
        let catalog = catalog
        guard let sessions = try? await NIOThreadPool.singleton.runIfActive({ try catalog.sessions() }) else { return }
        status.withLockedValue { status in
            let known = Dictionary(status.sessions.map { ($0.uuid, $0.replicated) }) { first, _ in first }
            status.sessions = sessions.map { session in
                let replicated = known[session.uuid] ?? 0
                return SessionReplication(session: session.id, uuid: session.uuid, replicated: replicated, pending: max(0, session.events - replicated))
            }
            status.pendingEvents = status.sessions.reduce(0) { $0 + $1.pending }
            status.lagSeconds = nil
        }
    }

    private func setState(_ state: String) {
        status.withLockedValue { $0.state = state }
    }

    private static func uuid(_ text: String) throws -> UUID {
        guard let uuid = UUID(uuidString: text) else { throw ReplicationError.badSettings("session uuid \(text) is not a UUID") }
        return uuid
    }

    /// PostgresNIO's errors print their query; say what went wrong and no more (no credentials either).
    static func describe(_ error: Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            return "\(error.code)"
        }
        return "\(error)"
    }
}

/// A session's next events, the blobs they name that were not sent yet, its devices and its newest id:
/// read from the session file on a thread of the pool, never on the async executor.
private struct Page {
    var events: [StoredEvent]
    var blobs: [(sha256: String, bytes: [UInt8])]
    var devices: [DeviceRecord]
    var newest: Int64

    init(path: String, after position: Int64, limit: Int, knownBlobs: Set<String>) throws {
        let reader = try SessionReader(path: path)
        events = try reader.page(afterID: position, limit: limit, maxBytes: 8 << 20)
        devices = try reader.devices()
        newest = try reader.events(last: 1).last?.id ?? 0
        var named: [String] = []
        for event in events {
            let references = Array(event.payload.utf8).withUnsafeBufferPointer { TypedJSON.blobReferences(in: $0) }
            for sha in references where !knownBlobs.contains(sha) && !named.contains(sha) { named.append(sha) }
        }
        blobs = try named.compactMap { sha in try reader.blob(sha256: sha).map { (sha, $0) } }
    }
}
