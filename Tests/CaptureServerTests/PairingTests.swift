@testable import CaptureServer
@testable import SessionCore
import Foundation
import JournalStorage
import Logging
import MuEvalWire
import NIOCore
import NIOEmbedded
import SessionModel
import Testing
import WireProtocol

/// Pairing through the registry (and one connection handler): wrong codes limited per address and
/// per session, and a device token needed beside the code when one is configured.
@Suite struct PairingTests {
    /// A session started with `--pairing-code`, and its code.
    private func pairedSession(_ temporary: TemporaryRegistry, _ name: String = "paired") async throws -> (EvaluationSession, String) {
        let record = try await temporary.registry.start(name: name, testUser: nil, notes: nil, sensors: [], device: nil,
                                                        pairing: true, now: Date().timeIntervalSince1970)
        let session = try #require(temporary.registry.openSessions().first { $0.id == record.id })
        return (session, try #require(record.pairingCode))
    }

    private func attach(_ temporary: TemporaryRegistry, device: String = "phone", token: String? = nil, pairing: String? = nil,
                        address: String, deviceToken: String? = nil, limits: PairingLimits = PairingLimits(),
                        now: Double = 1000) -> AttachOutcome {
        temporary.registry.attach(ConnectingDevice(id: device, hello: DeviceHello(deviceId: device, token: token, pairing: pairing), address: address),
                                  connection: 1, deviceToken: deviceToken, pairingLimits: limits, now: now) { _ in }
    }

    /// Six-digit codes that are not `code`.
    private func wrongCodes(besides code: String, count: Int) -> [String] {
        let right = Int(code) ?? 0
        return (1...count).map { String(format: "%06d", (right + $0) % 1_000_000) }
    }

    private func reason(_ outcome: AttachOutcome) -> (String, logged: Bool)? {
        if case .rejected(let reason, let logged) = outcome { return (reason, logged) }
        return nil
    }

    @Test func aGuessingAddressIsRefusedUnreadWhileThePhoneElsewherePairs() async throws {
        let temporary = try TemporaryRegistry()
        let (session, code) = try await pairedSession(temporary)
        let guesses = wrongCodes(besides: code, count: 3)
        let answers = guesses.map { reason(attach(temporary, device: "guesser", pairing: $0, address: "10.0.0.66")) }
        #expect(answers.allSatisfy { $0?.0.hasPrefix("wrong pairing code") == true && $0?.logged == true }, "\(answers)")
        #expect(answers.last??.0.contains("3 wrong codes from 10.0.0.66: the next attempt in 1 s") == true, "\(answers)")
        // Now even the right code is not compared.
        let held = reason(attach(temporary, device: "guesser", pairing: code, address: "10.0.0.66", now: 1000.5))
        #expect(held?.0 == "too many wrong pairing codes from 10.0.0.66: try again in 1 s")
        #expect(session.snapshot.device == nil, "the guesser never claimed the session")
        #expect(temporary.counters.pairingRefused.load(ordering: .relaxed) == 1)
        #expect(temporary.counters.authenticationFailures.load(ordering: .relaxed) == 3)

        guard case .attached(let attached) = attach(temporary, pairing: code, address: "10.0.0.5") else {
            Issue.record("the phone pairs from its own address"); return
        }
        #expect(attached.id == session.id)
        #expect(session.snapshot.device == "phone")
        await temporary.cleanUp()
    }

    @Test func withADeviceTokenTheCodeAloneIsNotEnough() async throws {
        let temporary = try TemporaryRegistry()
        let (session, code) = try await pairedSession(temporary)
        let secret = "lab-secret-42"
        // The old way: the code in `token`. It is compared with the device token only.
        #expect(reason(attach(temporary, token: code, address: "10.0.0.5", deviceToken: secret))?.0
            == "the token in <hello> is not this server's device token")
        #expect(reason(attach(temporary, pairing: code, address: "10.0.0.5", deviceToken: secret))?.0.contains("needs a device token") == true)
        // The token without the code: the paired session stays out of reach.
        #expect(reason(attach(temporary, token: secret, address: "10.0.0.5", deviceToken: secret))?.0.contains("no session is waiting") == true)
        // The token and a wrong code: a wrong code like any other.
        let wrong = try #require(wrongCodes(besides: code, count: 1).first)
        #expect(reason(attach(temporary, token: secret, pairing: wrong, address: "10.0.0.5", deviceToken: secret))?.0
            .hasPrefix("wrong pairing code") == true)
        guard case .attached(let attached) = attach(temporary, token: secret, pairing: code, address: "10.0.0.5", deviceToken: secret) else {
            Issue.record("token and code pair"); return
        }
        #expect(attached.id == session.id)
        await temporary.cleanUp()
    }

    @Test func withoutADeviceTokenACodeInTokenStillPairs() async throws {
        let temporary = try TemporaryRegistry()
        let (session, code) = try await pairedSession(temporary)
        let open = try await temporary.start("open")
        guard case .attached(let attached) = attach(temporary, token: code, address: "10.0.0.5") else {
            Issue.record("a device from before `pairing` pairs"); return
        }
        #expect(attached.id == session.id)
        // A token that is no code claims no session while codes are open: it counts as a guess.
        #expect(reason(attach(temporary, device: "other", token: "not-a-code", address: "10.0.0.9"))?.0.hasPrefix("wrong pairing code") == true)
        #expect(open.snapshot.device == nil)
        await temporary.cleanUp()
    }

    @Test func anExplicitCodeWithNoSessionToPairWithIsRefusedButNoGuess() async throws {
        let temporary = try TemporaryRegistry()
        _ = try await temporary.start("open")
        let answer = reason(attach(temporary, pairing: "123456", address: "10.0.0.5"))
        #expect(answer?.0.contains("no open session has a pairing code") == true)
        #expect(answer?.logged == false, "the connection logs it: no guess was made")
        // Without codes open a token is just a token, as before (no device token configured).
        guard case .attached = attach(temporary, token: "anything", address: "10.0.0.5") else {
            Issue.record("claims the open session"); return
        }
        await temporary.cleanUp()
    }

    @Test func aSessionGetsANewCodeAfterTooManyWrongOnesAndTheCatalogKeepsIt() async throws {
        let temporary = try TemporaryRegistry()
        let (session, code) = try await pairedSession(temporary)
        let limits = PairingLimits(rotateAfter: 3)
        for (index, guess) in wrongCodes(besides: code, count: 3).enumerated() {
            _ = attach(temporary, device: "guesser-\(index)", pairing: guess, address: "10.0.1.\(index)", limits: limits)
        }
        let rotated = try #require(session.snapshot.pairingCode)
        #expect(rotated != code)
        #expect(rotated.count == 6)
        #expect(try temporary.registry.sessions().first { $0.id == session.id }?.pairingCode == rotated, "status and the console show it")
        #expect(try await waitUntil { try Catalog(directory: temporary.directory).session(id: session.id)?.pairingCode == rotated },
                "persisted, so a restart keeps it")
        #expect(reason(attach(temporary, pairing: code, address: "10.0.0.5", limits: limits))?.0.hasPrefix("wrong pairing code") == true)
        guard case .attached(let attached) = attach(temporary, pairing: rotated, address: "10.0.0.5", limits: limits) else {
            Issue.record("the new code pairs"); return
        }
        #expect(attached.id == session.id)
        await temporary.cleanUp()
    }

    /// Through a connection: the hello's wrong code gets an `<error>`; the events the device sends
    /// after it retry the same code, which costs no further guesses.
    @Test func aConnectionRepeatingItsWrongCodeWithEachEventMakesOneGuess() async throws {
        let temporary = try TemporaryRegistry()
        let (session, code) = try await pairedSession(temporary)
        let channel = try await NIOAsyncTestingChannel { channel in
            try channel.pipeline.syncOperations.addHandler(DeviceConnectionHandler(
                registry: temporary.registry, connections: temporary.connections, ledger: temporary.ledger, counters: temporary.counters,
                configuration: CaptureConfiguration(), partialBudget: PartialMessageBudget(limit: 1 << 20), logger: Logger(label: "test")))
        }
        try await channel.connect(to: try SocketAddress(ipAddress: "10.0.0.66", port: 40000)).get()
        let wrong = try #require(wrongCodes(besides: code, count: 1).first)
        let hello = String(decoding: WireEncoder.hello(DeviceHello(deviceId: "guesser", pairing: wrong)), as: UTF8.self)
        try await channel.writeInbound(channel.allocator.buffer(string: hello + (1...10).map { eventXML(seq: $0) }.joined()))
        var bytes: [UInt8] = []
        while let buffer = try await channel.readOutbound(as: ByteBuffer.self) { bytes += Array(buffer.readableBytesView) }
        let errors = replies(bytes).compactMap { message -> WireReplyError? in
            if case .error(let error) = message { return error }
            return nil
        }
        #expect(errors.count == 11, "the hello and each event: \(errors)")
        #expect(errors.allSatisfy { $0.reason.hasPrefix("wrong pairing code") }, "never held back: one guess, \(errors)")
        #expect(errors.dropFirst().map(\.seq) == (1...10).map { Int64($0) })
        #expect(session.snapshot.device == nil)
        _ = try await channel.finish()
        await temporary.cleanUp()
    }
}
