internal import ControlProtocol
internal import Foundation
public import GroupCommit
public import JournalStorage
public import Logging
internal import NIOConcurrencyHelpers
public import SessionModel
public import WireProtocol

/// Errors of session management, worded for the developer at the `muevalctl` prompt.
public enum SessionError: Error, CustomStringConvertible, Equatable {
    case notFound(String)
    case alreadyStopped(Int64)
    case stillRecording(Int64)
    case deviceBusy(device: String, session: Int64)
    case ambiguous(String)
    /// Being stopped right now: it takes events neither through its journal nor in its final file yet.
    case stopping(Int64)

    public var description: String {
        switch self {
        case .notFound(let key): "no session \"\(key)\" (see `muevalctl sessions`)"
        case .alreadyStopped(let id): "session \(id) is already stopped"
        case .stillRecording(let id): "session \(id) is still open: stop it first (`muevalctl stop \(id)`)"
        case .deviceBusy(let device, let session): "device \(device) already records into session \(session): stop that one first"
        case .ambiguous(let key): "\"\(key)\" names several sessions: use the id"
        case .stopping(let id): "session \(id) is being stopped: try again in a moment"
        }
    }
}

/// How a device came to its session, or why it has none.
public enum AttachOutcome: Sendable {
    case attached(EvaluationSession)
    /// `logged`: the registry logged it already, rate-limited (a wrong pairing code), so the
    /// connection does not: a flood of guesses must not flood the journal.
    case rejected(reason: String, logged: Bool = false)
    /// A session is being opened for the device, off the caller's thread (policy `auto`): the
    /// outcome follows through the `opened` callback of `attach`.
    case opening
}

/// Who a connection is: the hello's device id, or its address when it sent no hello.
public struct DeviceIdentity: Sendable, Equatable {
    public var id: String
    public var hello: DeviceHello?
    public var address: String?

    public init(id: String, hello: DeviceHello?, address: String?) {
        self.id = id
        self.hello = hello
        self.address = address
    }
}

/// The open sessions and the rules that bind devices to them (thesis 2.4.1: the developer starts
/// and stops sessions; one test user and one device per session; several sessions at once).
///
/// The in-memory state is authoritative and changes under one lock, so that a device attaching
/// never waits for the disk; metadata is persisted in order on the session's journal queue and
/// on the catalog queue.
public final class SessionRegistry: @unchecked Sendable {
    private let catalog: Catalog
    private let policy: UnknownDevicePolicy
    private let journalLimits: JournalWriterLimits
    /// Bytes of media (think-aloud audio, face video) one session may hold.
    private let maxMediaBytes: Int
    private let counters: CaptureCounters
    private let tail: LiveTail
    private let logger: Logger
    private let catalogQueue = DispatchQueue(label: "mueval.catalog")
    private let lock = NIOLock()
    private var open: [Int64: EvaluationSession] = [:]
    /// Wrong pairing codes per address and per session; under `lock`, with `open`.
    private var pairingGuard = PairingGuard()
    /// Called after every commit, with the session it belongs to (acknowledgements, live tail).
    private let commitObserver: @Sendable (EvaluationSession, CommitReport) -> Void
    private let changeObservers = NIOLockedValueBox<[@Sendable () -> Void]>([])
    private let stopObservers = NIOLockedValueBox<[@Sendable (SessionRecord) -> Void]>([])

    public init(catalog: Catalog, policy: UnknownDevicePolicy, journalLimits: JournalWriterLimits,
                maxMediaBytes: Int = CaptureConfiguration.defaultMaxMediaBytes,
                counters: CaptureCounters, tail: LiveTail, logger: Logger,
                commitObserver: @escaping @Sendable (EvaluationSession, CommitReport) -> Void) {
        self.catalog = catalog
        self.policy = policy
        self.journalLimits = journalLimits
        self.maxMediaBytes = maxMediaBytes
        self.counters = counters
        self.tail = tail
        self.logger = logger
        self.commitObserver = commitObserver
    }

    /// Calls `observer` whenever a session starts, stops, or its state changes (Zeroconf TXT, status).
    public func observeChanges(_ observer: @escaping @Sendable () -> Void) {
        changeObservers.withLockedValue { $0.append(observer) }
    }

    /// Calls `observer` with each session once it is stopped and its file final (transcription starts there).
    public func observeStops(_ observer: @escaping @Sendable (SessionRecord) -> Void) {
        stopObservers.withLockedValue { $0.append(observer) }
    }

    private func changed() {
        for observer in changeObservers.withLockedValue({ $0 }) { observer() }
    }

    // MARK: Start-up

    /// Reopens the sessions that were open when the daemon last stopped. A session that was
    /// recording becomes `interrupted`, with a gap from its last event to its device's return.
    public func recover(now: Double) async throws {
        for var record in try catalog.sessions() where record.state.isOpen {
            let reader = try SessionReader(path: record.path)
            record.events = try reader.eventCount()
            let lastEvent = try reader.events(last: 1).last?.received
            let session = try openSession(record, isAutomatic: false)
            session.setClockOffset(try reader.clockOffset())
            if record.state == .recording {
                let updated = session.update { $0.state = .interrupted }
                let gapStart = lastEvent ?? record.started ?? record.created
                try await session.journal.perform { file in
                    try file.writeMetadata(updated)
                    try file.openGap(at: gapStart, reason: "muevald was not running")
                }
                try catalog.update(updated)
                logger.notice("session \(record.id) (\(record.name)) was recording when muevald stopped: interrupted until device \(record.device ?? "?") reconnects")
            } else {
                logger.info("session \(record.id) (\(record.name)) is \(record.state.rawValue) again")
            }
        }
    }

    // MARK: Developer's commands

    /// Starts a session; it records as soon as its device (or, without one, the next device) connects.
    /// With `pairing`, the session gets a six-digit code that its device must present in `<hello>`.
    /// With `study`, the session records that study's iteration and participant; its file gets the
    /// study's description and tasks (`StudyContext`).
    public func start(name: String?, testUser: String?, notes: String?, sensors: [String],
                      device: String?, pairing: Bool = false, study: StudyAssignment? = nil, now: Double) async throws -> SessionRecord {
        if let device, let busy = lock.withLock({ open.values.first { $0.snapshot.boundDevice == device || $0.snapshot.device == device } }) {
            throw SessionError.deviceBusy(device: device, session: busy.id)
        }
        let context = try study.map { try catalog.studyContext(of: $0) }
        let record = try catalog.createSession(name: name, testUser: testUser ?? study?.participant, notes: notes, sensors: sensors,
                                               boundDevice: device, pairingCode: pairing ? Self.newPairingCode() : nil,
                                               study: study, now: now)
        let session = try openSession(record, isAutomatic: false)
        try await session.journal.perform { file in
            try file.writeMetadata(record)
            if let context { try file.writeStudyContext(context) }
        }
        changed()
        tail.publish(TailLine(kind: .sessionStarted, session: record.id, time: now, device: device,
                              detail: [record.name, testUser.map { "user \($0)" }].compactMap { $0 }.joined(separator: ", ")))
        logger.info("session \(record.id) (\(record.name)) started, waiting for \(device.map { "device \($0)" } ?? "the next device")")
        return record
    }

    /// Stops a session: everything received before the stop is committed and the file finalised.
    public func stop(_ key: String, now: Double) async throws -> SessionRecord {
        let record = try find(key)
        guard let session = lock.withLock({ open[record.id] }) else { throw SessionError.alreadyStopped(record.id) }
        return try await stop(session, now: now)
    }

    /// Stops every open session.
    public func stopAll(now: Double) async throws -> [SessionRecord] {
        var stopped: [SessionRecord] = []
        for session in lock.withLock({ Array(open.values) }).sorted(by: { $0.id < $1.id }) {
            stopped.append(try await stop(session, now: now))
        }
        return stopped
    }

    private func stop(_ session: EvaluationSession, now: Double) async throws -> SessionRecord {
        let wasOpen = lock.withLock { open.removeValue(forKey: session.id) != nil }
        guard wasOpen else { throw SessionError.alreadyStopped(session.id) }
        session.update { $0.state = .stopped; $0.stopped = now }
        changed()
        try await session.journal.flush()
        let final = session.snapshot
        try await session.journal.perform { file in
            try file.writeMetadata(final)
            try file.closeGaps(at: now)
        }
        try await session.journal.close()
        try catalog.update(final)
        // Again, now that the file is final: observers that read it (the console's report) start here.
        changed()
        tail.publish(TailLine(kind: .sessionStopped, session: final.id, time: now, device: final.device,
                              detail: "\(final.events) events stored"))
        logger.info("session \(final.id) (\(final.name)) stopped: \(final.events) events stored")
        for observer in stopObservers.withLockedValue({ $0 }) { observer(final) }
        return final
    }

    /// A session made (or grown) by an import, now in the catalog: listed, announced, and handed to
    /// what follows a stop (transcription, analysis) like a session that ended here.
    public func imported(_ record: SessionRecord, from file: String, now: Double) {
        changed()
        tail.publish(TailLine(kind: .sessionStopped, session: record.id, time: now, device: record.device,
                              detail: "imported from \(file): \(record.events) events"))
        logger.info("session \(record.id) (\(record.name)) imported from \(file): \(record.events) events")
        for observer in stopObservers.withLockedValue({ $0 }) { observer(record) }
    }

    /// Deletes a stopped session and its file.
    public func delete(_ key: String) throws -> SessionRecord {
        let record = try find(key)
        guard !lock.withLock({ open[record.id] != nil }) else { throw SessionError.stillRecording(record.id) }
        try catalog.deleteSession(record)
        logger.info("session \(record.id) (\(record.name)) deleted")
        return record
    }

    // MARK: Observers' notes

    /// Stores an observer's note (docs/STORAGE.md, `ObserverNote`) in the session `key` names (id
    /// or name). An open session takes it through its journal, in order with its events, and the
    /// live tail shows it as it shows theirs; a stopped one (a note taken during replay) gets it
    /// appended to its file. It is put at `deviceTime` when given (a replay's position), else at
    /// `now` on the device's clock (see `EvaluationSession.noteTimestamp`).
    public func addNote(_ key: String, text: String, kind: String = ObserverNote.defaultKind, source: String,
                        observer: String? = nil, at deviceTime: Double? = nil, now: Double) async throws -> StoredEvent {
        guard let source = ObserverNote.Source(rawValue: source) else { throw ObserverNoteError.unknownSource(source) }
        return try await add(try ObserverNote(text: text, kind: kind, source: source, observer: observer), to: key, at: deviceTime, now: now)
    }

    /// Stores an observer's note or task mark (checked by `ObserverNote`'s initialisers) in the session `key`.
    public func add(_ note: ObserverNote, to key: String, at deviceTime: Double? = nil, now: Double) async throws -> StoredEvent {
        if let deviceTime, !deviceTime.isFinite { throw ObserverNoteError.badTime(deviceTime) }
        let record = try find(key)
        if let session = lock.withLock({ open[record.id] }) {
            return try await addNote(note, to: session, at: deviceTime, now: now)
        }
        guard record.state == .stopped else { throw SessionError.stopping(record.id) }
        return try await withCheckedThrowingContinuation { continuation in
            catalogQueue.async { [self] in
                continuation.resume(with: Result { try appendNote(note, toStopped: record.id, at: deviceTime, now: now) })
            }
        }
    }

    /// Through the session's journal: the commit report that acknowledges device events publishes it to the tail.
    private func addNote(_ note: ObserverNote, to session: EvaluationSession, at deviceTime: Double?, now: Double) async throws -> StoredEvent {
        let record = Self.journalRecord(note, in: session.snapshot, at: deviceTime, now: now, offset: session.clockOffset)
        let rowIDs = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Int64?], Error>) in
            let admission = session.journal.append([record]) { continuation.resume(with: $0) }
            if admission == .closed { continuation.resume(throwing: SessionError.stopping(session.id)) }
        }
        // Every note gets a row: it has no seq, so it is never taken for a duplicate.
        guard let id = rowIDs.first ?? nil, let stored = record.stored(as: id) else { throw SessionError.stopping(session.id) }
        return stored
    }

    /// On the catalog queue, so that a stopped file has one writer at a time and the catalog's count follows it.
    private func appendNote(_ note: ObserverNote, toStopped id: Int64, at deviceTime: Double?, now: Double) throws -> StoredEvent {
        guard var session = try catalog.session(id: id), FileManager.default.fileExists(atPath: session.path) else {
            throw SessionError.notFound(String(id))
        }
        let offset = deviceTime == nil ? try SessionReader(path: session.path).clockOffset() : nil
        let record = Self.journalRecord(note, in: session, at: deviceTime, now: now, offset: offset)
        let file = try SessionFile(path: session.path, synchronous: journalLimits.synchronous, indexed: true)
        guard let rowID = try file.store([[record]]).first ?? nil, let stored = record.stored(as: rowID) else {
            throw SessionError.notFound(String(id))
        }
        // Folded into the file, which stays complete on its own as a stopped session's file is.
        try file.finish(buildingIndexes: false)
        session.events += 1
        try catalog.update(session)
        tail.publish(.event(stored, session: id))
        logger.info("session \(id): \(note.source) added a note after the stop")
        return stored
    }

    /// The note as a row of the session: on its device's line (or `ObserverNote.device` before one connected).
    private static func journalRecord(_ note: ObserverNote, in session: SessionRecord, at deviceTime: Double?, now: Double,
                                      offset: Double?) -> JournalRecord {
        JournalRecord(device: session.device ?? session.boundDevice ?? ObserverNote.device, received: now,
                      event: note.event(timestamp: EvaluationSession.noteTimestamp(at: deviceTime, now: now, offset: offset)),
                      origin: EvaluationSession.observerOrigin)
    }

    /// Every session the catalog knows, open ones with live counts.
    public func sessions() throws -> [SessionRecord] {
        let live = lock.withLock { open.mapValues(\.snapshot) }
        return try catalog.sessions().map { live[$0.id] ?? $0 }
    }

    public func openSessions() -> [EvaluationSession] {
        lock.withLock { open.values.sorted { $0.id < $1.id } }
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

    // MARK: Devices

    /// Finds the session a device records into: the session whose pairing code it presents, else
    /// the open session bound to it, else the oldest session waiting for any device, else (policy
    /// `auto`) a new one. With a `deviceToken`, only devices presenting it get a session, and a
    /// session with a pairing code takes only the device that presents its code as well.
    ///
    /// Returns at once, without touching the disk (it is called on an event loop). Opening a new
    /// session writes the catalog (an fsync) and creates a file, so that runs on the catalog queue
    /// and returns `.opening`; `opened` is then called there with the outcome.
    public func attach(_ device: DeviceIdentity, connection: UInt64, deviceToken: String?,
                       pairingLimits: PairingLimits = PairingLimits(), now: Double,
                       opened: @escaping @Sendable (AttachOutcome) -> Void) -> AttachOutcome {
        let hello = device.hello
        if let deviceToken, hello?.token.map({ constantTimeEqual(deviceToken, $0) }) != true {
            counters.authenticationFailures.add(1)
            return .rejected(reason: hello?.token == nil
                ? "this server needs a device token: send it in <hello> as <key>token</key>"
                : "the token in <hello> is not this server's device token")
        }
        // A device from before the `pairing` key sends its code as `token`: taken so only where
        // `token` is no device token, else a code would pass for the token.
        var paired: EvaluationSession?
        if let code = hello?.pairing ?? (deviceToken == nil ? hello?.token : nil) {
            switch pair(code, address: device.address ?? "unknown", explicit: hello?.pairing != nil, limits: pairingLimits, now: now) {
            case .paired(let session): paired = session
            case .refused(let reason, let logged): return .rejected(reason: reason, logged: logged)
            case .noPairingSession: break
            }
        }
        if let session = claim(for: device, paired: paired) {
            markRecording(session, device: device, connection: connection, now: now)
            return .attached(session)
        }
        guard policy == .auto else {
            return .rejected(reason: "no session is waiting for device \(device.id): start one with `muevalctl start`")
        }
        // In order with the catalog's other writes; a second connection of the same device, queued
        // behind this one, finds the session this one opened.
        catalogQueue.async { [self] in
            opened(openAutomaticSession(for: device, connection: connection, now: now))
        }
        return .opening
    }

    private enum Pairing {
        case paired(EvaluationSession)
        /// `logged`: a wrong code, logged here (rate-limited), not by the connection.
        case refused(String, logged: Bool)
        /// No open session has a code: a legacy `token` is then no pairing attempt.
        case noPairingSession
    }

    /// The open session whose pairing code `address` presents, unless that address sent too many
    /// wrong codes (`PairingGuard`). A wrong code is counted, logged (rate-limited) and may give
    /// sessions new codes. `explicit`: the code came as `pairing`, so no session having a code is
    /// a refusal too.
    private func pair(_ code: String, address: String, explicit: Bool, limits: PairingLimits, now: Double) -> Pairing {
        let key = PairingGuard.key(address)
        let (outcome, failure, rotated): (Pairing, PairingGuard.Failure?, [EvaluationSession]) = lock.withLock {
            let candidates = open.values.filter { $0.snapshot.pairingCode != nil }.sorted { $0.id < $1.id }
            guard !candidates.isEmpty else {
                guard explicit else { return (.noPairingSession, nil, []) }
                counters.authenticationFailures.add(1)
                return (.refused("no open session has a pairing code: start one with `muevalctl start --pairing-code`", logged: false), nil, [])
            }
            if case .refused(let retryAfter, _) = pairingGuard.admit(address: address, now: now, limits: limits) {
                counters.pairingRefused.add(1)
                return (.refused("too many wrong pairing codes from \(key): try again in \(Self.seconds(retryAfter)) s", logged: true), nil, [])
            }
            if let session = candidates.first(where: { $0.snapshot.pairingCode.map { constantTimeEqual($0, code) } == true }) {
                pairingGuard.succeeded(address: address)
                return (.paired(session), nil, [])
            }
            counters.authenticationFailures.add(1)
            let failure = pairingGuard.failed(address: address, code: code, sessions: candidates.map(\.id), now: now, limits: limits)
            let rotated = candidates.filter { failure.rotate.contains($0.id) }
            for session in rotated { session.update { $0.pairingCode = Self.newPairingCode() } }
            var reason = "wrong pairing code: ask the developer for the session's code (`muevalctl status`)"
            if let wait = failure.wait {
                reason += "; \(failure.failures) wrong codes from \(key): the next attempt in \(Self.seconds(wait)) s"
            }
            return (.refused(reason, logged: true), failure, rotated)
        }
        if let failure { log(failure, address: key) }
        for session in rotated {
            logger.notice("session \(session.id) (\(session.snapshot.name)): \(limits.rotateAfter) wrong pairing codes while it was open: it has a new code (`muevalctl status`), which its device needs to connect again")
            // The session's state when the queue gets to it: never an older one over a stop's.
            catalogQueue.async { [catalog, logger] in
                do { try catalog.update(session.snapshot) } catch { logger.error("cannot update the catalog for session \(session.id): \(error)") }
            }
        }
        if !rotated.isEmpty { changed() }
        return outcome
    }

    /// One line per counted wrong code, as `PairingGuard` rations them.
    private func log(_ failure: PairingGuard.Failure, address: String) {
        guard failure.counted, case .log(let unlogged) = failure.log else { return }
        var line = "wrong pairing code from \(address) (\(failure.failures) from this address)"
        if let wait = failure.wait { line += failure.lockedOut ? ": refused for \(Self.seconds(wait)) s" : ": next attempt in \(Self.seconds(wait)) s" }
        if unlogged > 0 { line += "; \(unlogged) wrong codes before it were not logged (too many a minute)" }
        logger.warning("\(line)")
    }

    /// Whole seconds, rounded up, for a person to read.
    private static func seconds(_ value: Double) -> String {
        String(format: "%.0f", value.rounded(.up))
    }

    /// The open session the device may record into, claiming a free one; nil when there is none.
    private func claim(for device: DeviceIdentity, paired: EvaluationSession?) -> EvaluationSession? {
        let claim: (EvaluationSession, Bool)? = lock.withLock {
            if let session = paired {
                let claimed = session.snapshot.device == nil
                if claimed { session.update { $0.device = device.id } }
                return (session, claimed)
            }
            let sessions = open.values.sorted { $0.id < $1.id }.filter { $0.snapshot.pairingCode == nil }
            if let own = sessions.first(where: { $0.snapshot.device == device.id || $0.snapshot.boundDevice == device.id }) {
                return (own, false)
            }
            if let free = sessions.first(where: { $0.snapshot.device == nil && $0.snapshot.boundDevice == nil && !$0.isAutomatic }) {
                free.update { $0.device = device.id }
                return (free, true)
            }
            return nil
        }
        guard let (session, claimed) = claim else { return nil }
        if claimed { logger.info("device \(device.id) claimed session \(session.id)") }
        return session
    }

    /// Policy `auto`, on the catalog queue: a new session for the device, unless one appeared meanwhile.
    private func openAutomaticSession(for device: DeviceIdentity, connection: UInt64, now: Double) -> AttachOutcome {
        let session: EvaluationSession
        if let existing = claim(for: device, paired: nil) {
            session = existing
        } else {
            do {
                let record = try catalog.createSession(name: "auto-\(device.id)", testUser: nil, notes: "opened by the auto policy",
                                                       sensors: [], boundDevice: device.id, now: now)
                session = try openSession(record, isAutomatic: true)
                logger.info("device \(device.id) has no session: opened session \(record.id) (policy auto)")
            } catch {
                logger.error("cannot open a session for device \(device.id): \(error)")
                return .rejected(reason: "the server cannot open a session: \(error)")
            }
        }
        markRecording(session, device: device, connection: connection, now: now)
        return .attached(session)
    }

    /// A device's connection ended; `cleanly` when it said goodbye. When it was the session's last
    /// connection, the session is interrupted (with a gap in the recording unless `cleanly`) or,
    /// opened by the `auto` policy, stopped.
    public func detach(_ session: EvaluationSession, connection: UInt64, device: String, cleanly: Bool, now: Double) {
        // On the journal's queue, which commits what the connection appended first: the marker
        // follows the connection's last events in the tail, as it did on the wire.
        let marker = TailLine(kind: .deviceDisconnected, session: session.id, time: now, device: device,
                              detail: cleanly ? "said goodbye" : "connection lost")
        session.journal.submit({ [tail] _ in tail.publish(marker) }, onFailure: logFailure(session))
        let lastSeen = DeviceRecord(id: device, firstSeen: now, lastSeen: now)
        let interrupted = session.disconnect(connection, { record in
            if record.state.isOpen { record.state = .interrupted }
        }, persist: { record in
            guard record.state.isOpen, !session.isAutomatic else { return }
            session.journal.submit({ file in
                if !cleanly { try file.openGap(at: now, reason: "device \(device) disconnected without goodbye") }
                try file.writeMetadata(record)
                try file.writeDevice(lastSeen)
            }, onFailure: logFailure(session))
            persistInCatalog(record, device: lastSeen)
        })
        guard let interrupted, interrupted.state.isOpen else { return }
        if session.isAutomatic {
            Task { _ = try? await self.stop(session, now: now) }
        } else {
            logger.info("session \(session.id) interrupted: device \(device) \(cleanly ? "said goodbye" : "disconnected")")
            changed()
        }
    }

    private func markRecording(_ session: EvaluationSession, device: DeviceIdentity, connection: UInt64, now: Double) {
        let before = session.snapshot.state
        let deviceRecord = DeviceRecord(
            id: device.id, name: device.hello?.deviceName, model: device.hello?.model,
            systemVersion: device.hello?.systemVersion, appId: device.hello?.appId, appVersion: device.hello?.appVersion,
            screenWidth: device.hello?.screenWidth, screenHeight: device.hello?.screenHeight,
            screenScale: device.hello?.screenScale, address: device.address, firstSeen: now, lastSeen: now)
        let record = session.connect(connection, { record in
            record.device = device.id
            record.state = .recording
            if record.started == nil { record.started = now }
        }, persist: { record in
            session.journal.submit({ file in
                try file.closeGaps(at: now)
                try file.writeMetadata(record)
                try file.writeDevice(deviceRecord)
            }, onFailure: logFailure(session))
            persistInCatalog(record, device: deviceRecord)
        })
        tail.publish(TailLine(kind: .deviceConnected, session: session.id, time: now, device: device.id,
                              detail: [device.hello?.deviceName, device.hello?.model, device.address].compactMap { $0 }.joined(separator: ", ")))
        if before != .recording {
            logger.info("session \(record.id) recording from device \(device.id)")
            changed()
        }
    }

    /// Off the caller's thread (the catalog's writes wait for the disk), in the order of the calls.
    private func persistInCatalog(_ record: SessionRecord, device: DeviceRecord) {
        catalogQueue.async { [catalog, logger] in
            do {
                try catalog.update(record)
                try catalog.recordDevice(device)
            } catch {
                logger.error("cannot update the catalog for session \(record.id): \(error)")
            }
        }
    }

    // MARK: Shutdown

    /// Commits and closes every journal; open sessions stay open in the catalog and resume after restart.
    public func shutdown() async {
        let sessions = lock.withLock { () -> [EvaluationSession] in
            defer { open = [:] }
            return Array(open.values)
        }
        for session in sessions {
            do {
                try await session.journal.flush()
                let record = session.snapshot
                try await session.journal.perform { try $0.writeMetadata(record) }
                // Still open: it resumes after the restart, so its indexes wait for its stop.
                try await session.journal.close(buildingIndexes: false)
                try catalog.update(record)
            } catch {
                logger.error("session \(session.id): cannot finish its journal cleanly: \(error)")
            }
        }
    }

    // MARK: Helpers

    private func openSession(_ record: SessionRecord, isAutomatic: Bool) throws -> EvaluationSession {
        let box = SessionBox()
        let journal = try JournalWriter(path: record.path, limits: journalLimits) { [commitObserver] report in
            guard let session = box.session else { return }
            session.observeClock(report)
            commitObserver(session, report)
        }
        // A session reopened after a restart counts the media it already holds against its limit.
        let mediaBytes = try SessionReader(path: record.path).mediaStreams().reduce(0) { $0 + Int($1.bytes) }
        let session = EvaluationSession(record: record, journal: journal, isAutomatic: isAutomatic,
                                        mediaBytes: mediaBytes, maxMediaBytes: maxMediaBytes)
        box.session = session
        lock.withLock { open[record.id] = session }
        return session
    }

    /// Six random digits: short enough to type on a phone, for a session that lasts an hour.
    private static func newPairingCode() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
    }

    private func logFailure(_ session: EvaluationSession) -> @Sendable (Error) -> Void {
        { [logger] error in logger.error("session \(session.id): cannot write its metadata: \(error)") }
    }
}

/// Lets a journal's commit callback reach the session that owns the journal, which is created after it.
private final class SessionBox: @unchecked Sendable {
    weak var session: EvaluationSession?
}
