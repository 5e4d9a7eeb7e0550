import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// Whose session a row of the shared PostgreSQL is (docs/POSTGRES.md, "Whose session"): two labs in one
/// database; lab B has a copy of lab A's session under A's uuid, and imports A's export. B's replication
/// leaves A's row and events alone and says so in `status`; the import becomes B's own session with a
/// uuid of its own, and replicates.
final class ReplicationOwnershipTests: XCTestCase {
    private var postgres: TestPostgres!
    private var directory = ""

    override func setUpWithError() throws {
        if let reason = TestPostgres.unavailableReason { throw XCTSkip("CANNOT RUN HERE: " + reason) }
        postgres = try TestPostgres()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ownership-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        postgres?.cleanUp()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func lab(_ name: String, dataDirectoryCopy: String? = nil) async throws -> TestDaemon {
        let config = directory + "/\(name).toml"
        try """
            [storage.postgres]
            url = "\(postgres.url)"
            lab = "\(name)"
            [transcription]
            enabled = false
            """.write(toFile: config, atomically: true, encoding: .utf8)
        return try await TestDaemon.start(arguments: ["--config", config], dataDirectoryCopy: dataDirectoryCopy)
    }

    private func record(_ daemon: TestDaemon, _ name: String, events: Int, seed: Int) async throws -> SessionRecord {
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: name))
        let run = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "wordpress", "--seed", String(seed), "--events", String(events), "--rate", "max",
        ], timeout: 120)
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        let stopped = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
        return try XCTUnwrap(stopped.first)
    }

    /// A's events of `uuid` in PostgreSQL, as `id|class|seq` rows.
    private func remoteEvents(_ uuid: String) throws -> [String] {
        try postgres.query("SELECT id || '|' || class || '|' || coalesce(seq::text, '-') FROM events WHERE session = '\(uuid)' ORDER BY id")
            .split(separator: "\n").map(String.init)
    }

    private func localEvents(_ session: SessionRecord) throws -> [String] {
        try SessionReader(path: session.path).events().map { "\($0.id)|\($0.eventClass)|\($0.seq.map(String.init) ?? "-")" }
    }

    /// A GPX track of two points during `session`.
    private static func track(during session: SessionRecord) -> String {
        let start = session.started ?? session.created
        let points = [start + 1, start + 2].map { time in
            "<trkpt lat=\"49.0069\" lon=\"8.4037\"><time>\(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: time.rounded())))</time></trkpt>"
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="TrackApp" xmlns="http://www.topografix.com/GPX/1/1">
              <trk><name>Walk</name><trkseg>\(points.joined())</trkseg></trk>
            </gpx>
            """
    }

    func testALabNeverTakesOverAnotherLabsSessionAndAnImportGetsAUUIDOfItsOwn() async throws {
        let labA = try await lab("lab-a")
        defer { labA.cleanUp() }
        let a1 = try await record(labA, "a-1", events: 60, seed: 1)
        let original = try localEvents(a1)
        try await eventually(timeout: 60, "a-1 in PostgreSQL; log: \(labA.log)") { () -> Bool? in
            try self.remoteEvents(a1.uuid) == original ? true : nil
        }
        let export = directory + "/a-1.jsonl"
        let exported = try labA.muevalctl(["export", String(a1.id), "--format", "jsonl", "-o", export])
        XCTAssertEqual(exported.status, 0, exported.stderr)

        // Lab B's machine was set up from a copy of lab A's data directory, and a GPX track was merged
        // into that copy of a-1 (which numbers its events anew: a new generation, whose replication
        // would delete the session's events in PostgreSQL and send them again).
        try await labA.stop()
        let copy = directory + "/b-data"
        try FileManager.default.copyItem(atPath: labA.dataDirectory, toPath: copy)
        try await labA.restart()
        try Self.track(during: a1).write(toFile: directory + "/walk.gpx", atomically: true, encoding: .utf8)
        let merged = try runProcess(TestDaemon.executable("muevalctl"), ["import", directory + "/walk.gpx", "--into", String(a1.id), "--data-dir", copy])
        XCTAssertEqual(merged.status, 0, merged.stderr)
        let labB = try await lab("lab-b", dataDirectoryCopy: copy)
        defer { labB.cleanUp() }

        // B imports A's export: a session of B's own, with a new uuid, and the output says why.
        let imported = try labB.muevalctl(["import", export])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let sessionsB = try await labB.ctl.call(ControlRequest.ListSessions())
        let copyOfA1 = try XCTUnwrap(sessionsB.first { $0.uuid == a1.uuid })
        let importedB = try XCTUnwrap(sessionsB.first { $0.id != copyOfA1.id })
        XCTAssertNotEqual(importedB.uuid, a1.uuid)
        XCTAssertTrue(imported.stdout.contains("new uuid \(importedB.uuid) (the file came from lab lab-a, where it is \(a1.uuid))"), imported.stdout)

        // B's replication: the import goes in as B's; the copy of a-1 is refused and reported.
        let status = try await eventually(timeout: 60, "lab B to replicate its import and refuse a-1; log: \(labB.log)") { () -> ReplicationStatus? in
            guard let replication = try await labB.ctl.call(ControlRequest.Status()).replication,
                  replication.state == "replicating",
                  replication.sessions.contains(where: { $0.uuid == a1.uuid && $0.ownedBy == "lab-a" }),
                  replication.sessions.contains(where: { $0.uuid == importedB.uuid && $0.replicated == importedB.events }) else { return nil }
            return replication
        }
        XCTAssertEqual(status.pendingEvents, 0, "a refused session waits for nothing")
        let text = try labB.muevalctl(["status"]).stdout
        XCTAssertTrue(text.contains("not replicated    session \(copyOfA1.id): its uuid \(a1.uuid) is lab-a's session in PostgreSQL"), text)
        XCTAssertTrue(labB.log.contains("which is lab-a's session in PostgreSQL: not replicating it"), labB.log)

        XCTAssertEqual(try postgres.query("SELECT lab || ':' || name || ':' || events FROM sessions WHERE uuid = '\(a1.uuid)'"), "lab-a:a-1:60")
        XCTAssertEqual(try remoteEvents(a1.uuid), original, "A's events, untouched")
        XCTAssertEqual(try postgres.query("SELECT lab || ':' || generation FROM replication WHERE session = '\(a1.uuid)'"), "lab-a:0")
        XCTAssertEqual(try postgres.query("SELECT lab FROM sessions WHERE uuid = '\(importedB.uuid)'"), "lab-b")
        XCTAssertEqual(try remoteEvents(importedB.uuid).count, original.count)

        // Lab A replicates on: a new session, and nothing of A's is refused.
        let a2 = try await record(labA, "a-2", events: 30, seed: 2)
        try await eventually(timeout: 60, "a-2 in PostgreSQL; log: \(labA.log)") { () -> Bool? in
            guard let replication = try await labA.ctl.call(ControlRequest.Status()).replication,
                  replication.sessions.contains(where: { $0.uuid == a2.uuid && $0.replicated == a2.events }) else { return nil }
            XCTAssertTrue(replication.sessions.allSatisfy { $0.ownedBy == nil }, "\(replication.sessions)")
            return true
        }
        XCTAssertEqual(try postgres.query("SELECT lab || ':' || name FROM sessions ORDER BY lab, name"), "lab-a:a-1\nlab-a:a-2\nlab-b:a-1")
    }

    /// An export keeps its uuid only in the lab it came from, and the outcome says which case it was.
    func testAnExportKeepsItsUUIDInItsOwnLabOnly() async throws {
        let lab = try await TestDaemon.start(arguments: ["--no-console"])
        defer { lab.cleanUp() }
        let session = try await record(lab, "s", events: 20, seed: 3)
        let export = directory + "/s.jsonl"
        XCTAssertEqual(try lab.muevalctl(["export", String(session.id), "--format", "jsonl", "-o", export]).status, 0)
        let line = try XCTUnwrap(try String(contentsOfFile: export, encoding: .utf8).split(separator: "\n").first { $0.hasPrefix("{\"session\"") })
        let host = ProcessInfo.processInfo.hostName
        XCTAssertTrue(line.contains("\"lab\":\"\(host)\""), "the export names its lab (the host name by default): \(line)")

        func importInto(_ name: String, lab: String?) throws -> ImportOutcome {
            let run = try runProcess(TestDaemon.executable("muevalctl"),
                                     ["import", export, "--data-dir", directory + "/" + name, "--json"] + (lab.map { ["--lab", $0] } ?? []))
            XCTAssertEqual(run.status, 0, run.stderr)
            return try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(run.stdout.utf8)).first)
        }
        let same = try importInto("same", lab: nil)
        XCTAssertEqual(same.session.uuid, session.uuid)
        XCTAssertEqual(same.origin, ExportOrigin(uuid: session.uuid, lab: host, identity: .kept))
        let other = try importInto("other", lab: "lab-c")
        XCTAssertNotEqual(other.session.uuid, session.uuid)
        XCTAssertEqual(other.origin, ExportOrigin(uuid: session.uuid, lab: host, identity: .otherLab))
    }
}
