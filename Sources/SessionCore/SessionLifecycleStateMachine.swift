internal import Foundation
package import Logging
internal import MuEvalWire
package import SessionModel

/// What the open sessions are and decide: which open session a device records into (claim and
/// pairing), when a session is opened for a device (policy `auto`), interrupted (its last
/// connection ended) or stopped, and what each of those writes, logs and announces.
/// Methods take what happened and return what to do; `SessionRegistry` does it under its lock.
/// No I/O, no clock and no randomness here (the pairing codes come from `makePairingCode`), so
/// every transition is tested without disk or sockets (SessionCoreTests). Per session and per
/// connection, never per event.
package struct SessionLifecycleStateMachine {
    /// An open session as the machine knows it: its record (the live session keeps the counts)
    /// and the device connections recording into it.
    package struct OpenSession: Equatable {
        package var record: SessionRecord
        /// Opened for one connection under the `auto` policy, and stopped with it.
        package var isAutomatic: Bool
        package var connections: Set<UInt64> = []
        /// The code of the study invitation that opened it: its device is bound to it, and its stop makes it `done`.
        package var invitation: String? = nil
        /// Since when no connection records into it (nil while one does).
        package var idleSince: Double? = nil
        /// An automatic session whose device dropped: the number of the reconnect grace's timer that stops it.
        package var graceTimer: UInt64? = nil
    }

    /// What goes to disk with a new record: its file (unless `file` is false) and the catalog.
    package struct Write: Equatable {
        package var file = true
        /// The device's row, in the file and the catalog.
        package var device: DeviceRecord?
        package var gap: Gap?
    }

    /// A gap in the recording (docs/STORAGE.md): opened when recording stopped unannounced, closed when it resumes.
    package enum Gap: Equatable {
        case open(at: Double, reason: String)
        case close(at: Double)
    }

    package enum Counter: Equatable {
        /// A wrong device token or pairing code.
        case authenticationFailure
        /// A pairing code not compared: its address waits (`PairingGuard`).
        case pairingRefused
    }

    package enum Action: Equatable {
        /// The session's record is now `record`: the live session takes it; `write` says what is persisted (nil: nothing yet).
        case update(SessionRecord, write: Write?)
        /// Announce it on the lifecycle stream.
        case publish(SessionEvent)
        /// Show it in the live tail.
        case tail(TailLine)
        /// Show it in the live tail once the session's journal has committed what came before (a device's last events).
        case tailAfterCommits(TailLine)
        case log(Logger.Level, String)
        case count(Counter)
        /// The device records into this session.
        case attached(Int64)
        /// The device gets no session. `logged`: logged here already, rationed (a wrong pairing
        /// code), so the connection does not log it again.
        case reject(reason: String, logged: Bool)
        /// Policy `auto`: open a session for the device, off the caller's thread.
        case openAutomaticSession
        /// The device presents this study invitation: read it from the catalog, off the caller's
        /// thread, and tell `invitationFound`.
        case lookUpInvitation(String)
        /// The invitation is the device's: open its study session (`invitedSessionOpened`), off the caller's thread.
        case openInvitedSession(Invitation)
        /// The catalog stores this change of an invitation's status (`InvitationLifecycle` decided it).
        case storeInvitation(InvitationTransition)
        /// Stop this session at `now` (opened by the `auto` policy, its device said goodbye or stayed away).
        case stop(Int64, now: Double)
        /// Stop this automatic session after `seconds` unless its device reconnects: `reconnectGraceEnded(id, timer:)` then.
        case startReconnectGrace(Int64, timer: UInt64, seconds: Double)
        /// Its device is back, or it stops otherwise: the grace's timer is not needed.
        case cancelReconnectGrace(Int64)
        /// The session stops for its device's drop: once its stop has committed its last events, keep the highest
        /// seq it stored of `device`, which the device's next session takes for stored (`applyResendFloor`).
        case rememberResendFloor(Int64, device: String)
        /// The device records into this session: what it resends of its previous session's seqs is acknowledged, not stored.
        case applyResendFloor(Int64, device: String)
    }

    package let policy: UnknownDevicePolicy
    let makePairingCode: @Sendable () -> String
    package internal(set) var open: [Int64: OpenSession] = [:]
    /// Wrong pairing codes per address and per session.
    var pairingGuard = PairingGuard()
    /// What an invitation a phone presents comes to, and its status as its session opens and stops.
    let invitations = InvitationLifecycle()
    /// Seconds an automatic session waits for its device after a connection lost without a goodbye
    /// (`capture.reconnect_grace`); 0: it stops at once.
    package var reconnectGrace: Double = 0
    /// The last reconnect grace's timer number: a timer that fires late for an earlier drop stops nothing.
    var graceTimers: UInt64 = 0
    /// Devices whose automatic session stopped for their drop, and that session: its highest seq is the floor of their next one.
    package internal(set) var resendFloors: [String: Int64] = [:]

    package init(policy: UnknownDevicePolicy, makePairingCode: @escaping @Sendable () -> String) {
        self.policy = policy
        self.makePairingCode = makePairingCode
    }

    /// The open sessions, oldest first.
    private var sessions: [OpenSession] { open.values.sorted { $0.record.id < $1.record.id } }

    // MARK: Start, recovery, stop

    /// A developer asks for a session: refused when `device` records into (or is bound to) an open one.
    package func startRequested(device: String?) -> SessionError? {
        guard let device, let busy = sessions.first(where: { $0.record.boundDevice == device || $0.record.device == device }) else { return nil }
        return .deviceBusy(device: device, session: busy.record.id)
    }

    /// A developer's session is open (in the catalog, its journal ready).
    package mutating func started(_ record: SessionRecord, now: Double) -> [Action] {
        open[record.id] = OpenSession(record: record, isAutomatic: false)
        return [
            .publish(.started(record)),
            .tail(TailLine(kind: .sessionStarted, session: record.id, time: now, device: record.boundDevice,
                           detail: [record.name, record.testUser.map { "user \($0)" }].compactMap { $0 }.joined(separator: ", "))),
            .log(.info, "session \(record.id) (\(record.name)) started, waiting for \(record.boundDevice.map { "device \($0)" } ?? "the next device")"),
        ]
    }

    /// At start-up, a session the catalog has open. One that was recording is interrupted, with a
    /// gap from its last event (`lastEvent`) to its device's return. `invitation`: the code of the
    /// study invitation that opened it; its device has `idleInvitedSessions`' time from `now` to return.
    package mutating func recovered(_ record: SessionRecord, lastEvent: Double?, invitation: String? = nil, now: Double? = nil) -> [Action] {
        var session = OpenSession(record: record, isAutomatic: false, invitation: invitation, idleSince: now)
        defer { open[record.id] = session }
        guard record.state == .recording else {
            return [.log(.info, "session \(record.id) (\(record.name)) is \(record.state.rawValue) again")]
        }
        session.record.state = .interrupted
        let gapStart = lastEvent ?? record.started ?? record.created
        return [
            .update(session.record, write: Write(gap: .open(at: gapStart, reason: "muevald was not running"))),
            .log(.notice, "session \(record.id) (\(record.name)) was recording when muevald stopped: interrupted until device \(record.device ?? "?") reconnects"),
        ]
    }

    /// A stop begins: the session is no longer open and takes no more events; the invitation that
    /// opened it is done. The registry then commits and finalises its file and reports `stopFinished`.
    package mutating func stopRequested(_ id: Int64, now: Double) -> Result<[Action], SessionError> {
        guard var session = open.removeValue(forKey: id) else { return .failure(.alreadyStopped(id)) }
        session.record.state = .stopped
        session.record.stopped = now
        return .success([.update(session.record, write: nil), .publish(.stopping(session.record))]
                        + (session.graceTimer == nil ? [] : [.cancelReconnectGrace(id)])
                        + (session.invitation.map { [.storeInvitation(invitations.sessionStopped($0))] } ?? []))
    }

    /// The stopped session's file is final; `final` has its last counts.
    package func stopFinished(_ final: SessionRecord, now: Double) -> [Action] {
        [
            .tail(TailLine(kind: .sessionStopped, session: final.id, time: now, device: final.device, detail: "\(final.events) events stored")),
            .log(.info, "session \(final.id) (\(final.name)) stopped: \(final.events) events stored"),
            .publish(.stopped(final)),
        ]
    }

    /// An import made or grew a session: it follows the path of a stopped one.
    package func imported(_ record: SessionRecord, from file: String, now: Double) -> [Action] {
        [
            .tail(TailLine(kind: .sessionStopped, session: record.id, time: now, device: record.device,
                           detail: "imported from \(file): \(record.events) events")),
            .log(.info, "session \(record.id) (\(record.name)) imported from \(file): \(record.events) events"),
            .publish(.imported(record, file: file)),
        ]
    }

    /// Only a stopped session may be deleted.
    package func deleteRequested(_ id: Int64) -> SessionError? {
        open[id] == nil ? nil : .stillRecording(id)
    }

    package func deleted(_ record: SessionRecord) -> [Action] {
        [.log(.info, "session \(record.id) (\(record.name)) deleted"), .publish(.deleted(record))]
    }

    /// The daemon stops: every open session's journal is closed, and the sessions stay open in the
    /// catalog for the next start. Returns their ids.
    package mutating func shutdown() -> [Int64] {
        defer { open = [:] }
        return open.keys.sorted()
    }
}

// MARK: Devices

extension SessionLifecycleStateMachine {
    /// A device asks for a session (its `<hello>`, or its first event). With a `deviceToken`, only
    /// a device presenting it gets one. Then: the session of the study invitation it presents
    /// (`invitation(_:for:…)`), else the session whose pairing code it presents, else the
    /// open session it records into or is bound to, else the oldest session waiting for any
    /// device, else (policy `auto`) a new one. A session with a code takes only the device that
    /// presents it. Ends in `.attached`, `.reject`, `.lookUpInvitation` or `.openAutomaticSession`.
    package mutating func attach(_ device: ConnectingDevice, connection: UInt64, deviceToken: String?,
                                 limits: PairingLimits, now: Double) -> [Action] {
        let hello = device.hello
        if let deviceToken, hello?.token.map({ constantTimeEqual(deviceToken, $0) }) != true {
            return [.count(.authenticationFailure), .reject(reason: hello?.token == nil
                ? "this server needs a device token: send it in <hello> as <key>token</key>"
                : "the token in <hello> is not this server's device token", logged: false)]
        }
        if device.mustPresentCode, hello?.invitation == nil, hello?.pairing == nil {
            return [.count(.authenticationFailure), .reject(reason: Self.codeRequired, logged: false)]
        }
        if let code = hello?.invitation {
            return invitation(code, for: device, connection: connection, limits: limits, now: now)
        }
        var actions: [Action] = []
        var paired: Int64?
        // A device from before the `pairing` key sends its code as `token`: taken so only where
        // `token` is no device token, else a code would pass for the token.
        if let code = hello?.pairing ?? (deviceToken == nil ? hello?.token : nil) {
            switch pair(code, address: device.address, explicit: hello?.pairing != nil, limits: limits, now: now, &actions) {
            case .paired(let id): paired = id
            case .refused: return actions
            case .noPairingSession: break
            }
        }
        if let id = claim(for: device.id, paired: paired, &actions) {
            return actions + recording(id, device: device, connection: connection, now: now)
        }
        guard policy == .auto else {
            return actions + [.reject(reason: "no session is waiting for device \(device.id): start one with `muevalctl start`", logged: false)]
        }
        return actions + [.openAutomaticSession]
    }

    static let codeRequired = "a web device must present an invitation or a pairing code: open the app from the tester's invitation (?mueval=CODE), or give start() the session's pairing code (`muevalctl start --pairing-code`)"

    /// Policy `auto`, in order with the catalog's writes: the session another connection of the
    /// device opened meanwhile, else nil: a new one must be opened (`automaticSessionOpened`).
    package mutating func automaticSessionDue(for device: ConnectingDevice, connection: UInt64, now: Double) -> [Action]? {
        var actions: [Action] = []
        guard let id = claim(for: device.id, paired: nil, &actions) else { return nil }
        return actions + recording(id, device: device, connection: connection, now: now)
    }

    /// Policy `auto`: the session opened for the device is in the catalog; the device records into it.
    package mutating func automaticSessionOpened(_ record: SessionRecord, for device: ConnectingDevice, connection: UInt64,
                                                 now: Double) -> [Action] {
        open[record.id] = OpenSession(record: record, isAutomatic: true)
        return [.publish(.started(record)), .log(.info, "device \(device.id) has no session: opened session \(record.id) (policy auto)")]
            + recording(record.id, device: device, connection: connection, now: now)
    }

    /// Policy `auto`: no session could be opened for the device.
    package func automaticSessionFailed(for device: ConnectingDevice, error: String) -> [Action] {
        [.log(.error, "cannot open a session for device \(device.id): \(error)"),
         .reject(reason: "the server cannot open a session: \(error)", logged: false)]
    }

    /// A device's connection ended (or the device changed its identity); `cleanly` when it said
    /// goodbye. When it was the session's last connection, the session is interrupted (with a gap
    /// in the recording unless `cleanly`) or stopped: opened by the `auto` policy and said goodbye
    /// (or dropped, without a reconnect grace), or opened by an invitation whose device said goodbye
    /// (an unmoderated session has nobody to stop it). An automatic session whose device dropped
    /// waits out its reconnect grace (`SessionLifecycleReconnect.swift`).
    package mutating func detached(_ id: Int64, connection: UInt64, device: String, cleanly: Bool, now: Double) -> [Action] {
        let marker = Action.tailAfterCommits(TailLine(kind: .deviceDisconnected, session: id, time: now, device: device,
                                                      detail: cleanly ? "said goodbye" : "connection lost"))
        guard var session = open[id], session.connections.remove(connection) != nil else { return [marker] }
        defer { open[id] = session }
        guard session.connections.isEmpty else {
            let detached = Action.publish(.deviceDetached(session.record, device: device, cleanly: cleanly))
            // A goodbye while another connection of the device is still open (a socket that died in silence and is not
            // noticed yet, a second tab): the device is done, and so is a session that ends at its goodbye.
            return cleanly && (session.isAutomatic || session.invitation != nil) ? [marker, detached, .stop(id, now: now)] : [marker, detached]
        }
        session.record.state = .interrupted
        session.idleSince = now
        let detachedEvent = Action.publish(.deviceDetached(session.record, device: device, cleanly: cleanly))
        if session.isAutomatic, !cleanly, reconnectGrace <= 0 {
            return [marker, .update(session.record, write: nil), detachedEvent] + stopForDrop(id, device: device, now: now)
        }
        if cleanly, session.isAutomatic || session.invitation != nil {
            return [marker, .update(session.record, write: nil), detachedEvent, .stop(id, now: now)]
        }
        let write = Write(device: DeviceRecord(id: device, firstSeen: now, lastSeen: now),
                          gap: cleanly ? nil : .open(at: now, reason: "device \(device) disconnected without goodbye"))
        let grace = session.isAutomatic ? startGrace(&session) : []
        return [marker, .update(session.record, write: write),
                .log(.info, "session \(id) interrupted: device \(device) \(cleanly ? "said goodbye" : "disconnected")" + Self.graceNotice(grace)),
                detachedEvent] + grace
    }

    /// The open session the device may record into, claiming a free one; nil when there is none.
    private mutating func claim(for device: String, paired: Int64?, _ actions: inout [Action]) -> Int64? {
        let claimed: Int64
        if let paired {
            guard open[paired]?.record.device == nil else { return paired }
            claimed = paired
        } else {
            let sessions = sessions.filter { $0.record.pairingCode == nil }
            if let own = sessions.first(where: { $0.record.device == device || $0.record.boundDevice == device }) {
                return own.record.id
            }
            guard let free = sessions.first(where: { $0.record.device == nil && $0.record.boundDevice == nil && !$0.isAutomatic }) else {
                return nil
            }
            claimed = free.record.id
        }
        open[claimed]?.record.device = device
        actions.append(.log(.info, "device \(device) claimed session \(claimed)"))
        return claimed
    }

    /// The device's connection records into session `id` now.
    mutating func recording(_ id: Int64, device: ConnectingDevice, connection: UInt64, now: Double) -> [Action] {
        guard var session = open[id] else { return [] }
        let before = session.record.state
        session.connections.insert(connection)
        session.idleSince = nil
        var actions = reconnected(&session, device: device.id)
        session.record.device = device.id
        session.record.state = .recording
        if session.record.started == nil { session.record.started = now }
        open[id] = session
        let hello = device.hello
        let deviceRecord = DeviceRecord(id: device.id, device: hello?.device ?? DeviceDescription(), address: device.address,
                                        firstSeen: now, lastSeen: now)
        actions += [
            .update(session.record, write: Write(device: deviceRecord, gap: .close(at: now))),
            .tail(TailLine(kind: .deviceConnected, session: id, time: now, device: device.id,
                           detail: [hello?.device.name, hello?.model, device.address].compactMap { $0 }.joined(separator: ", "))),
        ]
        if before != .recording { actions.append(.log(.info, "session \(id) recording from device \(device.id)")) }
        actions += [.publish(.deviceAttached(session.record, device: deviceRecord)), .attached(id)]
        return actions
    }
}
