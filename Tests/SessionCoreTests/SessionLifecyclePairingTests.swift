@testable import SessionCore
import MuEvalWire
import SessionModel
import Testing

/// Pairing codes: the right code claims its session, wrong ones are counted, rationed and refused per address.
/// The helpers are the suite's (SessionLifecycleStateMachineTests.swift).
extension SessionLifecycleStateMachineTests {

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
}
