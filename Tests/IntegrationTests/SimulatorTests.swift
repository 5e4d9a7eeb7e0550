import ControlClient
import ControlProtocol
import DaemonTestSupport
import DeviceSimulator
import Foundation
import JournalStorage
import SessionModel
import WireProtocol
import XCTest
import Zeroconf

/// muevalsim against the real muevald: what it sends is what the session holds, exactly once, even when the
/// daemon is killed and restarted in the middle of a run.
final class SimulatorTests: XCTestCase {
    /// The events muevalsim sends with these arguments, as the daemon decodes them (payload per seq).
    private func expectedPayloads(scenario: String, seed: UInt64, events: Int? = nil,
                                  behaviour: ParticipantBehaviour = .ideal) throws -> [Int64: String] {
        var options = SimulationOptions(scenario: try ScenarioLoader.load(scenario), epoch: 1_298_155_386)
        options.seed = seed
        options.events = events
        options.behaviour = behaviour
        var decoder = WireDecoder()
        decoder.append(Simulation.plannedEvents(options, device: 0).flatMap(\.bytes))
        var payloads: [Int64: String] = [:]
        while let result = decoder.next() {
            guard case .event(let event) = try result.get(), let seq = event.seq else { continue }
            payloads[seq] = String(decoding: event.payload, as: UTF8.self)
        }
        return payloads
    }

    private func deviceId(scenario: String, seed: UInt64) throws -> String {
        var options = SimulationOptions(scenario: try ScenarioLoader.load(scenario), epoch: 1_298_155_386)
        options.seed = seed
        return EventStream(options, device: 0).profile.deviceId
    }

    /// Every stored event once, in seq order, with exactly the payload that was sent.
    private func assertSessionHoldsExactly(_ expected: [Int64: String], path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let stored = try SessionReader(path: path).events()
        XCTAssertEqual(stored.compactMap(\.seq), (1...Int64(expected.count)).map { $0 }, "each seq once", file: file, line: line)
        for event in stored where event.payload != expected[event.seq ?? 0] {
            XCTFail("seq \(event.seq ?? 0) stored differs from what was sent", file: file, line: line)
            break
        }
    }

    private func report(_ output: String) throws -> SimulationReport {
        try JSONDecoder().decode(SimulationReport.self, from: Data(output.utf8))
    }

    func testAScenarioRunLandsInTheSessionWithExactlyTheEventsSent() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "plainnote"))

        let run = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "plainnote", "--seed", "5", "--rate", "max", "--json",
        ])
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        let total = try report(run.stdout).total
        let expected = try expectedPayloads(scenario: "plainnote", seed: 5)
        XCTAssertEqual(total.generated, expected.count)
        XCTAssertEqual(total.acknowledged, expected.count)
        XCTAssertEqual(total.resent, 0)
        XCTAssertEqual(total.rejected, 0)
        XCTAssertEqual(total.sessions, [String(session.id)])
        XCTAssertEqual(total.perClass.values.reduce(0, +), expected.count)

        let stopped = try await daemon.ctl.call(ControlRequest.StopSessions(session: "plainnote"))
        XCTAssertEqual(stopped.first?.events, Int64(expected.count))
        try assertSessionHoldsExactly(expected, path: session.path)
        // The goodbye ended the connection on purpose: no gap in the session.
        XCTAssertEqual(try SessionReader(path: session.path).gaps().count, 0)
        let device = try SessionReader(path: session.path).devices().first
        let id = try deviceId(scenario: "plainnote", seed: 5)
        XCTAssertEqual(device?.id, id)
        XCTAssertEqual(device?.model, "iPhone3,1")
    }

    func testAStudyParticipantsFlagsShapeWhatTheSessionHolds() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "participant"))

        let run = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "wordpress", "--seed", "8", "--rate", "max", "--json",
            "--fail-task", "Publish blog posting", "--abandon-task", "Open the blog", "--wander", "0.3", "--misclick-rate", "0.2",
            "--think-scale", "1.5",
        ])
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        var behaviour = ParticipantBehaviour()
        behaviour.failedTasks = ["Publish blog posting"]
        behaviour.abandonedTasks = ["Open the blog"]
        behaviour.wander = 0.3
        behaviour.misclickRate = 0.2
        behaviour.thinkScale = 1.5
        let expected = try expectedPayloads(scenario: "wordpress", seed: 8, behaviour: behaviour)
        XCTAssertNotEqual(expected, try expectedPayloads(scenario: "wordpress", seed: 8), "the flags change what is sent")
        XCTAssertEqual(try report(run.stdout).total.acknowledged, expected.count)
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: "participant"))
        try assertSessionHoldsExactly(expected, path: session.path)
        let stored = try SessionReader(path: session.path).events().map(\.payload)
        XCTAssertFalse(stored.contains { $0.contains("PostPublished") }, "a failed task's success event is never sent")
        XCTAssertTrue(stored.contains { $0.contains(#"[monitor beginEvent: @\"Open the blog\"]"#) })
        XCTAssertFalse(stored.contains { $0.contains(#"[monitor endEvent: @\"Open the blog\"]"#) }, "an abandoned task never ends")

        // A task the scenario does not have is refused before anything is sent, naming the tasks there are.
        let wrong = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "plainnote", "--fail-task", "Publish blog posting",
        ])
        XCTAssertNotEqual(wrong.status, 0)
        XCTAssertTrue(wrong.stderr.contains(#"--fail-task: scenario "plainnote" has no task "Publish blog posting"; its tasks: "Write a note", "Find a note""#),
                      wrong.stderr)
    }

    func testSeveralDevicesEachRecordTheirOwnSessionForADuration() async throws {
        // Unattended field study: the auto policy opens one session per simulated phone.
        let daemon = try await TestDaemon.start(arguments: ["--unknown-devices", "auto"])
        defer { daemon.cleanUp() }
        let run = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "campus", "--devices", "3", "--rate", "200",
            "--duration", "1", "--seed", "11", "--json",
        ], timeout: 120)
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        let summary = try report(run.stdout)
        XCTAssertEqual(summary.devices.count, 3)
        XCTAssertEqual(Set(summary.devices.map(\.deviceId)).count, 3, "each phone has its own identity")
        XCTAssertEqual(summary.total.acknowledged, summary.total.generated)
        // About 200 events per second per phone for a second: bounded by the duration, well above a pass.
        XCTAssertTrue(summary.devices.allSatisfy { $0.generated > 0 && $0.generated <= 400 }, "\(summary.devices.map(\.generated))")

        let sessions = try await eventually("one closed session per phone with all its events") { () -> [SessionRecord]? in
            let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
            return sessions.count == 3 && sessions.allSatisfy({ $0.state == .stopped }) ? sessions : nil
        }
        for device in summary.devices {
            let session = try XCTUnwrap(sessions.first { $0.device == device.deviceId })
            XCTAssertEqual(session.events, Int64(device.generated), device.deviceId)
        }
    }

    func testDaemonKilledAndRestartedMidRunStoresEveryEventExactlyOnce() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let device = try deviceId(scenario: "campus", seed: 11)
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "field", device: device))
        let events = 600

        let output = FileManager.default.temporaryDirectory.appendingPathComponent("muevalsim-\(UUID().uuidString.prefix(8)).json")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let simulator = Process()
        simulator.executableURL = URL(fileURLWithPath: TestDaemon.executable("muevalsim"))
        simulator.arguments = ["--connect", "127.0.0.1:\(daemon.port)", "--scenario", "campus", "--seed", "11",
                               "--events", String(events), "--rate", "100", "--ack-timeout", "60", "--json"]
        simulator.standardOutput = try FileHandle(forWritingTo: output)
        try simulator.run()
        defer { if simulator.isRunning { simulator.terminate() } }

        // Kill the daemon while events are flowing, then bring it back on the same port and directory.
        try await eventually(timeout: 30, "events to be stored before the kill") { () -> Bool? in
            let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
            return (sessions.first?.events ?? 0) >= 100 ? true : nil
        }
        try await daemon.kill()
        try await daemon.restart()

        try await eventually(timeout: 90, "muevalsim to finish") { simulator.isRunning ? nil : true }
        let stdout = try String(contentsOf: output, encoding: .utf8)
        XCTAssertEqual(simulator.terminationStatus, 0, stdout)
        let total = try report(stdout).total
        XCTAssertEqual(total.generated, events)
        XCTAssertEqual(total.acknowledged, events)
        XCTAssertEqual(total.unacknowledged, 0)
        XCTAssertGreaterThanOrEqual(total.disconnects, 1)
        XCTAssertGreaterThanOrEqual(total.connections, 2)

        let stopped = try await daemon.ctl.call(ControlRequest.StopSessions(session: "field"))
        XCTAssertEqual(stopped.first?.events, Int64(events), "re-sent: \(total.resent), duplicates dropped: \(stopped.first?.duplicates ?? -1)")
        try assertSessionHoldsExactly(try expectedPayloads(scenario: "campus", seed: 11, events: events), path: session.path)
        XCTAssertEqual(try SessionReader(path: session.path).gaps().first?.reason, "muevald was not running")
    }

    func testSimulatorInTheDeviceNamespaceFindsTheDaemonOverZeroconf() async throws {
        if let reason = NetworkLab.unavailableReason {
            print("⚠️  SKIPPING ZEROCONF SIMULATOR TEST: \(reason)")
            throw XCTSkip("needs network namespaces: \(reason)")
        }
        let lab = try NetworkLab.create()
        defer { lab.cleanUp() }
        try lab.startAvahi(on: lab.lab)
        try lab.startAvahi(on: lab.device)
        let daemon = try await TestDaemon.start(launcher: lab.launcher(on: lab.lab), listenHost: "0.0.0.0", zeroconf: true)
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "zeroconf"))
        // The device host sees the announcement (it may trail the daemon's start).
        try await eventually(timeout: 15, "the announcement on the device host") { () -> Bool? in
            let found = try lab.run(on: lab.device, [TestDaemon.executable("muevalctl"), "discover", "--json", "--timeout", "2"])
            return found.stdout.contains("\"port\" : \(daemon.port)") || found.stdout.contains("\"port\":\(daemon.port)") ? true : nil
        }

        let run = try lab.run(on: lab.device, [TestDaemon.executable("muevalsim"), "--scenario", "plainnote", "--seed", "3",
                                               "--rate", "max", "--browse-timeout", "5", "--json"], timeout: 60)
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        let report = try report(run.stdout)
        XCTAssertTrue(report.server.contains(lab.lab.address), report.server)
        let expected = try expectedPayloads(scenario: "plainnote", seed: 3)
        XCTAssertEqual(report.total.acknowledged, expected.count)
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: "zeroconf"))
        try assertSessionHoldsExactly(expected, path: session.path)
    }
}
