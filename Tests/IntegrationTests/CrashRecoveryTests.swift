import ControlClient
import ControlProtocol
import DaemonTestSupport
import DeviceSimulator
import Foundation
import JournalStorage
import MuEvalWire
import OrderedCollections
import SessionModel
import WireProtocol
import XCTest

/// `kill -9` of muevald in the middle of heavy ingest from several devices, then a restart on the same data
/// directory: every file intact, every acknowledged event there exactly once, and with devices that resend what
/// was not acknowledged, every event exactly once in the end.
final class CrashRecoveryTests: XCTestCase {
    func testKillDuringHeavyIngestKeepsEveryAcknowledgedEventAndResendingCompletesEverySession() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let phones = (1...4).map { "phone-\($0)" }
        let perPhone = 5000
        var sessions: [String: SessionRecord] = [:]
        for phone in phones {
            sessions[phone] = try await daemon.ctl.call(ControlRequest.StartSession(name: phone, device: phone))
        }

        // Four phones stream 5,000 events each, like a capture library: batches of 100, at most 1,000 unacknowledged.
        let streams = try await withThrowingTaskGroup(of: StreamingPhone.self) { group in
            for phone in phones {
                group.addTask { try await StreamingPhone.connect(phone, to: daemon) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let streaming = Task {
            await withTaskGroup(of: Void.self) { group in
                for stream in streams { group.addTask { await stream.stream(upTo: perPhone) } }
            }
        }
        // Killed once a fifth of the 20,000 are stored: ingest is in full flow, nobody is near the end.
        try await eventually(timeout: 60, "4,000 events to be stored") { () -> Bool? in
            let status = try await daemon.ctl.call(ControlRequest.Status())
            return status.counters.eventsStored >= 4000 ? true : nil
        }
        try await daemon.kill()
        await streaming.value
        // What each phone had been told was stored; nothing more can arrive from a dead daemon.
        let acknowledged = Dictionary(uniqueKeysWithValues: streams.map { ($0.phone, $0.device.acknowledged ?? 0) })
        XCTAssertTrue(acknowledged.values.allSatisfy { $0 < Int64(perPhone) }, "the kill came mid-stream: \(acknowledged)")
        XCTAssertGreaterThan(acknowledged.values.reduce(0, +), 0, "acknowledged before the kill: \(acknowledged)")

        try await daemon.restart()
        // Figures, per phone: its session file opens and passes the integrity check, and holds every event
        // acknowledged before the kill exactly once (events committed but not yet acknowledged may be there too).
        try assertEveryDatabaseIsIntact(in: daemon.dataDirectory)
        for phone in phones {
            let stored = try SessionReader(path: sessions[phone]!.path).events().compactMap(\.seq)
            XCTAssertEqual(stored, Array(Set(stored)).sorted(), "\(phone): each seq at most once, in order")
            let acked = acknowledged[phone]!
            XCTAssertEqual(stored.filter { $0 <= acked }, (0..<acked).map { $0 + 1 },
                           "\(phone): every event acknowledged before the kill (1 through \(acked)) is stored")
        }
        let recovered = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(recovered.map(\.state), Array(repeating: .interrupted, count: phones.count))

        // Each phone reconnects and resends everything after its last ack; what was already stored is a duplicate.
        for stream in streams {
            let again = try await StreamingPhone.connect(stream.phone, to: daemon, resumingAfter: acknowledged[stream.phone]!)
            await again.stream(upTo: perPhone)
            try await again.device.waitForAck(Int64(perPhone), timeout: 60)
            XCTAssertTrue(again.device.errors.isEmpty, "\(stream.phone): \(again.device.errors)")
            await again.device.close()
        }
        let stopped = try await daemon.ctl.call(ControlRequest.StopSessions(.all))
        XCTAssertEqual(stopped.map(\.events), Array(repeating: Int64(perPhone), count: phones.count))
        // Figures: 5,000 events per session, seq 1 through 5,000 once each, as sent; the files still intact.
        for phone in phones {
            let reader = try SessionReader(path: sessions[phone]!.path)
            let events = try reader.events()
            XCTAssertEqual(events.compactMap(\.seq), (1...Int64(perPhone)).map { $0 }, phone)
            XCTAssertEqual(Set(events.map(\.device)), [phone])
            let differing = try events.filter { event in
                try TypedJSON.decode(Array(event.payload.utf8)) { _ in [] } != .dict(touch(seq: event.seq ?? 0))
            }
            XCTAssertEqual(differing.map(\.seq), [], "\(phone): stored differently from what was sent")
            XCTAssertEqual(try reader.gaps().first?.reason, "muevald was not running", phone)
        }
        try assertEveryDatabaseIsIntact(in: daemon.dataDirectory)
    }

    func testKillDuringASimulatedFieldStudyOfThreePhonesStoresEveryEventOnce() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        var options = SimulationOptions(scenario: try ScenarioLoader.load("campus"), epoch: 1_298_155_386)
        options.seed = 21
        let phones = (0..<3).map { EventStream(options, device: $0).profile.deviceId }
        XCTAssertEqual(Set(phones).count, 3)
        var sessions: [SessionRecord] = []
        for phone in phones {
            sessions.append(try await daemon.ctl.call(ControlRequest.StartSession(name: phone, device: phone)))
        }
        let events = 1500
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("muevalsim-\(UUID().uuidString.prefix(8)).json")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let simulator = Process()
        simulator.executableURL = URL(fileURLWithPath: TestDaemon.executable("muevalsim"))
        simulator.arguments = ["--connect", "127.0.0.1:\(daemon.port)", "--scenario", "campus", "--seed", "21", "--devices", "3",
                               "--events", String(events), "--rate", "300", "--ack-timeout", "60", "--json"]
        simulator.standardOutput = try FileHandle(forWritingTo: output)
        try simulator.run()
        defer { if simulator.isRunning { simulator.terminate() } }

        // Killed when a fifth of the 4,500 are stored.
        try await eventually(timeout: 60, "900 events to be stored before the kill") { () -> Bool? in
            let status = try await daemon.ctl.call(ControlRequest.Status())
            return status.counters.eventsStored >= 900 ? true : nil
        }
        try await daemon.kill()
        try await daemon.restart()
        try assertEveryDatabaseIsIntact(in: daemon.dataDirectory)

        try await eventually(timeout: 120, "muevalsim to finish") { simulator.isRunning ? nil : true }
        let stdout = try String(contentsOf: output, encoding: .utf8)
        XCTAssertEqual(simulator.terminationStatus, 0, stdout)
        let report = try JSONDecoder().decode(SimulationReport.self, from: Data(stdout.utf8))
        XCTAssertEqual(report.total.acknowledged, 3 * events)
        XCTAssertGreaterThanOrEqual(report.total.disconnects, 3, "every phone lost its connection")

        // Figures: 1,500 events in each phone's session, seq 1 through 1,500 once each; every file intact.
        let stopped = try await daemon.ctl.call(ControlRequest.StopSessions(.all))
        XCTAssertEqual(stopped.map(\.events), [Int64(events), Int64(events), Int64(events)],
                       "resent: \(report.total.resent), duplicates: \(stopped.map(\.duplicates))")
        for (phone, session) in zip(phones, sessions) {
            let stored = try SessionReader(path: session.path).events()
            XCTAssertEqual(stored.compactMap(\.seq), (1...Int64(events)).map { $0 }, phone)
            XCTAssertEqual(Set(stored.map(\.device)), [phone])
        }
        try assertEveryDatabaseIsIntact(in: daemon.dataDirectory)
    }

    /// The catalog and every session file open in the sqlite3 shell and pass `PRAGMA integrity_check`.
    private func assertEveryDatabaseIsIntact(in dataDirectory: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let files = try FileManager.default.subpathsOfDirectory(atPath: dataDirectory)
            .filter { $0.hasSuffix(".sqlite") }
            .map { dataDirectory + "/" + $0 }
        XCTAssertGreaterThan(files.count, 1, "the catalog and the session files", file: file, line: line)
        for path in files {
            let check = try runProcess("/usr/bin/sqlite3", [path, "PRAGMA integrity_check"])
            XCTAssertEqual(check.stdout, "ok\n", "\(path): \(check.stderr)", file: file, line: line)
        }
    }
}

/// One phone's connection, sending events with seq like a capture library: in batches, with a bounded number
/// of unacknowledged events, until the connection breaks or the last is sent.
private final class StreamingPhone: Sendable {
    let phone: String
    let device: TestDevice
    private let firstSeq: Int64

    private init(phone: String, device: TestDevice, firstSeq: Int64) {
        self.phone = phone
        self.device = device
        self.firstSeq = firstSeq
    }

    static func connect(_ phone: String, to daemon: TestDaemon, resumingAfter acknowledged: Int64 = 0) async throws -> StreamingPhone {
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: phone))
        _ = try await device.waitFor("welcome") { _ in device.welcome }
        return StreamingPhone(phone: phone, device: device, firstSeq: acknowledged + 1)
    }

    /// Sends seq `firstSeq` through `last`; returns early when the daemon goes away.
    func stream(upTo last: Int) async {
        let batch: Int64 = 100
        let window: Int64 = 1000
        var next = firstSeq
        while next <= Int64(last) {
            let end = min(next + batch - 1, Int64(last))
            let bytes = (next...end).flatMap { WireEncoder.event(touch(seq: $0)) }
            do {
                try await device.send(bytes)
                try await device.waitFor(timeout: 30, "room in the window") { [device] _ in
                    device.isClosed || (device.acknowledged ?? 0) >= end - window ? true : nil
                }
            } catch {
                return
            }
            if device.isClosed { return }
            next = end + 1
        }
    }
}

private func touch(seq: Int64) -> OrderedDictionary<String, PlistValue> {
    ["class": .string("UserInputEvent"), "seq": .integer(seq), "x": .integer(seq % 320), "y": .integer(seq % 480)]
}
