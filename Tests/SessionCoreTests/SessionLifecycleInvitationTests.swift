@testable import SessionCore
import MuEvalWire
import SessionModel
import Testing

/// Invitations (docs/STUDIES.md): a study's session opened, claimed, refused and stopped by the device that
/// presents its code. The helpers are the suite's (SessionLifecycleStateMachineTests.swift).
extension SessionLifecycleStateMachineTests {

    static let code = "2345abcdef"

    func invitation(_ status: InvitationStatus = .invited, expires: Double = 5_000, session: Int64? = nil,
                            device: String? = nil) -> Invitation {
        Invitation(code: Self.code, study: "momentree", iteration: 1, participant: "T7K2QM", status: status, created: 100,
                   expires: expires, sessionId: session, deviceId: device)
    }

    /// The session the registry opens for an invitation: the study's, bound to the device that presented it.
    func invitedRecord(_ id: Int64, device: String = "phone") -> SessionRecord {
        var record = record(id, bound: device)
        record.study = "momentree"
        record.iteration = 1
        record.participant = "T7K2QM"
        return record
    }

    /// A machine in which `device` opened the invitation's session `id` on connection 1.
    func invited(_ id: Int64 = 4, device: String = "phone") -> Machine {
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
