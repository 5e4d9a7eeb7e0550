import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import SessionModel
import WireProtocol
import XCTest

/// `muevalctl import` beyond IMUT logs: GPX tracks, muEval's own exports, malformed files, the daemon's limits and an
/// import while muevald is down. The fixtures' helpers are the suite's (ImportTests.swift).
extension ImportTests {
    private var track: String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="TrackApp" xmlns="http://www.topografix.com/GPX/1/1">
          <trk>
            <name>Campus walk</name>
            <trkseg>
              <trkpt lat="49.0069" lon="8.4037"><ele>115.2</ele><time>2014-07-05T12:03:20Z</time></trkpt>
              <trkpt lat="49.0071" lon="8.4040"><ele>115.9</ele><time>2014-07-05T12:03:25Z</time></trkpt>
            </trkseg>
            <trkseg>
              <trkpt lat="49.0080" lon="8.4050"><time>2014-07-05T12:03:40Z</time></trkpt>
            </trkseg>
          </trk>
        </gpx>
        """
    }

    func testAGPXTrackBecomesLocationEventsAndMergesIntoASessionOnTheAbsoluteTimeAxis() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let gpx = try write("walk.gpx", track)
        let run = try daemon.muevalctl(["import", gpx, "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let outcome = try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(run.stdout.utf8)).first)
        XCTAssertEqual(outcome.format, .gpx)
        XCTAssertEqual(outcome.session.name, "Campus walk")
        let points = try await payloads(daemon, outcome.session.id)
        XCTAssertEqual(points.map(\.time), [1_404_561_800, 1_404_561_805, 1_404_561_820])
        XCTAssertEqual(points.compactMap { $0.fields["segment"]?.number }, [1, 1, 2])
        XCTAssertEqual(points.first?.fields["altitude"]?.number, 115.2)
        XCTAssertEqual(points.first?.fields["sensor"]?.string, "location")

        // Merged into the IMUT session: its events and the track's, in the order they happened.
        let imut = try daemon.muevalctl(["import", try write("imut.json", imutLog(packets(events: fullLog))), "--json"])
        let session = try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(imut.stdout.utf8)).first).session
        let merge = try daemon.muevalctl(["import", gpx, "--into", String(session.id), "--again", "--json"])
        XCTAssertEqual(merge.status, 0, merge.stderr)
        let merged = try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(merge.stdout.utf8)).first)
        XCTAssertEqual(merged.session.id, session.id)
        XCTAssertEqual(merged.session.events, 21)
        XCTAssertEqual(merged.session.imports?.map(\.format), [.imut, .gpx])
        let all = try await payloads(daemon, session.id)
        XCTAssertEqual(all.map(\.time), all.map(\.time).sorted(), "stored in time order")
        XCTAssertEqual(all.first?.fields["sensor"]?.string, "location", "the track began two seconds before the log")
        XCTAssertEqual(all.filter { $0.fields["sensor"]?.string == "location" }.count, 5)
    }

    func testAnExportBecomesTheSameSessionInAnotherDataDirectory() async throws {
        let lab = try await TestDaemon.start()
        defer { lab.cleanUp() }
        let session = try await lab.ctl.call(ControlRequest.StartSession(name: "field test", user: "p07", notes: "rainy"))
        // A simulated phone: views with screenshots (data values), sensors; then an observer's note.
        let sim = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(lab.port)", "--scenario", "wordpress", "--seed", "5", "--events", "60", "--rate", "max",
        ], timeout: 120)
        XCTAssertEqual(sim.status, 0, sim.stdout + sim.stderr)
        XCTAssertEqual(try lab.muevalctl(["note", String(session.id), "the tester hesitated"]).status, 0)
        _ = try await lab.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
        let jsonl = scratch + "/s.jsonl", plist = scratch + "/s.plist"
        XCTAssertEqual(try lab.muevalctl(["export", String(session.id), "--format", "jsonl", "-o", jsonl]).status, 0)
        XCTAssertEqual(try lab.muevalctl(["export", String(session.id), "-o", plist]).status, 0)
        let original = try lab.muevalctl(["events", String(session.id), "--json", "--limit", "0"]).stdout
        XCTAssertGreaterThan(try SessionReader(path: session.path).blobPage(after: "", limit: 100, maxBytes: .max).count, 0,
                             "the session has data values to carry")

        // Another lab machine, with no muevald running: offline import into its data directory.
        let other = scratch + "/other-lab"
        let offline = try runProcess(TestDaemon.executable("muevalctl"), ["import", jsonl, "--data-dir", other, "--json"])
        XCTAssertEqual(offline.status, 0, offline.stderr)
        let copy = try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(offline.stdout.utf8)).first).session
        XCTAssertEqual(copy.uuid, session.uuid, "the same session")
        XCTAssertEqual(copy.name, "field test")
        XCTAssertEqual(copy.testUser, "p07")
        XCTAssertEqual(copy.notes, "rainy")
        let second = try await TestDaemon.start(dataDirectoryCopy: other)
        defer { second.cleanUp() }
        XCTAssertEqual(try second.muevalctl(["events", String(copy.id), "--json", "--limit", "0"]).stdout, original,
                       "every event, value and type as on the lab machine it came from")
        let again = scratch + "/again.plist"
        XCTAssertEqual(try second.muevalctl(["export", String(copy.id), "-o", again]).status, 0)
        let (copied, exported) = (try exportedElements(again), try exportedElements(plist))
        XCTAssertEqual(copied.count, exported.count)
        XCTAssertTrue(copied == exported, "screenshots and all, in the plist too: \(zip(copied, exported).filter { $0 != $1 }.count) elements differ")

        // The plist export imports to the same events (its arrival times aside, which it does not carry).
        let viaPlist = try second.muevalctl(["import", plist, "--json"])
        XCTAssertEqual(viaPlist.status, 0, viaPlist.stderr)
        let plistCopy = try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(viaPlist.stdout.utf8)).first).session
        XCTAssertNotEqual(plistCopy.uuid, session.uuid, "this catalog has that session already: a new uuid")
        let fromPlist = try await second.ctl.events(ControlRequest.Events(session: String(plistCopy.id), limit: 0))
        let fromLab = try await lab.ctl.events(ControlRequest.Events(session: String(session.id), limit: 0))
        XCTAssertEqual(fromPlist.map(\.payload), fromLab.map(\.payload))
        XCTAssertEqual(fromPlist.dropLast().map(\.timestamp), fromLab.dropLast().map(\.timestamp))
        // The note has no timestamp of its own in a plist: it takes the time of the event before it.
        XCTAssertEqual(fromPlist.last?.timestamp, fromLab.dropLast().last?.timestamp)
    }

    /// A plist export's elements before the session record (which says where the session came from).
    private func exportedElements(_ path: String) throws -> [String] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return Array(text.components(separatedBy: "\n\t<dict>").dropFirst().dropLast())
    }

    func testMalformedFilesNameWhereAndWhyAndStoreNothing() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let sync = "{\n  \"type\" : \"sync\",\n  \"abs-date-time\" : \"\(Self.start)\"\n}"
        let cases: [(name: String, content: String, error: String)] = [
            ("broken.json", imutLog([sync, "{\n  \"type\" : \"events\",\n  \"rel-time\" : tru\n}"]), "broken.json:8:18: expected a value"),
            ("unknown.json", imutLog([sync, "{\n  \"type\" : \"resync\"\n}"]),
             "unknown.json:6:3: packet 2: unknown packet type \"resync\"; expected session-init, sync, events or final"),
            ("type.json", imutLog([sync, "{\n  \"type\" : \"events\",\n  \"rel-time\" : 1,\n  \"events\" : [{\"event\" : \"backlightChange\", \"type\" : \"abs\", \"params\" : {\"val\" : \"bright\"}}]\n}"]),
             "type.json:6:3: packet 2: events[0]: backlightChange's \"val\" must be a number, found a string"),
            ("backwards.json", imutLog([sync, "{\n  \"type\" : \"events\",\n  \"rel-time\" : 10,\n  \"events\" : []\n}",
                                         "{\n  \"type\" : \"events\",\n  \"rel-time\" : 2,\n  \"events\" : []\n}"]),
             "backwards.json:11:3: packet 3: time goes backwards: rel-time 2.0 after 10.0"),
            ("delta.json", imutLog([sync, "{\n  \"type\" : \"events\",\n  \"rel-time\" : 1,\n  \"events\" : [{\"event\" : \"headingChange\", \"type\" : \"delta\", \"params\" : {\"heading\" : 5}}]\n}"]),
             "delta.json:6:3: packet 2: events[0]: a delta of headingChange before any absolute value to apply it to"),
            ("nosync.json", imutLog(["{\n  \"type\" : \"events\",\n  \"rel-time\" : 1,\n  \"events\" : []\n}"]),
             "nosync.json:2:3: packet 1: an events packet before the sync packet"),
            ("garbage.json", "[\n  {\"type\" : \"final\"}\n  {\"type\" : \"final\"}\n]", "garbage.json:3:3: expected ',' or ']' after a packet"),
            ("notime.gpx", "<gpx version=\"1.1\">\n  <trk><trkseg>\n    <trkpt lat=\"1\" lon=\"2\"></trkpt>\n  </trkseg></trk>\n</gpx>\n",
             "notime.gpx:3:27: a <trkpt> without <time>: it cannot be put on the session's clock"),
            ("unclosed.gpx", "<gpx version=\"1.1\">\n  <trk><trkseg>\n    <trkpt lat=\"1\" lon=\"2\"><time>2014-07-05T12:03:20Z</time>\n  </trkseg></trk>\n</gpx>\n",
             "unclosed.gpx:5:7: not well-formed XML: an end tag that does not match its start tag"),
            ("latitude.gpx", "<gpx version=\"1.1\"><trk><trkseg>\n<trkpt lat=\"91\" lon=\"2\"><time>2014-07-05T12:03:20Z</time></trkpt></trkseg></trk></gpx>",
             "a <trkpt> needs lat, a number from -90 to 90, found \"91\""),
            ("payload.jsonl", "{\"class\":\"CustomEvent\",\"device\":\"d\",\"id\":1,\"received\":1,\"timestamp\":1,\"timestampEstimated\":false,\"payload\":{\"class\":\"CustomEvent\"}}\n{\"class\":\"CustomEvent\",\"device\":\"d\",\"id\":2,\"received\":2,\"timestamp\":2,\"payload\":{\"class\":\"CustomEvent\",\"$when\":1}}\n",
             "payload.jsonl:2:104: the payload is not typed JSON: a key starting with a single '$' is reserved for typed values"),
            ("column.jsonl", "{\"class\":\"CustomEvent\",\"device\":\"d\",\"received\":\"soon\",\"timestamp\":1,\"payload\":{\"class\":\"CustomEvent\"}}\n",
             "column.jsonl:1:48: \"received\" must be a number"),
            ("blob.jsonl", "{\"class\":\"CustomEvent\",\"device\":\"d\",\"received\":1,\"timestamp\":1,\"payload\":{\"class\":\"CustomEvent\",\"image\":{\"$data\":\"\(String(repeating: "ab", count: 32))\",\"$size\":3}}}\n",
             "blob.jsonl:1:74: the event refers to data \(String(repeating: "ab", count: 32)) that the file does not carry"),
            ("class.plist", "<?xml version=\"1.0\"?>\n<plist version=\"1.0\">\n<array>\n\t<dict><key>session</key><dict><key>version</key><integer>1</integer></dict></dict>\n</array>\n</plist>\n",
             "class.plist:4:2: a session record that cannot be read"),
            ("cut.plist", "<?xml version=\"1.0\"?>\n<plist version=\"1.0\">\n<array>\n\t<dict>\n\t\t<key>class</key>\n", "cut.plist:4:2: the file ends inside this element"),
            // What kind of content and how much, never the content: the error goes back to the client.
            ("photo.bin", "\u{1}\u{2}\u{3}binary", "is not a file muEval imports: its format is unknown (9 bytes: binary data); muEval imports IMUT logs"),
            ("notes.txt", "Participant 7 said the button was hidden", "its format is unknown (40 bytes: text); muEval imports IMUT logs"),
        ]
        for (name, content, expected) in cases {
            let run = try daemon.muevalctl(["import", try write(name, content)])
            XCTAssertEqual(run.status, 1, name + ": " + run.stdout)
            XCTAssertTrue(run.stderr.contains(scratch + "/" + expected) || run.stderr.contains(expected), "\(name): \(run.stderr)")
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, "one line: \(run.stderr)")
        }
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(sessions, [], "nothing of a bad file is stored")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: daemon.dataDirectory + "/sessions")
        XCTAssertEqual(leftovers, [], "no draft file left behind")
    }

    func testLimitsAndStudyMembershipAreTheDaemons() async throws {
        let config = try write("muevald.toml", "[import]\nmax_events = 10\nmax_file_bytes = 100000\n")
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        defer { daemon.cleanUp() }
        let tooMany = try daemon.muevalctl(["import", try write("imut.json", imutLog(packets(events: fullLog)))])
        XCTAssertEqual(tooMany.status, 1)
        XCTAssertTrue(tooMany.stderr.contains("packet 5: more events than import.max-events (10)"), tooMany.stderr)
        let big = try daemon.muevalctl(["import", try write("big.json", "[" + String(repeating: " ", count: 100_001) + "]")])
        XCTAssertTrue(big.stderr.contains("more than import's max-file-bytes (100000)"), big.stderr)

        // Into a study: its participant, and the study's tasks in the file, as a recorded session would have.
        for command in [["study", "create", "notes"], ["study", "iteration", "add", "notes"], ["study", "participant", "add", "notes", "p07"]] {
            let made = try daemon.muevalctl(command)
            XCTAssertEqual(made.status, 0, made.stderr)
        }
        let unknown = try daemon.muevalctl(["import", try write("walk.gpx", track), "--study", "notes", "--iteration", "1", "--participant", "p99"])
        XCTAssertEqual(unknown.status, 1, "a participant the study does not have")
        let run = try daemon.muevalctl(["import", try write("walk.gpx", track), "--study", "notes", "--iteration", "1", "--participant", "p07", "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let session = try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(run.stdout.utf8)).first).session
        XCTAssertEqual(session.assignment, StudyAssignment(study: "notes", iteration: 1, participant: "p07"))
        XCTAssertEqual(session.testUser, "p07")
        XCTAssertEqual(try SessionReader(path: session.path).studyContext()?.assignment, session.assignment)
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(sessions.map(\.id), [session.id], "refused imports left nothing")
    }

    func testAnOfflineImportWaitsForTheDataDirectoryToBeFree() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let gpx = try write("walk.gpx", track)
        let busy = try runProcess(TestDaemon.executable("muevalctl"), ["import", gpx, "--data-dir", daemon.dataDirectory])
        XCTAssertEqual(busy.status, 1)
        XCTAssertTrue(busy.stderr.contains("is in use by a running muevald"), busy.stderr)
        let status = try await daemon.stop()
        XCTAssertEqual(status, 0)
        let offline = try runProcess(TestDaemon.executable("muevalctl"), ["import", gpx, "--data-dir", daemon.dataDirectory])
        XCTAssertEqual(offline.status, 0, offline.stderr)
        try await daemon.restart()
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(sessions.map(\.name), ["Campus walk"], "the daemon lists what was imported while it was down")
    }

    func sha256(of path: String) throws -> String {
        let run = try runProcess("/usr/bin/sha256sum", [path])
        return String(run.stdout.prefix(64))
    }
}
