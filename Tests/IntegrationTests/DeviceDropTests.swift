import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import SessionModel
import XCTest

/// A device keeps its session across drops (issue 52, docs/SESSION-CORE.md "Drops") against the real muevald,
/// as phones join from wherever testers are: web devices over the console's WebSocket under `--unknown-devices
/// auto`, with no code needed (`capture.web_require_code = false`). A socket dropped without a goodbye and
/// opened again within `capture.reconnect_grace` records into the same session, and the resent overlap is
/// stored once; a device that stays away longer has its session stopped and reported, and what it resends
/// into its next session is stored once across the two; a goodbye stops the session at once.
final class DeviceDropTests: XCTestCase {
    private var config: ConfigFile?

    override func tearDown() {
        config?.remove()
    }

    /// muevald with policy `auto`, open web capture, and this reconnect grace.
    private func start(grace: Double) async throws -> TestDaemon {
        let config = try ConfigFile("[capture]\nweb_require_code = false\nreconnect_grace = \(grace)\n")
        self.config = config
        return try await TestDaemon.start(arguments: ["--config", config.path, "--unknown-devices", "auto"])
    }

    /// A phone's page: a WebSocket to the console's `/capture`, its hello, its welcome; the session's id.
    private func join(_ daemon: TestDaemon, as id: String) async throws -> (TestDevice, Int64) {
        let device = try await daemon.connectWebDevice(origin: nil)
        try await device.hello(DeviceHello(deviceId: id))
        let welcome = try await device.waitFor("a welcome") { _ in device.welcome }
        return (device, try XCTUnwrap(Int64(welcome.sessionId)))
    }

    private func send(_ device: TestDevice, _ seqs: ClosedRange<Int64>) async throws {
        var bytes: [UInt8] = []
        for seq in seqs {
            bytes += WireEncoder.event(["class": .string("UserInputEvent"), "timestamp": .real(1_700_000_000 + Double(seq)),
                                        "seq": .integer(seq), "x": .integer(10), "y": .integer(20)])
        }
        try await device.send(bytes)
    }

    private func session(_ daemon: TestDaemon, _ id: Int64) async throws -> SessionRecord? {
        try await daemon.ctl.call(ControlRequest.ListSessions()).first { $0.id == id }
    }

    private func waitForState(_ state: SessionState, of id: Int64, in daemon: TestDaemon, timeout: Double = 10) async throws -> SessionRecord {
        try await eventually(timeout: timeout, "session \(id) to be \(state.rawValue) (log: \(daemon.log))") { () -> SessionRecord? in
            let record = try await self.session(daemon, id)
            return record?.state == state ? record : nil
        }
    }

    func testAPhoneThatDropsAndReconnectsWithinTheGraceKeepsItsSessionEveryEventOnceAndAGoodbyeStopsIt() async throws {
        // 60 s: the reconnect below comes within a second; the goodbye's stop must come long before the grace could.
        let daemon = try await start(grace: 60)
        defer { daemon.cleanUp() }
        let (first, id) = try await join(daemon, as: "phone-1")
        try await send(first, 1...15)
        try await first.waitForAck(15)
        // The socket dies without a goodbye, as a mobile browser's does; the acks of 6…15 never reached the page.
        await first.close()
        let waiting = try await waitForState(.interrupted, of: id, in: daemon)
        XCTAssertEqual(waiting.events, 15)
        XCTAssertTrue(daemon.log.contains("it stops unless the device reconnects within 60 s"), daemon.log)

        let (second, again) = try await join(daemon, as: "phone-1")
        XCTAssertEqual(again, id, "the same session, not a second one")
        try await send(second, 6...20)
        try await second.waitForAck(20)
        XCTAssertTrue(second.errors.isEmpty, "\(second.errors)")
        let current = try await session(daemon, id)
        let recording = try XCTUnwrap(current)
        XCTAssertEqual(recording.state, .recording)
        XCTAssertEqual(recording.events, 20)
        XCTAssertEqual(recording.duplicates, 10, "the resent overlap, acknowledged and not stored")

        try await second.goodbye()
        await second.close()
        let stopped = try await waitForState(.stopped, of: id, in: daemon)
        XCTAssertEqual(stopped.events, 20)
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(sessions.map(\.id), [id], "one session for the phone")
        let reader = try SessionReader(path: stopped.path)
        XCTAssertEqual(try reader.events().compactMap(\.seq), Array(1...20))
        let gaps = try reader.gaps()
        XCTAssertEqual(gaps.map(\.reason), ["device phone-1 disconnected without goodbye"], "the drop is noted")
        XCTAssertTrue(gaps.allSatisfy { $0.end != nil }, "closed when the phone came back: \(gaps)")
    }

    func testAPhoneAwayPastTheGraceHasItsSessionStoppedAndReportedAndItsResendIsStoredOnceAcrossSessions() async throws {
        let daemon = try await start(grace: 1)
        defer { daemon.cleanUp() }
        let (first, id) = try await join(daemon, as: "phone-2")
        try await send(first, 1...10)
        try await first.waitForAck(10)
        await first.close()
        // Interrupted first, for the grace; then stopped by its timer, with its report as any stop's.
        let stopped = try await waitForState(.stopped, of: id, in: daemon, timeout: 30)
        XCTAssertEqual(stopped.events, 10)
        XCTAssertTrue(daemon.log.contains("device phone-2 did not reconnect within 1 s (capture.reconnect_grace): stopped"), daemon.log)
        let index = "\(daemon.dataDirectory)/reports/\(id)/default/index.html"
        try await eventually(timeout: 60, "the automatic report at \(index) (log: \(daemon.log))") {
            FileManager.default.fileExists(atPath: index) && daemon.log.contains("report of session \(id) (default) written") ? true : nil
        }
        let gaps = try SessionReader(path: stopped.path).gaps()
        XCTAssertEqual(gaps.map(\.reason), ["device phone-2 disconnected without goodbye"])
        XCTAssertEqual(gaps.first?.end, stopped.stopped, "the gap runs to the stop")

        // Back later: a new session, and what the phone resends of the first is stored there no more.
        let (second, next) = try await join(daemon, as: "phone-2")
        XCTAssertNotEqual(next, id)
        try await send(second, 6...12)
        try await second.waitForAck(12)
        XCTAssertTrue(second.errors.isEmpty, "\(second.errors)")
        try await second.goodbye()
        await second.close()
        let last = try await waitForState(.stopped, of: next, in: daemon)
        XCTAssertEqual(last.events, 2)
        XCTAssertEqual(last.duplicates, 5)
        XCTAssertEqual(try SessionReader(path: last.path).events().compactMap(\.seq), [11, 12])
        XCTAssertTrue(try SessionReader(path: last.path).gaps().isEmpty, "a goodbye leaves no gap")
    }

    /// A restart carries no grace over: the sessions muevald's stop left waiting for their devices stop with it,
    /// as they stopped with their connections before there was a grace, and are not recovered open.
    func testWhenMuevaldStopsTheAutomaticSessionsItsClosingLeftWaitingStopWithIt() async throws {
        let daemon = try await start(grace: 60)
        defer { daemon.cleanUp() }
        let (device, id) = try await join(daemon, as: "phone-3")
        try await send(device, 1...3)
        try await device.waitForAck(3)
        let status = try await daemon.stop()
        XCTAssertEqual(status, 0)
        XCTAssertTrue(daemon.log.contains("session \(id) stops with muevald: its device had dropped"), daemon.log)
        try await daemon.restart()
        let current = try await session(daemon, id)
        let after = try XCTUnwrap(current)
        XCTAssertEqual(after.state, .stopped, "not recovered as an open session that nothing would stop")
        XCTAssertEqual(after.events, 3)
    }
}
