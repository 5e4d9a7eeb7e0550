import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// Replication into a real PostgreSQL (docs/POSTGRES.md): two muevald "labs" record simulated sessions
/// into one database, through PostgreSQL stopping and starting and a `kill -9` of muevald; afterwards
/// every event is in PostgreSQL exactly once, as in the session files.
final class ReplicationTests: XCTestCase {
    private var postgres: TestPostgres!
    private var directory = ""

    override func setUpWithError() throws {
        if let reason = TestPostgres.unavailableReason { throw XCTSkip("CANNOT RUN HERE: " + reason) }
        postgres = try TestPostgres()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("replication-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        postgres?.cleanUp()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func lab(_ name: String) async throws -> TestDaemon {
        let config = directory + "/\(name).toml"
        try """
            [storage.postgres]
            url = "\(postgres.url)"
            lab = "\(name)"
            batch_events = 250
            [transcription]
            enabled = false
            """.write(toFile: config, atomically: true, encoding: .utf8)
        return try await TestDaemon.start(arguments: ["--config", config])
    }

    /// A session on `daemon` with `events` simulated events, stopped.
    @discardableResult
    private func record(_ daemon: TestDaemon, _ name: String, events: Int, seed: Int) async throws -> SessionRecord {
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: name))
        let run = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "wordpress", "--seed", String(seed), "--events", String(events), "--rate", "max",
        ], timeout: 120)
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
        return session
    }

    /// Until the status says every session of `daemon` is in PostgreSQL as far as its catalog counts
    /// (a status of a pass before the last commits says "caught up" too, with what it had seen).
    private func caughtUp(_ daemon: TestDaemon, timeout: Double = 60) async throws {
        try await eventually(timeout: timeout, "replication to catch up; log: \(daemon.log)") { () -> Bool? in
            let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
            guard let replication = try await daemon.ctl.call(ControlRequest.Status()).replication,
                  replication.state == "replicating", replication.pendingEvents == 0 else { return nil }
            let replicated = Dictionary(replication.sessions.map { ($0.uuid, $0.replicated) }) { first, _ in first }
            return sessions.allSatisfy { replicated[$0.uuid] == $0.events } ? true : nil
        }
    }

    /// Every local event of `sessions`, as (uuid, id, class, timestamp) rows, in order.
    private func local(_ sessions: [SessionRecord]) throws -> [String] {
        try sessions.sorted { $0.uuid < $1.uuid }.flatMap { session in
            try SessionReader(path: session.path).events().map { "\(session.uuid)|\($0.id)|\($0.eventClass)|\($0.timestamp)" }
        }
    }

    private func remote() throws -> [String] {
        // PostgreSQL prints 1298155386.0 as 1298155386: the timestamp is compared as a number.
        try postgres.query("SELECT session::text || '|' || id || '|' || class || '|' || \"timestamp\" FROM events ORDER BY session::text, id")
            .split(separator: "\n").map { row in
                var fields = row.split(separator: "|").map(String.init)
                fields[3] = "\(Double(fields[3]) ?? .nan)"
                return fields.joined(separator: "|")
            }
    }

    func testTwoLabsReplicateEveryEventExactlyOnceThroughOutagesAndAKill() async throws {
        let labA = try await lab("lab-a")
        defer { labA.cleanUp() }
        var sessions = [try await record(labA, "a-1", events: 60, seed: 1)]
        try await caughtUp(labA)

        // PostgreSQL goes away: lab A records on; lab B starts without it and records too.
        try postgres.stop()
        sessions.append(try await record(labA, "a-2", events: 80, seed: 2))
        let labB = try await lab("lab-b")
        defer { labB.cleanUp() }
        sessions.append(try await record(labB, "b-1", events: 70, seed: 3))
        let down = try await eventually(timeout: 30, "lab B to say PostgreSQL is unreachable") { () -> ReplicationStatus? in
            let replication = try await labB.ctl.call(ControlRequest.Status()).replication
            return replication?.state.hasPrefix("unreachable") == true ? replication : nil
        }
        XCTAssertEqual(down.target, "127.0.0.1:\(postgres.port)/postgres", "the target, without credentials")
        XCTAssertEqual(try labB.muevalctl(["status"]).stdout.contains("postgres            127.0.0.1:\(postgres.port)/postgres: unreachable"), true)

        // A backlog on lab A, PostgreSQL back, and lab A killed wherever its catching up has got to.
        sessions.append(try await record(labA, "a-3", events: 3000, seed: 4))
        try postgres.start()
        let a3 = sessions[3].uuid
        let atKill = try await eventually(timeout: 60, "lab A to start catching up a-3; its log: \(labA.log)\npostgres: \(postgres.log)") { () -> Int? in
            let count = Int(try self.postgres.query("SELECT count(*) FROM events WHERE session = '\(a3)'")) ?? 0
            return count > 0 ? count : nil
        }
        print("ReplicationTests: a-3 had \(atKill) of 3000 events in PostgreSQL when lab A was killed")
        try await labA.kill()
        try await labA.restart()
        try await caughtUp(labA)
        try await caughtUp(labB)

        // /metrics says so too.
        let link = try await labB.consoleLink()
        let origin = link.url.components(separatedBy: "/").prefix(3).joined(separator: "/")
        let metrics = try runProcess("/usr/bin/curl", ["-sS", origin + "/metrics"])
        XCTAssertTrue(metrics.stdout.contains("mueval_replication_up 1"), metrics.stdout + metrics.stderr)
        XCTAssertTrue(metrics.stdout.contains("mueval_replication_pending_events 0"), metrics.stdout)

        let remote = try remote(), local = try local(sessions)
        XCTAssertEqual(remote.count, local.count, "as many events in PostgreSQL as in the files (a-3 had \(atKill) of 3000 at the kill)")
        XCTAssertEqual(Set(remote).count, remote.count, "no event twice")
        XCTAssertTrue(remote == local, "the same events: first difference \(zip(remote, local).first { $0 != $1 }.map { "\($0) vs \($1)" } ?? "none")")
        XCTAssertEqual(try postgres.query("SELECT lab || ':' || name FROM sessions ORDER BY name"), "lab-a:a-1\nlab-a:a-2\nlab-a:a-3\nlab-b:b-1")
        // The screenshots the payloads name are there, once each.
        let missing = try postgres.query("""
            SELECT count(*) FROM (SELECT DISTINCT jsonb_path_query(payload, 'strict $.**.\"$data\"') #>> '{}' AS sha FROM events) named
            WHERE sha NOT IN (SELECT sha256 FROM blobs)
            """)
        XCTAssertEqual(missing, "0")
        XCTAssertNotEqual(try postgres.query("SELECT count(*) FROM blobs"), "0")
        XCTAssertEqual(try postgres.query("SELECT count(*) FROM devices"), "4")

        // Read back: every lab's sessions, and a report from PostgreSQL equal to the one from the file.
        let listed = try labB.muevalctl(["sessions", "--from", postgres.url, "--json"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let shared = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []
        XCTAssertEqual(shared.map { "\($0["lab"] ?? ""):\($0["name"] ?? ""):\($0["replicated"] ?? "")" },
                       ["lab-a:a-1:60", "lab-a:a-2:80", "lab-a:a-3:3000", "lab-b:b-1:70"])
        let a3Record = sessions[3]
        let fromFile = try labA.muevalctl(["report", a3Record.path, "--out", directory + "/from-file"])
        XCTAssertEqual(fromFile.status, 0, fromFile.stderr)
        let fromPostgres = try labA.muevalctl(["report", "--from", postgres.url, "lab-a:a-3", "--out", directory + "/from-postgres"])
        XCTAssertEqual(fromPostgres.status, 0, fromPostgres.stderr)
        try assertSameReport(directory + "/from-file", directory + "/from-postgres")

        // The example query of docs/POSTGRES.md works.
        let taps = try postgres.query("""
            SELECT s.lab, e.payload->>'view' AS view, count(*)
            FROM events e JOIN sessions s ON s.uuid = e.session
            WHERE e.class = 'UserInputEvent' AND e.payload->>'type' = 'touch' AND e.payload->>'phase' = 'ended'
            GROUP BY 1, 2 ORDER BY 3 DESC
            """)
        XCTAssertTrue(taps.contains("lab-a|") && taps.contains("lab-b|"), taps)

        let ambiguous = try labA.muevalctl(["report", "--from", postgres.url, "nobody", "--out", directory + "/none"])
        XCTAssertEqual(ambiguous.status, 1)
        XCTAssertTrue(ambiguous.stderr.contains("the shared database has no session \"nobody\""), ambiguous.stderr)

        // A database a newer muEval migrated is left alone, and said so; lab B records on.
        _ = try postgres.query("UPDATE mueval_schema SET version = 99")
        try await labB.kill()
        try await labB.restart()
        let refused = try await eventually(timeout: 30, "lab B to refuse the newer schema") { () -> String? in
            let state = try await labB.ctl.call(ControlRequest.Status()).replication?.state ?? ""
            return state.hasPrefix("not replicating") ? state : nil
        }
        XCTAssertTrue(refused.contains("schema version 99, written by a newer muEval"), refused)
        try await record(labB, "b-2", events: 20, seed: 5)
    }

    func testAStudyReportFromPostgreSQLEqualsTheLabsOwn() async throws {
        let lab = try await lab("lab-s")
        defer { lab.cleanUp() }
        for command in [["study", "create", "wp"], ["study", "iteration", "add", "wp"], ["study", "participant", "add", "wp", "P01"],
                        ["study", "participant", "add", "wp", "P02"],
                        ["questionnaire", "sus", "wp", "--iteration", "1", "--participant", "P01", "--answers", "4,2,4,1,5,2,5,1,4,2"]] {
            let run = try lab.muevalctl(command)
            XCTAssertEqual(run.status, 0, "\(command): \(run.stderr)")
        }
        for (participant, seed) in [("P01", 7), ("P02", 8)] {
            let started = try lab.muevalctl(["start", "--study", "wp", "--iteration", "1", "--participant", participant])
            XCTAssertEqual(started.status, 0, started.stderr)
            let run = try runProcess(TestDaemon.executable("muevalsim"), [
                "--connect", "127.0.0.1:\(lab.port)", "--scenario", "wordpress", "--seed", String(seed), "--events", "150", "--rate", "max",
            ], timeout: 120)
            XCTAssertEqual(run.status, 0, run.stderr)
            _ = try lab.muevalctl(["stop", started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
        }
        try await caughtUp(lab)
        try await eventually(timeout: 30, "the study in PostgreSQL") { () -> Bool? in
            try self.postgres.query("SELECT count(*) FROM studies WHERE name = 'wp' AND jsonb_array_length(responses->'sus') = 1") == "1" ? true : nil
        }

        let own = try lab.muevalctl(["report", "--study", "wp", "--out", directory + "/own"])
        XCTAssertEqual(own.status, 0, own.stderr)
        let shared = try lab.muevalctl(["report", "--study", "wp", "--from", postgres.url, "--out", directory + "/shared"])
        XCTAssertEqual(shared.status, 0, shared.stderr)
        try assertSameReport(directory + "/own", directory + "/shared")
        let missing = try lab.muevalctl(["report", "--study", "nothing", "--from", postgres.url, "--out", directory + "/none"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("the shared database has no study \"nothing\""), missing.stderr)
    }

    /// `import --into` renumbers the session's events by time: PostgreSQL forgets the old numbering
    /// and gets the session again, in the new one.
    func testAnImportIntoAReplicatedSessionArrivesInItsNewNumbering() async throws {
        let lab = try await lab("lab-i")
        defer { lab.cleanUp() }
        let session = try await record(lab, "walk", events: 40, seed: 9)
        try await caughtUp(lab)
        let before = try remote()
        let gpx = directory + "/walk.gpx"
        // Points in the middle of the recording (it starts at 2011-02-19T22:43:06Z): later events move up.
        try """
            <?xml version="1.0"?>
            <gpx version="1.1" creator="test"><trk><name>walk</name><trkseg>
              <trkpt lat="48.1" lon="11.5"><time>2011-02-19T22:43:08Z</time></trkpt>
              <trkpt lat="48.2" lon="11.6"><time>2011-02-19T22:43:12Z</time></trkpt>
            </trkseg></trk></gpx>
            """.write(toFile: gpx, atomically: true, encoding: .utf8)
        let merged = try lab.muevalctl(["import", gpx, "--into", String(session.id)])
        XCTAssertEqual(merged.status, 0, merged.stderr)
        let after = try await eventually(timeout: 60, "the merged session in PostgreSQL (\((try? self.remote().count) ?? -1) events there, "
                                             + "\((try? self.local([session]).count) ?? -1) in the file, \(before.count) before; generation "
                                             + "\((try? self.postgres.query("SELECT generation FROM replication")) ?? "?")); log: \(lab.log)") { () -> [String]? in
            let remote = try self.remote(), local = try self.local([session])
            return remote == local && local.count == before.count + 2 ? remote : nil
        }
        XCTAssertNotEqual(Array(after.prefix(before.count)), before, "the events were renumbered")
        XCTAssertEqual(try postgres.query("SELECT generation FROM replication"), "1")
    }

    /// Both report directories hold the same files with the same bytes, but for the time each was made.
    private func assertSameReport(_ first: String, _ second: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let files = try FileManager.default.subpathsOfDirectory(atPath: first).sorted()
        XCTAssertEqual(try FileManager.default.subpathsOfDirectory(atPath: second).sorted(), files, file: file, line: line)
        XCTAssertGreaterThan(files.count, 3, "index, style, script and screenshots", file: file, line: line)
        func read(_ path: String) -> Data? {
            FileManager.default.contents(atPath: path).map { data in
                !path.hasSuffix(".html") ? data : Data(String(decoding: data, as: UTF8.self)
                    .replacingOccurrences(of: #"generated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"#, with: "generated …", options: .regularExpression).utf8)
            }
        }
        for name in files {
            let a = read(first + "/" + name), b = read(second + "/" + name)
            XCTAssertTrue(a == b, "\(name) differs between the two reports: \(Self.firstDifference(a ?? Data(), b ?? Data()))", file: file, line: line)
        }
    }

    /// Where two files part: a little of each around the first differing byte.
    private static func firstDifference(_ a: Data, _ b: Data) -> String {
        let index = (Array(zip(a, b)).firstIndex { $0 != $1 }).map { a.startIndex + $0 } ?? min(a.count, b.count)
        func around(_ data: Data) -> String { String(decoding: data[max(0, index - 120)..<min(data.count, index + 120)], as: UTF8.self) }
        return "at byte \(index): \(around(a)) | \(around(b))"
    }
}
