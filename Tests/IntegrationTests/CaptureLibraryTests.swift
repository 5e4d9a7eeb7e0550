import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// The capture library in an app (`plainnote`, which links MuEvalCapture alone) against the real daemon:
/// one call to start, its events and task in the session; a spool that outlives the process; discovery,
/// a killed server and a cut link on a network of two hosts.
final class CaptureLibraryTests: XCTestCase {
    /// Events one `plainnote` run records besides sensor readings: a launch, the list, eight per note.
    static func appEvents(notes: Int) -> Int { 2 + 8 * notes }

    static func plainnote(_ arguments: [String], timeout: Double = 60) throws -> (status: Int32, stdout: String, stderr: String) {
        try runProcess(TestDaemon.executable("plainnote"), arguments, timeout: timeout)
    }

    /// Runs a blocking call on a thread of its own, so the test can kill and restart meanwhile.
    static func inBackground<T: Sendable>(_ body: @escaping @Sendable () throws -> T) -> Task<T, any Error> {
        Task {
            try await withCheckedThrowingContinuation { continuation in
                Thread { continuation.resume(with: Result { try body() }) }.start()
            }
        }
    }

    /// The events of the app (not the sensors'), and that every seq is there once.
    func appEvents(in session: SessionRecord, file: StaticString = #filePath, line: UInt = #line) throws -> [StoredEvent] {
        let stored = try SessionReader(path: session.path).events()
        let seqs = stored.compactMap(\.seq)
        XCTAssertEqual(seqs.count, stored.count, "every event has its seq", file: file, line: line)
        XCTAssertEqual(Set(seqs).count, seqs.count, "no seq twice", file: file, line: line)
        return stored.filter { $0.eventClass != "DeviceSensorEvent" }
    }

    func testTheExampleAppCallsOneMethodAndItsSessionHasItsEventsAndItsTask() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        // The session does not select the battery: the app's battery sensor is stopped by the welcome.
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "plainnote", sensors: [
            "UserInputEvent", "UserInterfaceEvent", "CustomEvent", "ApplicationEvent",
        ]))
        let run = try Self.plainnote(["--connect", "127.0.0.1:\(daemon.port)", "--device-id", "phone-plainnote", "--notes", "3"])
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("unacknowledged 0, connections 1, sessions \(session.id)"), run.stdout)
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))

        let stored = try appEvents(in: session)
        XCTAssertEqual(stored.count, Self.appEvents(notes: 3))
        XCTAssertEqual(try SessionReader(path: session.path).events(classes: ["DeviceSensorEvent"]).count, 0)
        XCTAssertEqual(Set(stored.map(\.device)), ["phone-plainnote"])
        XCTAssertEqual(try SessionReader(path: session.path).devices().first?.appId, "org.mueval.PlainNote")
        // In seq order, time stamps never go back.
        let times = stored.sorted { $0.seq! < $1.seq! }.map(\.timestamp)
        XCTAssertEqual(times, times.sorted())

        // The analysis finds the three runs of the task the markers delimit.
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("plainnote-report-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let report = try daemon.muevalctl(["report", "plainnote", "--out", out])
        XCTAssertEqual(report.status, 0, report.stderr)
        let html = try String(contentsOfFile: out + "/index.html", encoding: .utf8)
        XCTAssertTrue(html.contains("Write a note"), "the task in the report")
    }

    func testWhatAnAppRecordedWithoutAServerIsDeliveredOnceOnItsNextStart() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let spool = FileManager.default.temporaryDirectory.appendingPathComponent("plainnote-spool-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: spool) }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "offline", device: "phone-offline"))

        // No server where it looks (nothing listens on port 1); the app exits without stopCapture.
        let offline = try Self.plainnote(["--connect", "127.0.0.1:1", "--device-id", "phone-offline", "--spool", spool, "--notes", "4",
                                          "--exit-without-stop"])
        XCTAssertEqual(offline.status, 0, offline.stdout + offline.stderr)
        XCTAssertTrue(offline.stdout.contains("exiting without stopCapture"), offline.stdout)
        XCTAssertEqual(try SessionReader(path: session.path).eventCount(), 0)

        // The next start delivers the backlog first, then what this run records; each once.
        let online = try Self.plainnote(["--connect", "127.0.0.1:\(daemon.port)", "--device-id", "phone-offline", "--spool", spool, "--notes", "1"])
        XCTAssertEqual(online.status, 0, online.stdout + online.stderr)
        XCTAssertTrue(online.stdout.contains("unacknowledged 0"), online.stdout)
        let restored = try XCTUnwrap(online.stdout.firstMatch(of: /restored (\d+)/).flatMap { Int($0.1) })
        XCTAssertGreaterThanOrEqual(restored, Self.appEvents(notes: 4))
        let stored = try appEvents(in: session)
        XCTAssertEqual(stored.count, Self.appEvents(notes: 4) + Self.appEvents(notes: 1))
        XCTAssertEqual(stored.filter { $0.payload.contains(#""marker":"begin""#) }.count, 5)
        // The session selects everything: the battery sensor's readings are there too.
        XCTAssertFalse(try SessionReader(path: session.path).events(classes: ["DeviceSensorEvent"]).isEmpty)

        // A third start finds nothing left to send.
        let again = try Self.plainnote(["--connect", "127.0.0.1:\(daemon.port)", "--device-id", "phone-offline", "--spool", spool, "--notes", "1"])
        XCTAssertTrue(again.stdout.contains("restored 0"), again.stdout)
    }

    func testAnAppFindsTheServerByZeroconfAndLosesNothingAcrossAKilledServerAndACutLink() async throws {
        if let reason = NetworkLab.unavailableReason {
            print("⚠️  SKIPPING THE CAPTURE LIBRARY'S ZEROCONF TEST: \(reason)")
            throw XCTSkip("needs network namespaces: \(reason)")
        }
        let lab = try NetworkLab.create()
        defer { lab.cleanUp() }
        try lab.startAvahi(on: lab.lab)
        try lab.startAvahi(on: lab.device)
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("library-lab-\(UUID().uuidString.prefix(8)).toml").path
        try "[zeroconf]\nname = \"muEval library lab\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let daemon = try await TestDaemon.start(arguments: ["--config", config], launcher: lab.launcher(on: lab.lab), listenHost: "0.0.0.0",
                                                zeroconf: true)
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "field", device: "phone-field"))

        // About 15 s of recording: no address given, the library browses before every connection.
        let notes = 50
        let app = Self.inBackground {
            try lab.run(on: lab.device, [TestDaemon.executable("plainnote"), "--server", "muEval library lab", "--device-id", "phone-field",
                                         "--notes", String(notes), "--pace", "0.3", "--stop-timeout", "90"], timeout: 180)
        }
        func stored() async throws -> Int {
            try await daemon.ctl.call(ControlRequest.Status()).counters.eventsStored
        }
        try await eventually(timeout: 60, "the first events through Zeroconf; log: \(daemon.log)") { try await stored() >= 40 ? true : nil }
        try await daemon.kill()
        try await daemon.restart()
        try await eventually(timeout: 60, "events after the restart") { try await stored() >= 40 ? true : nil }
        // The cable is pulled for three seconds while the app records on.
        try lab.setLink(of: lab.device, up: false)
        try await Task.sleep(for: .seconds(3))
        try lab.setLink(of: lab.device, up: true)

        let run = try await app.value
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("unacknowledged 0"), run.stdout)
        let connections = try XCTUnwrap(run.stdout.firstMatch(of: /connections (\d+)/).flatMap { Int($0.1) })
        XCTAssertGreaterThanOrEqual(connections, 2, "the kill came mid-run: \(run.stdout)")
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
        XCTAssertEqual(try appEvents(in: session).count, Self.appEvents(notes: notes))
    }
}
