import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import SessionModel
import WireProtocol
import XCTest

/// On an open lab Wi-Fi anyone can connect: a device token, or a session's pairing code, keeps
/// strangers' events out of the recordings.
final class DeviceAuthenticationTests: XCTestCase {
    private func event(_ seq: Int) -> [UInt8] {
        WireEncoder.event(["class": .string("UserInputEvent"), "seq": .integer(Int64(seq)), "x": .integer(1), "y": .integer(2)])
    }

    func testWithADeviceTokenOnlyDevicesPresentingItAreRecorded() async throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("auth-\(UUID().uuidString.prefix(8)).toml").path
        try "[server]\ndevice_token = \"lab-secret-42\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "guarded"))

        // No hello at all (nc-style), a hello without a token, a wrong token: 5 events each, none stored.
        let anonymous = try await daemon.connectDevice()
        let tokenless = try await daemon.connectDevice()
        try await tokenless.hello(DeviceHello(deviceId: "tokenless"))
        let guessing = try await daemon.connectDevice()
        try await guessing.hello(DeviceHello(deviceId: "guessing", token: "lab-secret-41"))
        for device in [anonymous, tokenless, guessing] {
            for seq in 1...5 { try await device.send(event(seq)) }
        }
        for device in [anonymous, tokenless, guessing] {
            let errors = try await device.waitFor("errors for every event") { _ in device.errors.count >= 5 ? device.errors : nil }
            XCTAssertTrue(errors.contains { $0.reason.contains("token") }, "\(errors)")
        }
        XCTAssertNil(anonymous.welcome)

        // The right token: recorded.
        let member = try await daemon.connectDevice()
        try await member.hello(DeviceHello(deviceId: "member", token: "lab-secret-42"))
        for seq in 1...5 { try await member.send(event(seq)) }
        try await member.waitForAck(5)

        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertEqual(status.sessions.first?.device, "member", "strangers did not claim the session")
        XCTAssertGreaterThanOrEqual(status.counters.authenticationFailures, 3)
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: "guarded"))
        let stored = try SessionReader(path: session.path).events()
        XCTAssertEqual(stored.count, 5)
        XCTAssertEqual(Set(stored.map(\.device)), ["member"])
        // The token is not written into the recording.
        let file = try Data(contentsOf: URL(fileURLWithPath: session.path))
        XCTAssertNil(file.range(of: Data("lab-secret-42".utf8)))
        for device in [anonymous, tokenless, guessing, member] { await device.close() }
    }

    func testAPairingCodeSessionTakesOnlyTheDeviceThatPresentsItsCode() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let started = try daemon.muevalctl(["start", "--name", "paired", "--pairing-code"])
        XCTAssertEqual(started.status, 0, started.stderr)
        let lines = started.stdout.split(separator: "\n")
        XCTAssertEqual(lines.first, "1")
        let code = try XCTUnwrap(lines.last?.split(separator: " ").dropFirst(2).first.map { String($0.dropLast()) })
        XCTAssertEqual(code.count, 6, started.stdout)

        // A device without the code finds no session to record into.
        let stranger = try await daemon.connectDevice()
        try await stranger.hello(DeviceHello(deviceId: "stranger"))
        try await stranger.send(event(1))
        let refusal = try await stranger.waitFor("a refusal") { _ in stranger.errors.first }
        XCTAssertTrue(refusal.reason.contains("no session"), refusal.reason)

        let tester = try await daemon.connectDevice()
        try await tester.hello(DeviceHello(deviceId: "tester-phone", token: code))
        let welcome = try await tester.waitFor("welcome") { _ in tester.welcome }
        XCTAssertEqual(welcome.sessionId, "1")
        try await tester.send(event(1))
        try await tester.waitForAck(1)
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(sessions.first?.device, "tester-phone")
        XCTAssertEqual(sessions.first?.events, 1)
        // muevalsim presents a code too: a second paired session gets the simulator's whole run.
        let second = try daemon.muevalctl(["start", "--name", "paired-sim", "--pairing-code"])
        let secondCode = String(second.stdout.split(separator: "\n").last?.split(separator: " ")[2].dropLast() ?? "")
        let simulated = try runProcess(TestDaemon.executable("muevalsim"),
                                       ["--connect", "127.0.0.1:\(daemon.port)", "--token", secondCode, "--scenario", "plainnote",
                                        "--rate", "max", "--events", "50", "--seed", "7", "--json"], timeout: 120)
        XCTAssertEqual(simulated.status, 0, simulated.stdout + simulated.stderr)
        let afterRun = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(afterRun.first { $0.name == "paired-sim" }?.events, 50)
        // The code stays out of the portable session file.
        XCTAssertNil(try SessionReader(path: sessions[0].path).session()?.pairingCode)
        await stranger.close()
        await tester.close()
    }
}
