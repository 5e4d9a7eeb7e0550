@testable import SessionCore
import MuEvalWire
import SessionModel
import Testing

/// The open sessions' decisions without disk or sockets: inputs in, actions out. One test per
/// transition; the names read as the specification (docs/SESSION-CORE.md).
@Suite struct SessionLifecycleStateMachineTests {
    typealias Machine = SessionLifecycleStateMachine
    typealias Action = Machine.Action

    static let newCode = "777777"

    private func machine(_ policy: UnknownDevicePolicy = .reject) -> Machine {
        Machine(policy: policy, makePairingCode: { Self.newCode })
    }

    private func record(_ id: Int64, bound: String? = nil, device: String? = nil, state: SessionState = .waiting,
                        code: String? = nil, started: Double? = nil) -> SessionRecord {
        SessionRecord(id: id, uuid: "u\(id)", name: "s\(id)", boundDevice: bound, device: device, state: state, created: 100,
                      started: started, path: "/tmp/s\(id).mueval", pairingCode: code)
    }

    private func phone(_ id: String = "phone", pairing: String? = nil, token: String? = nil, invitation: String? = nil,
                       address: String = "10.0.0.5") -> ConnectingDevice {
        ConnectingDevice(id: id, hello: DeviceHello(deviceId: id, device: DeviceDescription(name: "Ann's", model: "iPhone3,1"),
                                                    token: token, pairing: pairing, invitation: invitation), address: address)
    }

    /// A machine with these sessions open (started by a developer).
    private func open(_ records: SessionRecord..., policy: UnknownDevicePolicy = .reject) -> Machine {
        var machine = machine(policy)
        for record in records { _ = machine.started(record, now: 100) }
        return machine
    }

    private func attach(_ machine: inout Machine, _ device: ConnectingDevice, connection: UInt64 = 1, deviceToken: String? = nil,
                        limits: PairingLimits = PairingLimits(), now: Double = 1_000) -> [Action] {
        machine.attach(device, connection: connection, deviceToken: deviceToken, limits: limits, now: now)
    }

    private func events(_ actions: [Action]) -> [SessionEvent] {
        actions.compactMap { if case .publish(let event) = $0 { event } else { nil } }
    }

    private func logs(_ actions: [Action]) -> [String] {
        actions.compactMap { if case .log(_, let line) = $0 { line } else { nil } }
    }

    private func writes(_ actions: [Action]) -> [(SessionRecord, Machine.Write?)] {
        actions.compactMap { if case .update(let record, let write) = $0 { (record, write) } else { nil } }
    }

    private func attached(_ actions: [Action]) -> Int64? {
        actions.compactMap { if case .attached(let id) = $0 { id } else { nil } }.last
    }

    private func rejection(_ actions: [Action]) -> (reason: String, logged: Bool)? {
        actions.compactMap { action -> (reason: String, logged: Bool)? in
            if case .reject(let reason, let logged) = action { (reason, logged) } else { nil }
        }.last
    }

    // MARK: Start, recovery, stop, import, delete

    @Test func aStartForADeviceThatRecordsIntoAnOpenSessionIsRefused() {
        var machine = open(record(1, bound: "phone"))
        #expect(machine.startRequested(device: "phone") == .deviceBusy(device: "phone", session: 1))
        #expect(machine.startRequested(device: "tablet") == nil)
        #expect(machine.startRequested(device: nil) == nil, "a session for the next device never clashes")
        _ = attach(&machine, phone("tablet"))
        #expect(machine.startRequested(device: "tablet") == nil, "bound to phone: the tablet claimed nothing")
    }

    @Test func aStartedSessionIsOpenAnnouncedShownInTheTailAndLogged() {
        var machine = machine()
        let started = record(1, bound: "phone")
        let actions = machine.started(started, now: 100)
        #expect(machine.open[1] == .init(record: started, isAutomatic: false))
        #expect(events(actions) == [.started(started)])
        #expect(actions.contains { if case .tail(let line) = $0 { line.kind == .sessionStarted && line.session == 1 } else { false } })
        #expect(logs(actions) == ["session 1 (s1) started, waiting for device phone"])
    }

    @Test func aSessionThatWasRecordingIsRecoveredInterruptedWithAGapFromItsLastEvent() throws {
        var machine = machine()
        let actions = machine.recovered(record(1, device: "phone", state: .recording, started: 150), lastEvent: 180)
        #expect(machine.open[1]?.record.state == .interrupted)
        let (updated, write) = try #require(writes(actions).first)
        #expect(updated.state == .interrupted)
        #expect(write == Machine.Write(gap: .open(at: 180, reason: "muevald was not running")))
        #expect(logs(actions).first?.contains("interrupted until device phone reconnects") == true)
        // Without events the gap starts when the device first connected.
        #expect(writes(machine.recovered(record(2, device: "phone", state: .recording, started: 150), lastEvent: nil)).first?.1?.gap
                == .open(at: 150, reason: "muevald was not running"))
    }

    @Test func aSessionThatWasNotRecordingIsRecoveredAsItWas() {
        var machine = machine()
        let actions = machine.recovered(record(1, state: .waiting), lastEvent: nil)
        #expect(machine.open[1]?.record.state == .waiting)
        #expect(writes(actions).isEmpty)
        #expect(logs(actions) == ["session 1 (s1) is waiting again"])
    }

    @Test func aStopClosesTheSessionAtOnceAndAnnouncesThatItIsStopping() throws {
        var machine = open(record(1))
        let actions = try machine.stopRequested(1, now: 500).get()
        #expect(machine.open.isEmpty)
        let (stopping, write) = try #require(writes(actions).first)
        #expect(stopping.state == .stopped && stopping.stopped == 500)
        #expect(write == nil, "the registry finalises the file itself")
        #expect(events(actions) == [.stopping(stopping)])
        #expect(machine.stopRequested(1, now: 501) == .failure(.alreadyStopped(1)), "a second stop is refused")
    }

    @Test func aFinishedStopIsAnnouncedWithItsFinalCounts() {
        var final = record(1, state: .stopped)
        final.events = 42
        let actions = machine().stopFinished(final, now: 500)
        #expect(events(actions) == [.stopped(final)])
        #expect(logs(actions) == ["session 1 (s1) stopped: 42 events stored"])
        #expect(actions.contains { if case .tail(let line) = $0 { line.kind == .sessionStopped && line.detail == "42 events stored" } else { false } })
    }

    @Test func anImportedSessionIsAnnouncedLikeAStoppedOne() {
        let imported = record(9, state: .stopped)
        let actions = machine().imported(imported, from: "field.imut", now: 500)
        #expect(events(actions) == [.imported(imported, file: "field.imut")])
        #expect(actions.contains { if case .tail(let line) = $0 { line.kind == .sessionStopped } else { false } })
    }

    @Test func onlyAStoppedSessionMayBeDeletedAndItsDeletionIsAnnounced() {
        let machine = open(record(1))
        #expect(machine.deleteRequested(1) == .stillRecording(1))
        #expect(machine.deleteRequested(2) == nil)
        let deleted = record(2, state: .stopped)
        #expect(events(machine.deleted(deleted)) == [.deleted(deleted)])
    }

    @Test func shutdownClosesEveryOpenSession() {
        var machine = open(record(2), record(1))
        #expect(machine.shutdown() == [1, 2])
        #expect(machine.open.isEmpty)
    }

    // MARK: Claim

    @Test func withADeviceTokenADeviceWithoutTheRightOneIsRejected() {
        var machine = open(record(1))
        let missing = attach(&machine, phone(), deviceToken: "secret")
        #expect(missing.first == .count(.authenticationFailure))
        #expect(rejection(missing)?.reason == "this server needs a device token: send it in <hello> as <key>token</key>")
        #expect(rejection(attach(&machine, phone(token: "guess"), deviceToken: "secret"))?.reason == "the token in <hello> is not this server's device token")
        #expect(attached(attach(&machine, phone(token: "secret"), deviceToken: "secret")) == 1)
    }

    @Test func aDeviceClaimsTheOldestSessionWaitingForAnyDevice() {
        var machine = open(record(2), record(1))
        let actions = attach(&machine, phone())
        #expect(attached(actions) == 1)
        #expect(machine.open[1]?.record.device == "phone")
        #expect(logs(actions).first == "device phone claimed session 1")
        #expect(attached(attach(&machine, phone("tablet"), connection: 2)) == 2, "the next device takes the next one")
    }

    @Test func aDeviceRecordsIntoTheSessionBoundToItBeforeAFreeOne() {
        var machine = open(record(1), record(2, bound: "phone"))
        let actions = attach(&machine, phone())
        #expect(attached(actions) == 2)
        #expect(!logs(actions).contains { $0.contains("claimed") }, "bound, not claimed")
        #expect(machine.open[1]?.record.device == nil)
    }

    @Test func aReturningDeviceRecordsIntoTheSessionItRecordedInto() {
        var machine = open(record(1), record(2))
        _ = attach(&machine, phone(), connection: 1)
        _ = machine.detached(1, connection: 1, device: "phone", cleanly: false, now: 1_100)
        #expect(attached(attach(&machine, phone(), connection: 2)) == 1)
    }

    @Test func aSessionBoundToAnotherDeviceOrOpenedAutomaticallyIsNotClaimed() {
        var machine = open(record(1, bound: "tablet"), policy: .reject)
        #expect(rejection(attach(&machine, phone()))?.reason == "no session is waiting for device phone: start one with `muevalctl start`")
        var automatic = self.machine(.auto)
        _ = automatic.automaticSessionOpened(record(5, bound: "other"), for: phone("other"), connection: 9, now: 900)
        #expect(attach(&automatic, phone()).last == .openAutomaticSession)
    }

    @Test func attachingRecordsTheDeviceClosesTheGapAndLogsOnlyWhenRecordingBegins() throws {
        var machine = open(record(1))
        let first = attach(&machine, phone(), connection: 1, now: 1_000)
        let (updated, write) = try #require(writes(first).first)
        #expect(updated.state == .recording && updated.device == "phone" && updated.started == 1_000)
        #expect(write?.gap == .close(at: 1_000))
        #expect(write?.device?.id == "phone" && write?.device?.model == "iPhone3,1" && write?.device?.address == "10.0.0.5")
        #expect(logs(first).contains("session 1 recording from device phone"))
        #expect(events(first) == [.deviceAttached(updated, device: try #require(write?.device))])
        #expect(first.contains { if case .tail(let line) = $0 { line.detail == "Ann's, iPhone3,1, 10.0.0.5" } else { false } })
        let second = attach(&machine, phone(), connection: 2, now: 1_200)
        #expect(!logs(second).contains { $0.contains("recording from") }, "already recording")
        #expect(writes(second).first?.0.started == 1_000, "the first connection's start stays")
        #expect(machine.open[1]?.connections == [1, 2])
    }

    // MARK: Pairing

    @Test func theRightPairingCodeClaimsItsSessionWhateverWaitsBeforeIt() {
        var machine = open(record(1), record(2, code: "123456"))
        let actions = attach(&machine, phone(pairing: "123456"))
        #expect(attached(actions) == 2)
        #expect(logs(actions).first == "device phone claimed session 2")
    }

    @Test func aSessionWithAPairingCodeIsNotClaimedWithoutIt() {
        var machine = open(record(1, code: "123456"))
        #expect(rejection(attach(&machine, phone()))?.reason.hasPrefix("no session is waiting for device phone") == true)
    }

    @Test func aWebDeviceWithoutACodeGetsNoSessionEvenOneWaitingForAnyDevice() {
        var machine = open(record(1), record(2, code: "123456"), policy: .auto)
        var web = phone()
        web.mustPresentCode = true
        let refused = attach(&machine, web)
        #expect(rejection(refused)?.reason.hasPrefix("a web device must present an invitation or a pairing code") == true)
        #expect(attached(refused) == nil)
        #expect(refused.contains { if case .count(.authenticationFailure) = $0 { true } else { false } })
        // With the pairing code it records into that session; with an invitation it is looked up.
        var paired = phone(pairing: "123456")
        paired.mustPresentCode = true
        #expect(attached(attach(&machine, paired)) == 2)
        var invited = phone("invited", invitation: "2345abcdef")
        invited.mustPresentCode = true
        #expect(attach(&machine, invited).contains { if case .lookUpInvitation("2345abcdef") = $0 { true } else { false } })
    }

    @Test func aWrongPairingCodeIsCountedLoggedRationedAndRejected() {
        var machine = open(record(1, code: "123456"))
        let actions = attach(&machine, phone(pairing: "000000", address: "10.0.0.66"))
        #expect(actions.first == .count(.authenticationFailure))
        #expect(logs(actions) == ["wrong pairing code from 10.0.0.66 (1 from this address)"])
        #expect(rejection(actions)?.reason == "wrong pairing code: ask the developer for the session's code (`muevalctl status`)")
        #expect(rejection(actions)?.logged == true, "the connection does not log it again")
        #expect(machine.open[1]?.record.device == nil)
    }

    @Test func anExplicitPairingCodeWhenNoSessionHasOneIsRefusedButALegacyTokenIsNoPairingAttempt() {
        var machine = open(record(1))
        let explicit = attach(&machine, phone(pairing: "123456"))
        #expect(explicit.first == .count(.authenticationFailure))
        #expect(rejection(explicit)?.reason == "no open session has a pairing code: start one with `muevalctl start --pairing-code`")
        #expect(attached(attach(&machine, phone(token: "123456"))) == 1, "an old device's token, no server token: claims as usual")
    }

    @Test func anAddressThatSentTooManyWrongCodesIsRefusedWithoutComparing() {
        var machine = open(record(1, code: "123456"))
        for guess in 1...3 { _ = attach(&machine, phone("guesser", pairing: String(format: "%06d", guess), address: "10.0.0.66")) }
        let held = attach(&machine, phone("guesser", pairing: "123456", address: "10.0.0.66"), now: 1_000.5)
        #expect(held.first == .count(.pairingRefused))
        #expect(rejection(held)?.reason == "too many wrong pairing codes from 10.0.0.66: try again in 1 s")
        #expect(attached(attach(&machine, phone(pairing: "123456", address: "10.0.0.5"))) == 1, "another address pairs")
    }

    @Test func enoughWrongCodesGiveTheOpenSessionsNewCodes() throws {
        var machine = open(record(1, code: "123456"))
        let limits = PairingLimits(backoffAfter: 100, lockoutAfter: 100, rotateAfter: 2)
        _ = attach(&machine, phone(pairing: "000001", address: "10.0.0.1"), limits: limits)
        let actions = attach(&machine, phone(pairing: "000002", address: "10.0.0.2"), limits: limits)
        let rotated = try #require(machine.open[1]?.record)
        #expect(rotated.pairingCode == Self.newCode)
        #expect(writes(actions).first?.1 == Machine.Write(file: false), "the catalog has it; the file gets it with its next metadata")
        #expect(events(actions) == [.pairingCodesChanged([rotated])])
        #expect(logs(actions).contains { $0.contains("2 wrong pairing codes while it was open: it has a new code") })
        #expect(attached(attach(&machine, phone(pairing: Self.newCode, address: "10.0.0.5"), limits: limits)) == 1)
    }

    // MARK: Policy auto

    @Test func underPolicyAutoADeviceWithoutASessionGetsOneOpened() {
        var machine = open(record(1, bound: "tablet"), policy: .auto)
        #expect(attach(&machine, phone()).last == .openAutomaticSession)
    }

    @Test func anAutomaticSessionDueFindsTheOneAnotherConnectionOpenedMeanwhile() {
        var machine = machine(.auto)
        #expect(machine.automaticSessionDue(for: phone(), connection: 1, now: 1_000) == nil, "none yet: open one")
        _ = machine.automaticSessionOpened(record(3, bound: "phone"), for: phone(), connection: 1, now: 1_000)
        #expect(attached(machine.automaticSessionDue(for: phone(), connection: 2, now: 1_001) ?? []) == 3)
    }

    @Test func anAutomaticSessionOpenedIsAnnouncedAndRecordsAtOnce() throws {
        var machine = machine(.auto)
        let opened = record(3, bound: "phone")
        let actions = machine.automaticSessionOpened(opened, for: phone(), connection: 1, now: 1_000)
        #expect(machine.open[3]?.isAutomatic == true)
        #expect(events(actions).first == .started(opened))
        #expect(logs(actions).first == "device phone has no session: opened session 3 (policy auto)")
        #expect(attached(actions) == 3)
    }

    @Test func anAutomaticSessionThatCannotBeOpenedRejectsTheDevice() {
        let actions = machine(.auto).automaticSessionFailed(for: phone(), error: "disk full")
        #expect(logs(actions) == ["cannot open a session for device phone: disk full"])
        #expect(rejection(actions)?.reason == "the server cannot open a session: disk full")
    }

    // MARK: Detach

    @Test func aConnectionThatWasNotTheLastLeavesTheSessionRecording() {
        var machine = open(record(1))
        _ = attach(&machine, phone(), connection: 1)
        _ = attach(&machine, phone(), connection: 2)
        let actions = machine.detached(1, connection: 1, device: "phone", cleanly: true, now: 1_100)
        #expect(machine.open[1]?.record.state == .recording)
        #expect(writes(actions).isEmpty)
        #expect(events(actions).map { if case .deviceDetached(_, let device, let cleanly) = $0 { "\(device) \(cleanly)" } else { "" } } == ["phone true"])
        #expect(actions.first == .tailAfterCommits(TailLine(kind: .deviceDisconnected, session: 1, time: 1_100, device: "phone", detail: "said goodbye")))
    }

    @Test func theLastConnectionGoneInterruptsTheSessionWithAGapUnlessItSaidGoodbye() throws {
        var machine = open(record(1), record(2))
        _ = attach(&machine, phone(), connection: 1)
        _ = attach(&machine, phone("tablet"), connection: 2)
        let lost = machine.detached(1, connection: 1, device: "phone", cleanly: false, now: 1_100)
        let (interrupted, write) = try #require(writes(lost).first)
        #expect(interrupted.state == .interrupted)
        #expect(write?.gap == .open(at: 1_100, reason: "device phone disconnected without goodbye"))
        #expect(write?.device == DeviceRecord(id: "phone", firstSeen: 1_100, lastSeen: 1_100))
        #expect(logs(lost) == ["session 1 interrupted: device phone disconnected"])
        let goodbye = machine.detached(2, connection: 2, device: "tablet", cleanly: true, now: 1_200)
        #expect(writes(goodbye).first?.1?.gap == nil)
        #expect(logs(goodbye) == ["session 2 interrupted: device tablet said goodbye"])
    }

    @Test func theLastConnectionOfAnAutomaticSessionGoneStopsIt() {
        var machine = machine(.auto)
        _ = machine.automaticSessionOpened(record(3, bound: "phone"), for: phone(), connection: 1, now: 1_000)
        let actions = machine.detached(3, connection: 1, device: "phone", cleanly: true, now: 1_100)
        #expect(actions.last == .stop(3, now: 1_100))
        #expect(writes(actions).allSatisfy { $0.1 == nil }, "nothing persisted before the stop")
    }

    @Test func aConnectionOfASessionNoLongerOpenOnlyLeavesItsTailMarker() {
        var machine = open(record(1))
        _ = attach(&machine, phone(), connection: 1)
        _ = machine.stopRequested(1, now: 1_050)
        let actions = machine.detached(1, connection: 1, device: "phone", cleanly: false, now: 1_100)
        #expect(actions == [.tailAfterCommits(TailLine(kind: .deviceDisconnected, session: 1, time: 1_100, device: "phone", detail: "connection lost"))])
    }

    // MARK: Invitations

    static let code = "2345abcdef"

    private func invitation(_ status: InvitationStatus = .invited, expires: Double = 5_000, session: Int64? = nil,
                            device: String? = nil) -> Invitation {
        Invitation(code: Self.code, study: "momentree", iteration: 1, participant: "T7K2QM", status: status, created: 100,
                   expires: expires, sessionId: session, deviceId: device)
    }

    /// The session the registry opens for an invitation: the study's, bound to the device that presented it.
    private func invitedRecord(_ id: Int64, device: String = "phone") -> SessionRecord {
        var record = record(id, bound: device)
        record.study = "momentree"
        record.iteration = 1
        record.participant = "T7K2QM"
        return record
    }

    /// A machine in which `device` opened the invitation's session `id` on connection 1.
    private func invited(_ id: Int64 = 4, device: String = "phone") -> Machine {
        var machine = machine()
        _ = machine.invitedSessionOpened(invitedRecord(id, device: device), invitation: Self.code, for: phone(device), connection: 1, now: 1_000)
        return machine
    }

    @Test func aDeviceWithAnInvitationHasItLookedUpOffTheCallersThread() {
        var machine = open(record(1))
        #expect(attach(&machine, phone(invitation: Self.code)) == [.lookUpInvitation(Self.code)])
        #expect(machine.open[1]?.record.device == nil, "an invited device claims no waiting session")
    }

    @Test func aFirstUseOfAnInvitationOpensItsStudySession() {
        var machine = machine()
        let found = machine.invitationFound(invitation(), code: Self.code, for: phone(invitation: Self.code), connection: 1,
                                            limits: PairingLimits(), now: 1_000)
        #expect(found == [.openInvitedSession(invitation())])
        let opened = invitedRecord(4)
        let actions = machine.invitedSessionOpened(opened, invitation: Self.code, for: phone(), connection: 1, now: 1_000)
        #expect(machine.open[4]?.invitation == Self.code)
        #expect(machine.open[4]?.isAutomatic == false, "it outlives its connection")
        #expect(events(actions).first == .started(opened))
        #expect(logs(actions).first == "device phone joined study momentree as participant T7K2QM by invitation: opened session 4 (s4)")
        #expect(attached(actions) == 4)
        #expect(actions.last == .storeInvitation(InvitationTransition(code: Self.code, from: [.accepted], to: .recording)))
    }

    @Test func theInvitedDeviceReconnectingRecordsIntoItsOpenSession() {
        var machine = invited()
        _ = machine.detached(4, connection: 1, device: "phone", cleanly: false, now: 1_100)
        let actions = attach(&machine, phone(invitation: Self.code), connection: 2, now: 1_200)
        #expect(attached(actions) == 4, "no catalog look-up for an open session")
        #expect(machine.open[4]?.record.state == .recording)
        // Its look-up, queued before the session opened, finds it open as well.
        #expect(attached(machine.invitationFound(invitation(.recording, session: 4, device: "phone"), code: Self.code,
                                                 for: phone(invitation: Self.code), connection: 3, limits: PairingLimits(), now: 1_300)) == 4)
    }

    @Test func anotherDevicePresentingAnInvitationInUseIsRefused() {
        var machine = invited()
        let actions = attach(&machine, phone("tablet", invitation: Self.code), connection: 2)
        #expect(rejection(actions)?.reason == "this invitation is in use by another phone")
        #expect(machine.open[4]?.connections == [1])
        // Bound in the catalog, its session not open (yet): the same answer.
        var fresh = self.machine()
        let bound = fresh.invitationFound(invitation(.accepted, session: 4, device: "phone"), code: Self.code,
                                          for: phone("tablet", invitation: Self.code), connection: 2, limits: PairingLimits(), now: 1_000)
        #expect(rejection(bound)?.reason == "this invitation is in use by another phone")
        #expect(!bound.contains(.count(.authenticationFailure)), "the right code: no guess")
    }

    @Test func anInvitedSessionIsClaimedByNoOtherDevice() {
        var machine = invited()
        _ = machine.detached(4, connection: 1, device: "phone", cleanly: true, now: 1_100)
        #expect(rejection(attach(&machine, phone("tablet")))?.reason == "no session is waiting for device tablet: start one with `muevalctl start`")
        #expect(machine.startRequested(device: "phone") == .deviceBusy(device: "phone", session: 4))
    }

    @Test func anUnknownOrExpiredInvitationIsAWrongCodeCountedAgainstTheAddress() {
        var machine = machine()
        let unknown = machine.invitationFound(nil, code: Self.code, for: phone(invitation: Self.code, address: "10.0.0.66"), connection: 1,
                                              limits: PairingLimits(), now: 1_000)
        #expect(unknown.first == .count(.authenticationFailure))
        #expect(logs(unknown) == ["wrong invitation code from 10.0.0.66 (1 from this address)"])
        #expect(rejection(unknown)?.reason == "unknown or expired invitation: check the code, or ask the study's organiser for a new one")
        #expect(rejection(unknown)?.logged == true)
        let expired = machine.invitationFound(invitation(expires: 999), code: Self.code, for: phone(invitation: Self.code, address: "10.0.0.67"),
                                              connection: 1, limits: PairingLimits(), now: 1_000)
        #expect(expired.contains(.count(.authenticationFailure)))
        #expect(rejection(expired)?.reason.hasPrefix("unknown or expired invitation") == true)
        #expect(expired.contains(.storeInvitation(InvitationTransition(code: Self.code, from: [.invited], to: .expired))), "the catalog learns it expired")
        #expect(rejection(machine.invitationFound(invitation(.expired), code: Self.code, for: phone(invitation: Self.code), connection: 1,
                                                  limits: PairingLimits(), now: 1_000))?.reason.hasPrefix("unknown or expired") == true)
        // Not a code's form: refused without asking the catalog.
        let malformed = attach(&machine, phone(invitation: "x'; --", address: "10.0.0.68"))
        #expect(malformed.first == .count(.authenticationFailure))
        #expect(!malformed.contains { if case .lookUpInvitation = $0 { true } else { false } })
    }

    @Test func anAddressWithTooManyWrongCodesIsRefusedWithoutALookUp() {
        var machine = open(record(1, code: "123456"))
        // Pairing codes and invitations count together: one guesser, one limit.
        _ = attach(&machine, phone("guesser", pairing: "000001", address: "10.0.0.66"))
        for guess in ["2345abcde2", "2345abcde3"] {
            _ = machine.invitationFound(nil, code: guess, for: phone("guesser", address: "10.0.0.66"), connection: 1,
                                        limits: PairingLimits(), now: 1_000)
        }
        let held = attach(&machine, phone("guesser", invitation: Self.code, address: "10.0.0.66"), now: 1_000.5)
        #expect(held.first == .count(.pairingRefused))
        #expect(rejection(held)?.reason == "too many wrong invitation codes from 10.0.0.66: try again in 1 s")
        #expect(attach(&machine, phone(invitation: Self.code, address: "10.0.0.5")) == [.lookUpInvitation(Self.code)], "another address is asked")
    }

    @Test func aWithdrawnUsedOrEndedInvitationIsRefusedWithItsReason() {
        var machine = machine()
        func found(_ invitation: Invitation) -> [Action] {
            machine.invitationFound(invitation, code: Self.code, for: phone(invitation: Self.code), connection: 1, limits: PairingLimits(), now: 1_000)
        }
        #expect(rejection(found(invitation(.withdrawn)))?.reason == "this invitation was withdrawn: its tester left the study's pool")
        #expect(rejection(found(invitation(.done, session: 4, device: "phone")))?.reason
                == "this invitation was used: its session has ended; ask the study's organiser for a new one")
        #expect(rejection(found(invitation(.recording, session: 4, device: "phone")))?.reason
                == "this invitation's session has ended; ask the study's organiser for a new one")
        #expect(!found(invitation(.withdrawn)).contains(.count(.authenticationFailure)), "a right code: no guess counted")
    }

    @Test func anInvitedSessionThatCannotBeOpenedRejectsTheDevice() {
        let actions = machine().invitedSessionFailed(for: phone(), error: "disk full")
        #expect(logs(actions) == ["cannot open the invited session of device phone: disk full"])
        #expect(rejection(actions)?.reason == "the server cannot open the invitation's session: disk full")
    }

    @Test func stoppingAnInvitedSessionMarksItsInvitationDone() throws {
        var machine = invited()
        let actions = try machine.stopRequested(4, now: 2_000).get()
        #expect(actions.last == .storeInvitation(InvitationTransition(code: Self.code, from: [.accepted, .recording], to: .done)))
        var plain = open(record(1))
        #expect(try !plain.stopRequested(1, now: 2_000).get().contains { if case .storeInvitation = $0 { true } else { false } })
    }

    @Test func anInvitedSessionStopsWhenItsDeviceSaysGoodbyeAndIsInterruptedWhenItIsLost() {
        var lost = invited()
        let interrupted = lost.detached(4, connection: 1, device: "phone", cleanly: false, now: 1_100)
        #expect(!interrupted.contains { if case .stop = $0 { true } else { false } }, "it may come back")
        #expect(lost.open[4]?.record.state == .interrupted)
        var finished = invited()
        let goodbye = finished.detached(4, connection: 1, device: "phone", cleanly: true, now: 1_100)
        #expect(goodbye.last == .stop(4, now: 1_100))
        #expect(writes(goodbye).allSatisfy { $0.1 == nil }, "nothing persisted before the stop")
    }

    @Test func anInvitedSessionWhoseDeviceStaysAwayStopsAfterTheIdleTime() {
        var machine = invited()
        _ = machine.started(record(1), now: 900)
        #expect(machine.idleInvitedSessions(idleAfter: 600, now: 5_000).isEmpty, "its device is connected")
        _ = machine.detached(4, connection: 1, device: "phone", cleanly: false, now: 1_100)
        #expect(machine.idleInvitedSessions(idleAfter: 600, now: 1_699).isEmpty)
        let idle = machine.idleInvitedSessions(idleAfter: 600, now: 1_700)
        #expect(idle.last == .stop(4, now: 1_700), "only the invited session: nobody is there to stop it")
        #expect(logs(idle) == ["session 4 (s4): its invited device has been away for 600 s: stopped"])
        _ = attach(&machine, phone(invitation: Self.code), connection: 2, now: 1_650)
        #expect(machine.idleInvitedSessions(idleAfter: 600, now: 9_000).isEmpty, "back in time")
        // After a restart its device has the whole idle time from then to come back.
        var restarted = self.machine()
        _ = restarted.recovered(invitedRecord(4), lastEvent: 100, invitation: Self.code, now: 10_000)
        #expect(restarted.idleInvitedSessions(idleAfter: 600, now: 10_500).isEmpty)
        #expect(restarted.idleInvitedSessions(idleAfter: 600, now: 10_600).last == .stop(4, now: 10_600))
    }

    @Test func aRecoveredInvitedSessionKeepsItsInvitation() throws {
        var machine = machine()
        var recovered = invitedRecord(4)
        recovered.device = "phone"
        recovered.state = .recording
        _ = machine.recovered(recovered, lastEvent: 1_500, invitation: Self.code)
        #expect(attached(attach(&machine, phone(invitation: Self.code), now: 2_000)) == 4)
        #expect(try machine.stopRequested(4, now: 2_100).get().last == .storeInvitation(InvitationTransition(code: Self.code, from: [.accepted, .recording], to: .done)))
    }
}
