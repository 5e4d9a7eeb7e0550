internal import Foundation
public import GroupCommit
public import JournalStorage
public import Logging
internal import NIOConcurrencyHelpers
internal import PageRecording
public import SessionModel

/// The open sessions and the rules that bind devices to them (thesis 2.4.1: the developer starts
/// and stops sessions; one test user and one device per session; several sessions at once).
///
/// The shell around `SessionLifecycleStateMachine`, which decides; this holds it under one lock
/// with the live sessions it is about, and carries out its actions: journal and catalog writes,
/// tail lines, log lines, lifecycle events (`events`). The in-memory state is authoritative, so
/// that a device attaching never waits for the disk; what a decision persists is queued, under
/// the lock, on the session's journal and on the catalog queue, in the order it was decided.
public final class SessionRegistry: @unchecked Sendable {
    typealias Machine = SessionLifecycleStateMachine

    let catalog: Catalog
    let journalLimits: JournalWriterLimits
    /// The file system's sync that every session's commits share (`storage.shared_sync`); nil: each syncs its own file.
    let sharedSync: SharedSync?
    /// Bytes of media (think-aloud audio, face video) one session may hold.
    private let maxMediaBytes: Int
    let counters: CaptureCounters
    let tail: LiveTail
    let logger: Logger
    /// The catalog's writes that must not hold up their caller, in order.
    let catalogQueue = DispatchQueue(label: "mueval.catalog")
    let lock = NIOLock()
    /// Under `lock`: the decisions, and the live sessions they are about (the same ids).
    var machine: Machine
    var live: [Int64: EvaluationSession] = [:]
    /// Under `lock`: the running reconnect graces' timers, by session (`SessionRegistry+ReconnectGrace.swift`).
    var graceTimers: [Int64: Task<Void, Never>] = [:]
    /// Under `lock`: per device, the floor its automatic session's stop for its drop leaves for its next session.
    var resendFloors: [String: ResendFloor] = [:]
    /// Called after every commit, with the session it belongs to (acknowledgements, live tail).
    private let commitObserver: @Sendable (EvaluationSession, CommitReport) -> Void
    /// The sessions' lifecycle events, for the daemon's services to follow.
    public let events: SessionEvents
    /// The web console's address, which the console sets once it listens (welcome's questionnaire link).
    public let consoleAddress = ConsoleAddress()

    /// `reconnectGrace`: seconds an automatic session waits for its device after a drop (`capture.reconnect_grace`,
    /// which muevald passes); 0 stops it at once.
    public init(catalog: Catalog, policy: UnknownDevicePolicy, journalLimits: JournalWriterLimits, sharedSync: SharedSync? = nil,
                maxMediaBytes: Int = EvaluationSession.defaultMaxMediaBytes, reconnectGrace: Double = 0,
                counters: CaptureCounters, tail: LiveTail, logger: Logger,
                events: SessionEvents = SessionEvents(),
                commitObserver: @escaping @Sendable (EvaluationSession, CommitReport) -> Void) {
        self.catalog = catalog
        self.journalLimits = journalLimits
        self.sharedSync = sharedSync
        self.maxMediaBytes = maxMediaBytes
        self.counters = counters
        self.tail = tail
        self.logger = logger
        self.commitObserver = commitObserver
        machine = Machine(policy: policy, makePairingCode: Machine.randomPairingCode)
        machine.reconnectGrace = reconnectGrace
        self.events = events
    }

    // MARK: Queries

    /// Every session the catalog knows, open ones with live counts.
    public func sessions() throws -> [SessionRecord] {
        let open = lock.withLock { live.mapValues(\.snapshot) }
        return try catalog.sessions().map { open[$0.id] ?? $0 }
    }

    public func openSessions() -> [EvaluationSession] {
        lock.withLock { live.values.sorted { $0.id < $1.id } }
    }

    /// Every device the catalog knows, each `connected` when it records into an open session now.
    public func devices() throws -> [DeviceRecord] {
        let recording = Set(openSessions().map(\.snapshot).filter { $0.state == .recording }.compactMap(\.device))
        return try catalog.devices().map { device in
            var device = device
            device.connected = recording.contains(device.id)
            return device
        }
    }

    /// Finds a session by id or, failing that, by unique name.
    public func find(_ key: String) throws -> SessionRecord {
        let all = try sessions()
        if let id = Int64(key), let match = all.first(where: { $0.id == id }) { return match }
        let named = all.filter { $0.name == key }
        guard named.count <= 1 else { throw SessionError.ambiguous(key) }
        guard let match = named.first else { throw SessionError.notFound(key) }
        return match
    }

    // MARK: Carrying out the machine's decisions

    /// Makes a transition and carries out its actions under the lock; what a device that asked
    /// for a session gets, when the actions say. `context`: the caller's session, which may no
    /// longer be open (a connection ending after the stop).
    @discardableResult
    func decide(_ context: EvaluationSession? = nil, _ transition: (inout Machine) -> [Machine.Action]) -> AttachOutcome? {
        lock.withLock { perform(transition(&machine), context: context) }
    }

    /// Carries out `actions` in order; under `lock`.
    func perform(_ actions: [Machine.Action], context: EvaluationSession? = nil) -> AttachOutcome? {
        func session(_ id: Int64) -> EvaluationSession? { live[id] ?? (context?.id == id ? context : nil) }
        var outcome: AttachOutcome?
        for action in actions {
            switch action {
            case .update(let record, let write):
                guard let session = session(record.id) else { continue }
                let updated = session.update { $0 = record }
                if let write { persist(updated, write, of: session) }
            case .publish(let event):
                events.publish([event])
            case .tail(let line):
                tail.publish(line)
            case .tailAfterCommits(let line):
                guard let session = session(line.session ?? 0) else { continue }
                // On the journal's queue, which commits what the connection appended first: the
                // line follows the connection's last events in the tail, as it did on the wire.
                session.journal.submit({ [tail] _ in tail.publish(line) }, onFailure: logFailure(session))
            case .log(let level, let message):
                logger.log(level: level, "\(message)")
            case .count(.authenticationFailure):
                counters.authenticationFailures.add(1)
            case .count(.pairingRefused):
                counters.pairingRefused.add(1)
            case .attached(let id):
                outcome = session(id).map { .attached($0) } ?? .rejected(reason: "session \(id) is no longer open")
            case .reject(let reason, let logged):
                outcome = .rejected(reason: reason, logged: logged)
            case .openAutomaticSession, .lookUpInvitation, .openInvitedSession:
                // Off the caller's thread: `SessionRegistry.attach` carries these out (`Opening`).
                outcome = .opening
            case .storeInvitation(let transition):
                catalogQueue.async { [catalog, logger] in
                    do {
                        try catalog.apply([transition])
                    } catch {
                        // Not the code: it lets a phone in.
                        logger.error("cannot mark an invitation \(transition.to.rawValue) in the catalog: \(error)")
                    }
                }
            case .stop(let id, let now):
                guard let session = session(id) else { continue }
                Task { _ = try? await self.stop(session, now: now) }
            case .startReconnectGrace(let id, let timer, let seconds):
                startGraceTimer(id, timer: timer, seconds: seconds)
            case .cancelReconnectGrace(let id):
                graceTimers.removeValue(forKey: id)?.cancel()
            case .rememberResendFloor(let id, let device):
                resendFloors.updateValue(ResendFloor(session: id), forKey: device)?.settle(nil)
            case .applyResendFloor(let id, let device):
                guard let floor = resendFloors.removeValue(forKey: device), let session = session(id) else { continue }
                applyResendFloor(floor, device: device, to: session)
            }
        }
        return outcome
    }

    /// Queues the write on the session's journal, then the catalog's on the catalog queue.
    private func persist(_ record: SessionRecord, _ write: Machine.Write, of session: EvaluationSession) {
        if write.file {
            session.journal.submit({ try Self.apply(write, record, to: $0) }, onFailure: logFailure(session))
        }
        catalogQueue.async { [catalog, logger] in
            do {
                // The session's record when the queue gets to it: never an older one over a stop's, nor
                // a stopping one before its counts are final (the stop writes that one itself).
                let current = session.snapshot
                if current.state != .stopped { try catalog.update(current) }
                if let device = write.device { try catalog.recordDevice(device) }
            } catch {
                logger.error("cannot update the catalog for session \(record.id): \(error)")
            }
        }
    }

    /// The file's part of a write: the gap, the record, the device.
    static func apply(_ write: Machine.Write, _ record: SessionRecord, to file: SessionFile) throws {
        switch write.gap {
        case .open(let at, let reason)?: try file.openGap(at: at, reason: reason)
        case .close(let at)?: try file.closeGaps(at: at)
        case nil: break
        }
        try file.writeMetadata(record)
        if let device = write.device { try file.writeDevice(device) }
    }

    /// A page record is stored sanitised (docs/SECURITY.md, "Page recordings"): a lab's browser replays it.
    static let sanitisingPageRecords: @Sendable (JournalRecord) -> JournalRecord? = { record in
        guard case .event(let event) = record.content, PageRecordClass(rawValue: event.eventClass) != nil else { return nil }
        var sanitised = record
        sanitised.content = .event(PageRecordEvent.stored(event))
        return sanitised
    }

    /// A live session for `record`, with its journal; not yet among the open ones. `tasks`: its
    /// study's, for the welcome; `invitation`: the code of the invitation that opened it.
    func makeSession(_ record: SessionRecord, isAutomatic: Bool, tasks: [StudyTask], invitation: String? = nil) throws -> EvaluationSession {
        let box = SessionBox()
        let journal = try JournalWriter(path: record.path, limits: journalLimits, sharedSync: sharedSync,
                                        prepare: Self.sanitisingPageRecords) { [commitObserver] report in
            guard let session = box.session else { return }
            session.observeClock(report)
            commitObserver(session, report)
        }
        // A session reopened after a restart counts the media it already holds against its limit.
        let mediaBytes = try SessionReader(path: record.path).mediaStreams().reduce(0) { $0 + Int($1.bytes) }
        let session = EvaluationSession(record: record, journal: journal, isAutomatic: isAutomatic, tasks: tasks, invitation: invitation,
                                        mediaBytes: mediaBytes, maxMediaBytes: maxMediaBytes)
        box.session = session
        return session
    }

    func logFailure(_ session: EvaluationSession) -> @Sendable (Error) -> Void {
        { [logger] error in logger.error("session \(session.id): cannot write its metadata: \(error)") }
    }
}

/// Lets a journal's commit callback reach the session that owns the journal, which is created after it.
private final class SessionBox: @unchecked Sendable {
    weak var session: EvaluationSession?
}
