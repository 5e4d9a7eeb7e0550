import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import OrderedCollections
import SessionModel
import WireProtocol
import XCTest

/// `muevalctl tail`: the developer watches a session's events arrive (thesis 2.4.1, live preview).
final class LiveTailTests: XCTestCase {
    private static let classes = ["UserInputEvent", "UserInterfaceEvent", "DeviceSensorEvent", "ApplicationEvent", "CustomEvent"]

    private static func event(seq: Int, eventClass: String) -> OrderedDictionary<String, PlistValue> {
        ["class": .string(eventClass), "timestamp": .real(1_700_000_000 + Double(seq) / 1000), "seq": .integer(Int64(seq)),
         "x": .integer(Int64(seq % 320)), "y": .integer(Int64(seq % 480)), "view": .string("PostsViewController")]
    }

    /// Sends `count` events cycling through the thesis's classes, in few large writes; returns them.
    @discardableResult
    private static func stream(_ device: TestDevice, count: Int) async throws -> [OrderedDictionary<String, PlistValue>] {
        let events = (1...count).map { Self.event(seq: $0, eventClass: Self.classes[$0 % Self.classes.count]) }
        var bytes: [UInt8] = []
        for event in events { bytes += WireEncoder.event(event) }
        for start in stride(from: 0, to: bytes.count, by: 64 << 10) {
            try await device.send(Array(bytes[start..<min(start + (64 << 10), bytes.count)]))
        }
        return events
    }

    private func connect(_ daemon: TestDaemon, as id: String) async throws -> TestDevice {
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: id))
        _ = try await device.waitFor("welcome") { _ in device.welcome }
        return device
    }

    private func waitForTails(_ daemon: TestDaemon, _ count: Int) async throws {
        try await eventually("\(count) live tails") { () -> Bool? in
            try await daemon.ctl.call(ControlRequest.Status()).tails == count ? true : nil
        }
    }

    /// The JSON objects a tail printed.
    private func objects(_ tail: FollowingProcess) -> [[String: Any]] {
        tail.lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    private func events(_ tail: FollowingProcess) -> [[String: Any]] {
        objects(tail).filter { $0["kind"] as? String == "event" }
    }

    func testTailShowsExactlyTheEventsSentInOrderWithClassAndDeviceFilters() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let jack = try await daemon.ctl.call(ControlRequest.StartSession(name: "jack", device: "iphone-jack"))
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "jill", device: "iphone-jill"))

        let whole = try daemon.follow(["tail", "jack", "--json"])
        let touches = try daemon.follow(["tail", "jack", "--json", "--class", "UserInputEvent", "--class", "CustomEvent"])
        let jillOnly = try daemon.follow(["tail", "--all", "--json", "--device", "iphone-jill"])
        let grep = try daemon.follow(["tail", "--all", "--json", "--grep", "iphone-jill"])
        try await waitForTails(daemon, 4)

        let jackDevice = try await connect(daemon, as: "iphone-jack")
        let jillDevice = try await connect(daemon, as: "iphone-jill")
        async let jackSent = Self.stream(jackDevice, count: 2000)
        async let jillSent = Self.stream(jillDevice, count: 700)
        let (sentByJack, sentByJill) = try await (jackSent, jillSent)

        try await eventually("the whole session in the tail") { self.events(whole).count == 2000 ? true : nil }
        let shown = events(whole)
        XCTAssertEqual(shown.compactMap { $0["seq"] as? Int }, Array(1...2000))
        XCTAssertEqual(shown.map { $0["class"] as? String }, sentByJack.map { if case .string(let c)? = $0["class"] { c } else { "" } })
        XCTAssertTrue(shown.allSatisfy { $0["session"] as? Int == Int(jack.id) && $0["device"] as? String == "iphone-jack" })
        // Storage order: ids increase by one, and the whole payload is there for jq.
        XCTAssertEqual(shown.compactMap { $0["id"] as? Int }, Array(1...2000))
        XCTAssertEqual((shown[0]["payload"] as? [String: Any])?["view"] as? String, "PostsViewController")
        XCTAssertTrue(objects(whole).contains { $0["kind"] as? String == "device-connected" && $0["device"] as? String == "iphone-jack" })

        let expectedTouches = sentByJack.filter { [.string("UserInputEvent"), .string("CustomEvent")].contains($0["class"]) }.count
        try await eventually("the filtered classes") { self.events(touches).count == expectedTouches ? true : nil }
        XCTAssertEqual(Set(events(touches).compactMap { $0["class"] as? String }), ["UserInputEvent", "CustomEvent"])

        try await eventually("jill's device only") { self.events(jillOnly).count == sentByJill.count ? true : nil }
        XCTAssertTrue(events(jillOnly).allSatisfy { $0["device"] as? String == "iphone-jill" })
        try await eventually("the grep match") { self.events(grep).count == sentByJill.count ? true : nil }

        // Stopping the followed session ends its tail with status 0; `--all` tails go on.
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: "jack"))
        let wholeStatus = try await whole.exitStatus()
        XCTAssertEqual(wholeStatus, 0, whole.stderr)
        XCTAssertEqual(objects(whole).last?["kind"] as? String, "session-stopped")
        XCTAssertTrue(jillOnly.process.isRunning)
        XCTAssertEqual(events(touches).count, expectedTouches, "nothing but the filtered classes arrived")
    }

    func testAStoppedReaderNeverSlowsIngestAndIsToldWhatItSkipped() async throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("tail-\(UUID().uuidString).toml").path
        try "[limits]\ntail_buffer = 100\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "field-study"))
        let tail = try daemon.follow(["tail", "--json"])
        try await waitForTails(daemon, 1)

        // The reader stops (a paused terminal): it reads nothing while 20,000 events arrive.
        tail.signal(SIGSTOP)
        let device = try await connect(daemon, as: "iphone-field")
        try await Self.stream(device, count: 20_000)
        try await eventually(timeout: 60, "every event stored while the tail is stopped") { () -> Bool? in
            let status = try await daemon.ctl.call(ControlRequest.Status())
            return status.sessions.first { $0.id == session.id }?.events == 20_000 ? true : nil
        }

        // It resumes: what it shows plus what it was told it skipped is every event, once.
        tail.signal(SIGCONT)
        let accounted = { () -> (shown: Int, skipped: Int) in
            let objects = self.objects(tail)
            return (objects.filter { $0["kind"] as? String == "event" }.count,
                    objects.filter { $0["kind"] as? String == "skipped" }.compactMap { $0["count"] as? Int }.reduce(0, +))
        }
        try await eventually(timeout: 30, "shown + skipped = 20,000") { () -> Bool? in
            let (shown, skipped) = accounted()
            return shown + skipped == 20_000 ? true : nil
        }
        let (shown, skipped) = accounted()
        XCTAssertGreaterThan(skipped, 0, "a stopped reader must miss events, not hold them all")
        XCTAssertLessThan(shown, 20_000)
        let ids = events(tail).compactMap { $0["id"] as? Int }
        XCTAssertEqual(ids, ids.sorted(), "what is shown is in storage order")
        XCTAssertEqual(Set(ids).count, ids.count, "nothing is shown twice")
    }

    func testTerminalOutputIsColouredAndPipedOutputIsPlain() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "colours"))
        let device = try await connect(daemon, as: "iphone-colours")
        try await device.event(["class": .string("UserInputEvent"), "seq": .integer(1), "x": .integer(155), "y": .integer(267),
                                "phase": .string("began"), "view": .string("PostsViewController")])
        try await device.event(["class": .string("CustomEvent"), "seq": .integer(2), "name": .string("Edit blog posting"), "phase": .string("begin")])
        try await eventually("both events acknowledged") { device.acknowledged == 2 ? true : nil }
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: "colours"))

        // A stopped session's tail prints the history it is asked for, then ends.
        let command = [TestDaemon.executable("muevalctl"), "tail", "colours", "--since", "10", "--socket", daemon.socketPath]
        let piped = try runProcess(command[0], Array(command.dropFirst()))
        XCTAssertEqual(piped.status, 0, piped.stderr)
        XCTAssertFalse(piped.stdout.contains("\u{1B}["), piped.stdout)
        XCTAssertTrue(piped.stdout.contains("UserInputEvent"), piped.stdout)
        XCTAssertTrue(piped.stdout.contains("touch began 155,267 in PostsViewController"), piped.stdout)
        XCTAssertTrue(piped.stdout.contains("begin \"Edit blog posting\""), piped.stdout)

        // In a pseudo-terminal (script(1) gives it one), each class has its colour.
        // (`swift test` itself sets NO_COLOR, which the tail honours: unset it for this one.)
        let terminal = try runProcess("/usr/bin/script", ["-qec", "env -u NO_COLOR " + command.joined(separator: " "), "/dev/null"])
        XCTAssertEqual(terminal.status, 0, terminal.stderr)
        XCTAssertTrue(terminal.stdout.contains("\u{1B}[36mUserInputEvent"), terminal.stdout)
        XCTAssertTrue(terminal.stdout.contains("\u{1B}[34mCustomEvent"), terminal.stdout)
        let noColor = try runProcess("/usr/bin/script", ["-qec", "env NO_COLOR=1 " + command.joined(separator: " "), "/dev/null"])
        XCTAssertFalse(noColor.stdout.contains("\u{1B}[3"), noColor.stdout)
    }

    func testTailSaysWhenTheDaemonStopsAndCtrlCEndsItCleanly() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "one"))
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "two"))

        // Two sessions and no terminal to ask in: the tail says which to choose.
        let ambiguous = try daemon.muevalctl(["tail"])
        XCTAssertNotEqual(ambiguous.status, 0)
        XCTAssertEqual(ambiguous.stderr, "Error: several sessions record: 1 (one), 2 (two); name one, or follow every session with --all\n")

        let interrupted = try daemon.follow(["tail", "one"])
        let orphaned = try daemon.follow(["tail", "--all"])
        try await waitForTails(daemon, 2)
        interrupted.signal(SIGINT)
        let interruptedStatus = try await interrupted.exitStatus()
        XCTAssertEqual(interruptedStatus, 0)
        try await waitForTails(daemon, 1)

        let daemonStatus = try await daemon.stop()
        XCTAssertEqual(daemonStatus, 0, "a following tail must not hold up shutdown: \(daemon.log)")
        let orphanedStatus = try await orphaned.exitStatus()
        XCTAssertEqual(orphanedStatus, 1)
        XCTAssertTrue(orphaned.stderr.contains("muevald stopped"), orphaned.stderr)
    }

    func testStatusWatchRefreshesWithEventRates() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "watched", user: "Jill"))
        let device = try await connect(daemon, as: "iphone-watched")
        try await Self.stream(device, count: 300)
        try await device.waitForAck(300)

        let top = try daemon.follow(["top"])
        try await eventually("two refreshes with a rate") { () -> Bool? in
            top.lines.filter { $0.contains("watched") && $0.contains("/s") }.count >= 2 ? true : nil
        }
        let table = top.lines.last { $0.contains("watched") } ?? ""
        XCTAssertTrue(table.contains("recording") && table.contains("iphone-watched") && table.contains("300"), table)
        top.signal(SIGINT)
        let status = try await top.exitStatus()
        XCTAssertEqual(status, 0)
    }
}
