import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import MuEvalWire
import SessionModel
import WireProtocol
import XCTest

/// Guessing a six-digit pairing code against the real muevald, as someone on the lab's Wi-Fi would:
/// one connection per code from 127.0.0.2 (Linux's loopback takes any 127/8 source address), while
/// the tester's phone pairs from 127.0.0.1.
final class PairingBruteForceTests: XCTestCase {
    private func event(_ seq: Int) -> [UInt8] {
        WireEncoder.event(["class": .string("UserInputEvent"), "seq": .integer(Int64(seq)), "x": .integer(1), "y": .integer(2)])
    }

    /// Starts a session with a pairing code; returns its code.
    private func startPaired(_ daemon: TestDaemon, name: String) throws -> String {
        let started = try daemon.muevalctl(["start", "--name", name, "--pairing-code"])
        XCTAssertEqual(started.status, 0, started.stderr)
        // "pairing code 123456: enter it on the device"
        let code = started.stdout.split(separator: "\n").last.flatMap { $0.split(separator: " ").dropFirst(2).first }.map { String($0.dropLast()) }
        return try XCTUnwrap(code, started.stdout)
    }

    /// Six-digit codes that are not `code`.
    private func wrongCodes(besides code: String, count: Int) -> [String] {
        let right = Int(code) ?? 0
        return (1...count).map { String(format: "%06d", (right + $0) % 1_000_000) }
    }

    /// One connection from `source` presenting `hello`: the first reply, welcome or error.
    private func attempt(_ daemon: TestDaemon, from source: String, _ hello: DeviceHello) async throws -> WireMessage {
        let device = try await daemon.connectDevice(from: source)
        try await device.hello(hello)
        let reply = try await device.waitFor("a reply to the hello") { replies in replies.first }
        await device.close()
        return reply
    }

    private func errorReason(_ message: WireMessage) -> String? {
        if case .error(let error) = message { return error.reason }
        return nil
    }

    func testABruteForceFromOneAddressIsRefusedWhileThePhoneFromAnotherPairs() async throws {
        // The defaults but a first wait of 60 s, longer than the burst: after the 3 free guesses no
        // wait runs out mid-burst, so which attempts are compared does not depend on the machine's
        // speed. (The defaults' rates are in PairingGuardTests, on a simulated clock.)
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("pairing-\(UUID().uuidString.prefix(8)).toml").path
        try "[server]\npairing_backoff_seconds = 60\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        defer { daemon.cleanUp() }
        let code = try startPaired(daemon, name: "lab")

        // 150 codes, one connection each, the right one last: today's attack, which paired in 0.1 s.
        let codes = wrongCodes(besides: code, count: 149) + [code]
        let started = Date()
        var answers: [WireMessage] = []
        for guess in codes {
            answers.append(try await attempt(daemon, from: "127.0.0.2", DeviceHello(deviceId: "intruder", pairing: guess)))
        }
        let elapsed = Date().timeIntervalSince(started)
        let reasons = answers.compactMap(errorReason)
        XCTAssertEqual(reasons.count, codes.count, "no welcome: \(answers.filter { errorReason($0) == nil })")
        let compared = reasons.filter { $0.hasPrefix("wrong pairing code") }.count
        let heldBack = reasons.filter { $0.hasPrefix("too many wrong pairing codes from 127.0.0.2: try again in ") }.count
        XCTAssertEqual(compared + heldBack, codes.count, "\(Set(reasons))")
        XCTAssertLessThan(elapsed, 60, "the burst outlasted the first wait")
        XCTAssertEqual(compared, 3, "3 free guesses, then the wait")
        XCTAssertTrue(reasons.last?.hasPrefix("too many wrong pairing codes") == true, "the right code is not even compared: \(reasons.last ?? "")")
        print("pairing brute force: \(codes.count) attempts from one address in \(String(format: "%.2f", elapsed)) s, \(compared) compared, \(heldBack) held back")

        // The phone, from its own address, with the right code.
        let phone = try await daemon.connectDevice(from: "127.0.0.1")
        try await phone.hello(DeviceHello(deviceId: "tester-phone", pairing: code))
        let welcome = try await phone.waitFor("welcome") { _ in phone.welcome }
        XCTAssertEqual(welcome.sessionId, "1")
        for seq in 1...3 { try await phone.send(event(seq)) }
        try await phone.waitForAck(3)

        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertEqual(status.sessions.first?.device, "tester-phone")
        XCTAssertEqual(status.sessions.first?.events, 3)
        XCTAssertEqual(status.counters.pairingRefused, heldBack)
        XCTAssertEqual(status.counters.authenticationFailures, compared)
        // Each compared guess is logged with its address; the held-back ones are counted, not logged.
        let logged = daemon.log.components(separatedBy: "wrong pairing code from 127.0.0.2").count - 1
        XCTAssertEqual(logged, compared, daemon.log)
        let text = try daemon.muevalctl(["status"])
        XCTAssertTrue(text.stdout.contains("\(compared) wrong token or pairing code, \(heldBack) pairing attempts held back"), text.stdout)
        XCTAssertTrue(text.stdout.contains("pairing codes       session 1 \(code)"), text.stdout)
        await phone.close()
    }

    func testWithADeviceTokenAPairedSessionNeedsTheTokenAndTheCode() async throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("pairing-\(UUID().uuidString.prefix(8)).toml").path
        try "[server]\ndevice_token = \"lab-secret-42\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        defer { daemon.cleanUp() }
        let code = try startPaired(daemon, name: "guarded")

        // The code alone, in either key, no longer gets past the device token.
        let inToken = try await attempt(daemon, from: "127.0.0.1", DeviceHello(deviceId: "phone", token: code))
        XCTAssertEqual(errorReason(inToken), "the token in <hello> is not this server's device token")
        let inPairing = try await attempt(daemon, from: "127.0.0.1", DeviceHello(deviceId: "phone", pairing: code))
        XCTAssertTrue(errorReason(inPairing)?.contains("needs a device token") == true, "\(inPairing)")

        // muevalsim with both records its whole run into the paired session.
        let simulated = try runProcess(TestDaemon.executable("muevalsim"),
                                       ["--connect", "127.0.0.1:\(daemon.port)", "--token", "lab-secret-42", "--pairing-code", code,
                                        "--scenario", "plainnote", "--rate", "max", "--events", "50", "--seed", "7", "--json"], timeout: 120)
        XCTAssertEqual(simulated.status, 0, simulated.stdout + simulated.stderr)
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(sessions.first?.events, 50)
    }

    func testAfterTooManyWrongCodesFromAnywhereTheSessionGetsANewCode() async throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("pairing-\(UUID().uuidString.prefix(8)).toml").path
        try "[server]\npairing_rotate_after = 5\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        defer { daemon.cleanUp() }
        let code = try startPaired(daemon, name: "rotating")

        // Five addresses, one guess each: no address is held back, but the session's code changes.
        for (index, guess) in wrongCodes(besides: code, count: 5).enumerated() {
            let answer = try await attempt(daemon, from: "127.0.0.\(10 + index)", DeviceHello(deviceId: "intruder-\(index)", pairing: guess))
            XCTAssertTrue(errorReason(answer)?.hasPrefix("wrong pairing code") == true, "\(answer)")
        }
        let status = try await daemon.ctl.call(ControlRequest.Status())
        let rotated = try XCTUnwrap(status.sessions.first?.pairingCode)
        XCTAssertNotEqual(rotated, code)
        XCTAssertTrue(try daemon.muevalctl(["status"]).stdout.contains("pairing codes       session 1 \(rotated)"))
        XCTAssertTrue(daemon.log.contains("it has a new code"), daemon.log)

        let old = try await attempt(daemon, from: "127.0.0.1", DeviceHello(deviceId: "phone", pairing: code))
        XCTAssertTrue(errorReason(old)?.hasPrefix("wrong pairing code") == true, "\(old)")
        let phone = try await daemon.connectDevice(from: "127.0.0.1")
        try await phone.hello(DeviceHello(deviceId: "phone", pairing: rotated))
        let welcome = try await phone.waitFor("welcome") { _ in phone.welcome }
        XCTAssertEqual(welcome.sessionId, "1")
        await phone.close()
        // The new code survives a restart (it is in the catalog).
        try await daemon.restart()
        let after = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(after.first?.pairingCode, rotated)
    }
}
