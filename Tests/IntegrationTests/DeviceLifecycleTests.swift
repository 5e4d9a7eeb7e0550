import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import MuEvalWire
import Synchronization
import JournalStorage
import WireProtocol
import XCTest
import SessionModel

/// Every device has the same life cycle, `<hello>` or not (README quick start, `nc`): connected,
/// disconnected with a gap in its session, reconnected; `devices` says which; an `auto` session
/// stops with its connection when there is no reconnect grace. And the limits that keep ingest safe while that happens: the
/// partial-message budget, and sessions opened off the event loops.
final class DeviceLifecycleTests: XCTestCase {
    private static func event(seq: Int, blob: String? = nil) -> String {
        "<event><key>class</key><string>UserInputEvent</string><key>seq</key><integer>\(seq)</integer>"
            + (blob.map { "<key>blob</key><string>\($0)</string>" } ?? "") + "<key>x</key><integer>155</integer></event>\n"
    }

    private func devices(_ daemon: TestDaemon) throws -> [DeviceRecord] {
        let result = try daemon.muevalctl(["devices", "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return try JSONDecoder().decode([DeviceRecord].self, from: Data(result.stdout.utf8))
    }

    private func connected(_ daemon: TestDaemon, _ id: String) throws -> Bool? {
        try devices(daemon).first { $0.id == id }?.connected
    }

    /// The connection markers a JSON tail printed, as "kind device".
    private func markers(_ tail: FollowingProcess) -> [String] {
        tail.lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
            .filter { ($0["kind"] as? String)?.hasPrefix("device-") == true }
            .map { "\($0["kind"] as? String ?? "") \($0["device"] as? String ?? "")" }
    }

    private func followTail(_ daemon: TestDaemon) async throws -> FollowingProcess {
        let tail = try daemon.follow(["tail", "--all", "--json"])
        try await eventually("the tail to follow") { () -> Bool? in
            try await daemon.ctl.call(ControlRequest.Status()).tails == 1 ? true : nil
        }
        return tail
    }

    private func session(_ daemon: TestDaemon, _ id: Int64) async throws -> SessionRecord? {
        try await daemon.ctl.call(ControlRequest.ListSessions()).first { $0.id == id }
    }

    func testDeviceWithoutHelloConnectsDisconnectsAndReconnectsLikeAnyOther() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let started = try await daemon.ctl.call(ControlRequest.StartSession(name: "nc"))
        let tail = try await followTail(daemon)
        let id = "address:127.0.0.1"

        for round in 0..<2 {
            let device = try await daemon.connectDevice()
            try await device.send((1...3).map { Self.event(seq: round * 3 + $0) }.joined())
            try await device.waitForAck(Int64(round * 3 + 3))
            try await eventually("the tail's connected marker, round \(round)") { () -> Bool? in
                self.markers(tail).count == round * 2 + 1 ? true : nil
            }
            XCTAssertEqual(try connected(daemon, id), true, "devices while connected")
            let recording = try await session(daemon, started.id)
            XCTAssertEqual(recording?.state, .recording)

            await device.close()
            try await eventually("the tail's disconnected marker, round \(round)") { () -> Bool? in
                self.markers(tail).count == round * 2 + 2 ? true : nil
            }
            try await eventually("devices to show the disconnect") { try self.connected(daemon, id) == false ? true : nil }
            let interrupted = try await session(daemon, started.id)
            XCTAssertEqual(interrupted?.state, .interrupted, "a session whose device has gone")
        }
        XCTAssertEqual(markers(tail), ["device-connected \(id)", "device-disconnected \(id)",
                                       "device-connected \(id)", "device-disconnected \(id)"])
        let human = try daemon.muevalctl(["devices"])
        XCTAssertTrue(human.stdout.contains("disconnected"), human.stdout)

        let stopped = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(started.id)))
        XCTAssertEqual(stopped.first?.events, 6)
        // Each disconnect left a gap: the first closed when the device came back, the second at the stop.
        let gaps = try SessionReader(path: started.path).gaps()
        XCTAssertEqual(gaps.map(\.reason), Array(repeating: "device \(id) disconnected without goodbye", count: 2))
        XCTAssertTrue(gaps.allSatisfy { $0.end != nil }, "\(gaps)")
        tail.signal(SIGINT)
    }

    /// As nc does it: events and the end of the connection in one go. The tail shows them in that
    /// order (the disconnect marker waits for the connection's last events to be stored), even when
    /// commits wait (`commit_delay_ms`) and the disconnect is seen long before the events are stored.
    func testTheDisconnectMarkerFollowsTheConnectionsLastEvents() async throws {
        let config = try ConfigFile("[storage]\ncommit_delay_ms = 300\n")
        defer { config.remove() }
        let daemon = try await TestDaemon.start(arguments: ["--config", config.path])
        defer { daemon.cleanUp() }
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "nc"))
        let tail = try await followTail(daemon)
        let device = try await daemon.connectDevice()
        try await device.send((1...200).map { Self.event(seq: $0) }.joined())
        await device.close()
        let kinds = try await eventually("the disconnect marker") { () -> [String]? in
            let kinds = tail.lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
                .compactMap { $0["kind"] as? String }
            return kinds.last == "device-disconnected" ? kinds : nil
        }
        XCTAssertEqual(kinds, ["device-connected"] + Array(repeating: "event", count: 200) + ["device-disconnected"])
        tail.signal(SIGINT)
    }

    func testAutoSessionOfAnNcDeviceStopsWhenItsConnectionEnds() async throws {
        let nc = "/usr/bin/nc"
        guard FileManager.default.isExecutableFile(atPath: nc) else { throw XCTSkip("SKIPPED: no \(nc) (netcat-openbsd) on this machine") }
        // Without a reconnect grace, as before there was one: an nc connection ends without a goodbye, and
        // each round is its own session (with the default grace the second would record into the first:
        // DeviceDropTests).
        let config = try ConfigFile("[capture]\nreconnect_grace = 0\n")
        defer { config.remove() }
        let daemon = try await TestDaemon.start(arguments: ["--config", config.path, "--unknown-devices", "auto"])
        defer { daemon.cleanUp() }
        let tail = try await followTail(daemon)

        // The README's quick start: an event through `nc -N`, which closes its side at the end of its input.
        for round in 1...2 {
            let sent = try runProcess(nc, ["-N", "127.0.0.1", String(daemon.port)], input: Data(Self.event(seq: round).utf8), timeout: 20)
            XCTAssertEqual(sent.status, 0, sent.stderr)
            XCTAssertTrue(sent.stdout.contains("<welcome>"), "nc prints the welcome: \(sent.stdout)")
            let sessions = try await eventually("auto session \(round) to stop") { () -> [SessionRecord]? in
                let all = try await daemon.ctl.call(ControlRequest.ListSessions())
                return all.count == round && all.allSatisfy({ $0.state == .stopped }) ? all : nil
            }
            XCTAssertEqual(sessions.last?.events, 1, "the event sent before the half-close is stored")
            XCTAssertEqual(sessions.last?.device, "address:127.0.0.1")
        }
        try await eventually("both connections' markers") { () -> Bool? in self.markers(tail).count == 4 ? true : nil }
        XCTAssertEqual(markers(tail).map { $0.split(separator: " ")[0] },
                       ["device-connected", "device-disconnected", "device-connected", "device-disconnected"])
        XCTAssertEqual(try connected(daemon, "address:127.0.0.1"), false)
        tail.signal(SIGINT)
    }

    func testPartialMessageBudgetPausesReadsAndEveryMessageStillArrives() async throws {
        let config = try ConfigFile("[server]\nmax_partial_bytes = 65536\n")
        defer { config.remove() }
        let daemon = try await TestDaemon.start(arguments: ["--config", config.path, "--unknown-devices", "auto", "--log-level", "debug"])
        defer { daemon.cleanUp() }
        let count = 8
        // 256 KiB messages, four times the budget each: half of each is 128 KiB held.
        let message = Array(Self.event(seq: 1, blob: String(repeating: "A", count: 256 << 10)).utf8)
        let half = message.count / 2
        var devices: [TestDevice] = []
        for index in 0..<count { devices.append(try await welcomed(daemon, as: "big-\(index)")) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for device in devices { group.addTask { try await device.send(Array(message[..<half])) } }
            try await group.waitForAll()
        }
        try await eventually("connections to wait for the budget") { () -> Bool? in
            daemon.log.contains("waits for the partial-message budget") ? true : nil
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for device in devices { group.addTask { try await device.send(Array(message[half...])) } }
            try await group.waitForAll()
        }
        for device in devices { try await device.waitForAck(1, timeout: 30) }
        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertEqual(status.counters.eventsStored, count)
        XCTAssertEqual(status.counters.malformedMessages, 0)
        XCTAssertTrue(devices.allSatisfy { $0.errors.isEmpty }, "\(devices.map(\.errors))")
        let peak = try peakMemory(of: daemon)
        XCTAssertLessThan(peak, 512 << 20, "peak resident memory \(peak >> 20) MiB")
        for device in devices { await device.close() }
    }

    func testAutoSessionsOpenWhileOtherConnectionsKeepBeingAcknowledged() async throws {
        let daemon = try await TestDaemon.start(arguments: ["--unknown-devices", "auto"])
        defer { daemon.cleanUp() }
        let steady = try await welcomed(daemon, as: "steady")

        // Newcomers arrive one after another, each making the daemon open a session (an fsync'd
        // catalog insert and a new file), while the steady device sends and waits for each ack.
        let newcomers = 20
        let done = ArrivalsDone()
        let arrivals = Task { () -> [TestDevice] in
            defer { done.flag.store(true, ordering: .releasing) }
            var devices: [TestDevice] = []
            for index in 0..<newcomers {
                let device = try await welcomed(daemon, as: "newcomer-\(index)")
                devices.append(device)
            }
            return devices
        }
        var seq: Int64 = 0
        var slowest: Double = 0
        repeat {
            seq += 1
            let sent = Date()
            try await steady.send(Self.event(seq: Int(seq)))
            try await steady.waitForAck(seq)
            slowest = max(slowest, Date().timeIntervalSince(sent))
        } while !done.flag.load(ordering: .acquiring)
        let devices = try await arrivals.value
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(sessions.count, newcomers + 1, "one auto session per device")
        XCTAssertTrue(steady.errors.isEmpty, "\(steady.errors)")
        XCTAssertEqual(steady.acknowledged, seq,
                       "every event of the steady device acknowledged while \(newcomers) sessions opened; slowest ack \(Int(slowest * 1000)) ms")
        print("DeviceLifecycleTests: \(seq) acks to the steady device while \(newcomers) auto sessions opened; slowest \(Int(slowest * 1000)) ms")
        for device in devices { await device.close() }
        await steady.close()
    }
}

private final class ArrivalsDone: Sendable {
    let flag = Atomic<Bool>(false)
}

/// A device that says hello and has its welcome (a session, under the `auto` policy its own).
private func welcomed(_ daemon: TestDaemon, as id: String) async throws -> TestDevice {
    let device = try await daemon.connectDevice()
    try await device.hello(DeviceHello(deviceId: id))
    _ = try await device.waitFor("welcome") { _ in device.welcome }
    return device
}
