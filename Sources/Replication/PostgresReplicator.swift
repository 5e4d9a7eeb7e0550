internal import Foundation
public import JournalStorage
public import Logging
internal import NIOConcurrencyHelpers
internal import NIOPosix
internal import PostgresNIO
public import ReplicationArchive
public import SessionModel
public import ServiceLifecycle
public import SessionCore

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
    private let writer: SharedDatabaseWriter
    private let status = NIOLockedValueBox(ReplicationStatus(target: "", state: "starting", pendingEvents: 0, lagSeconds: nil, sessions: []))

    private let doorbell = Doorbell()
    /// The sessions' lifecycle: a session that starts, stops, is imported or deleted is replicated
    /// within a pass, rather than within `interval` (each pass reads the catalog).
    private let sessionEvents: SessionEventSubscription?
    /// After a commit rang, how long the replicator waits for more before its pass, so that a burst of
    /// commits (a busy lab commits every few milliseconds) makes one pass, not one each.
    static let gatherDelay = Duration.milliseconds(50)

    public init(settings: ReplicationSettings, catalog: Catalog, logger: Logger, sessionEvents: SessionEventSubscription? = nil) {
        self.settings = settings
        self.sessionEvents = sessionEvents
        self.catalog = catalog
        self.logger = logger
        writer = SharedDatabaseWriter(lab: settings.lab, logger: logger)
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
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                if let sessionEvents = self.sessionEvents {
                    // Any event may change what PostgreSQL should hold (a dropped one too: `.missed`).
                    group.addTask { for await _ in sessionEvents { self.doorbell.ring() } }
                }
                await self.replicate(target)
                group.cancelAll()
            }
        }
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
                        next.positions = try await self.writer.positions(live)
                    }
                    let more = try await self.replicateOnce(live, &next)
                    return (next, more)
                }
                if current.state != "replicating" { logger.notice("postgres: replicating into \(target.description)") }
                setState("replicating")
            } catch {
                if Task.isCancelled { break }
                // Our own errors (a newer schema) are no network trouble: say what they are.
                let cause = ReplicationError.cause(of: error)
                let ours = cause as? ReplicationError
                let reason = ours.map { $0.isConnectionTrouble ? "unreachable: \($0)" : "not replicating: \($0)" }
                    ?? "unreachable: \(ReplicationError.reason(for: cause))"
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
            try await writer.describe(study, connection)
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
                    try await writer.describe(batch.details, connection)
                    pass.details[session.uuid] = batch.details
                }
                if batch.generation != position.generation {
                    try await writer.forgetEvents(of: session, generation: batch.generation, connection)
                    pass.positions?[session.uuid] = ReplicationPosition(generation: batch.generation)
                    more = true
                } else if !batch.events.isEmpty || !batch.media.isEmpty {
                    let next = ReplicationPosition(event: batch.events.last?.id ?? position.event, media: batch.media.last?.id ?? position.media,
                                                   generation: position.generation)
                    try await writer.store(batch, of: session, at: next, connection)
                    pass.positions?[session.uuid] = next
                    for blob in batch.blobs { pass.blobs.insert(blob.sha256) }
                    if batch.events.count == limit || !batch.media.isEmpty { more = true }
                    if let first = batch.events.first { oldestWaiting = min(oldestWaiting ?? first.received, first.received) }
                }
            } catch {
                // Another lab's session (an import that kept its uuid, a copied data directory): this one
                // is left out and said so; the others go on.
                guard case .ownedByAnotherLab(let owner)? = ReplicationError.cause(of: error) as? ReplicationError else { throw error }
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

}
