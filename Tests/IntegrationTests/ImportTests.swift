import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import SessionModel
import WireProtocol
import XCTest

/// `muevalctl import` end to end: fixtures written here from the formats' documentation (docs/IMPORT.md,
/// fza/IMUTLib's source), imported through a real muevald, read back from the session files.
final class ImportTests: XCTestCase {
    private var scratch = ""

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: scratch)
    }

    private func write(_ name: String, _ text: String) throws -> String {
        let path = scratch + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// An IMUT log as IMUTLib's JSON stream encoder writes it: "[", packets pretty-printed and indented
    /// by two spaces, separated by ",", and "\n]" when the log is finished.
    private func imutLog(_ packets: [String], closed: Bool = true) -> String {
        let body = packets.map { packet in packet.split(separator: "\n", omittingEmptySubsequences: false).map { "\n  " + $0 }.joined() }
        return "[" + body.joined(separator: ",") + (closed ? "\n]" : "")
    }

    private static let start = "2014-07-05T14:03:22+02:00"
    /// 2014-07-05T12:03:22Z.
    private static let startSeconds = 1_404_561_802.0

    private func packets(events: [(Double, String)], final: Bool = true) -> [String] {
        var packets = [
            """
            {
              "type" : "session-init",
              "sid" : "s1",
              "seq" : 0,
              "modules" : ["backlight", "batteryLevel", "batteryState", "heading", "location", "orientation", "uiViewController", "screenRecorder"],
              "meta" : {"imut-version" : "0.1.0", "platform-name" : "iPhone OS", "platform-version" : "7.1.2", "device-model" : "iPhone",
                        "app-id" : "de.example.notes", "app-version" : "1.2",
                        "screen-size" : {"scale" : 2, "points" : {"width" : 320, "height" : 568}, "device" : {"width" : 640, "height" : 1136}}}
            }
            """,
            """
            {
              "type" : "sync",
              "sid" : "s1",
              "seq" : 1,
              "abs-date-time" : "\(Self.start)",
              "timebase" : "default timer"
            }
            """,
        ]
        for (index, (time, events)) in events.enumerated() {
            packets.append("""
                {
                  "type" : "events",
                  "sid" : "s1",
                  "seq" : \(index + 2),
                  "rel-time" : \(time),
                  "events" : [\(events)]
                }
                """)
        }
        if final { packets.append("{\n  \"type\" : \"final\",\n  \"sid\" : \"s1\",\n  \"seq\" : 99,\n  \"session-duration\" : 30.5,\n  \"event-count\" : 14\n}") }
        return packets
    }

    /// Every module, with deltas after the initial absolute values and the recorder's start and stop.
    private var fullLog: [(Double, String)] {
        [
            (0, """
                {"event" : "backlightChange", "type" : "abs", "params" : {"val" : 0.5}, "mark" : "initial"},
                {"event" : "batteryLevelChange", "type" : "abs", "params" : {"level" : 0.9}, "mark" : "initial"},
                {"event" : "batteryStateChange", "type" : "status", "params" : {"state" : "unplugged"}, "mark" : "initial"},
                {"event" : "headingChange", "type" : "abs", "params" : {"heading" : 90.0}, "mark" : "initial"},
                {"event" : "locationChange", "type" : "abs", "params" : {"lat" : 49.0069, "lon" : 8.4037}, "mark" : "initial"},
                {"event" : "deviceOrientationChange", "type" : "status", "params" : {"orientation" : "portrait"}, "mark" : "initial"},
                {"event" : "screenRecorderStart", "type" : "other"},
                {"event" : "uiViewControllerChange", "type" : "abs", "params" : {"class" : "NotesListViewController", "class-short" : "NotesList"}}
                """),
            (2.25, """
                {"event" : "backlightChange", "type" : "delta", "params" : {"val" : 0.2}},
                {"event" : "headingChange", "type" : "delta", "params" : {"heading" : 30.0}}
                """),
            (5.5, """
                {"event" : "uiViewControllerChange", "type" : "abs", "params" : {"class" : "NoteEditorViewController"}},
                {"event" : "locationChange", "type" : "delta", "params" : {"lat" : 49.007, "lon" : 8.4039, "distance" : 16.1}}
                """),
            (12.75, """
                {"event" : "backlightChange", "type" : "delta", "params" : {"val" : -0.3}},
                {"event" : "batteryLevelChange", "type" : "delta", "params" : {"level" : -0.1}},
                {"event" : "headingChange", "type" : "delta", "params" : {"heading" : 70.0}},
                {"event" : "deviceOrientationChange", "type" : "status", "params" : {"orientation" : "landscapeLeft"}}
                """),
            (30.5, """
                {"event" : "screenRecorderStop", "type" : "other", "params" : {"file" : "1_s1_screen.1.m4v", "duration" : 30.5}, "mark" : "final"},
                {"event" : "batteryStateChange", "type" : "status", "params" : {"state" : "charging"}, "mark" : "final"}
                """),
        ]
    }

    private func payloads(_ daemon: TestDaemon, _ session: Int64) async throws -> [(time: Double, fields: PlistValue)] {
        try await daemon.ctl.events(ControlRequest.Events(session: String(session), limit: 0)).map { event in
            (event.timestamp, try TypedJSON.decodeLeavingBlobs(Array(event.payload.utf8)))
        }
    }

    func testAnIMUTLogBecomesASessionWithItsAbsoluteValuesRebuiltFromDeltas() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let log = try write("imut_s1.json", imutLog(packets(events: fullLog)))
        let run = try daemon.muevalctl(["import", log, "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let outcome = try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(run.stdout.utf8)).first)
        XCTAssertEqual(outcome.format, .imut)
        XCTAssertEqual(outcome.events, 18)
        XCTAssertNil(outcome.cutShort, "a finished log with its final packet is whole")
        XCTAssertEqual(outcome.session.state, .stopped)
        XCTAssertEqual(outcome.session.started, Self.startSeconds)
        XCTAssertEqual(outcome.session.imports?.first?.sha256, try sha256(of: log))

        let events = try await payloads(daemon, outcome.session.id)
        func values(_ sensor: String, _ key: String) -> [Double] {
            events.filter { $0.fields["sensor"]?.string == sensor && $0.fields[key] != nil }.compactMap { $0.fields[key]?.number }
        }
        // Rebuilt one by one: backlight new − old, battery new − old, heading old − new (so 60 − 70 wraps to 350).
        XCTAssertEqual(values("backlight", "brightness"), [0.5, 0.7, 0.4])
        XCTAssertEqual(values("battery", "level"), [0.9, 0.8])
        XCTAssertEqual(values("heading", "magneticHeading"), [90, 60, 350])
        XCTAssertEqual(values("location", "latitude"), [49.0069, 49.007])
        XCTAssertEqual(values("location", "distance"), [16.1])
        XCTAssertEqual(events.filter { $0.fields["sensor"]?.string == "orientation" }.compactMap { $0.fields["orientation"]?.string },
                       ["portrait", "landscapeLeft"])
        XCTAssertEqual(events.filter { $0.fields["sensor"]?.string == "battery" }.compactMap { $0.fields["state"]?.string },
                       ["unplugged", "charging"])
        let views = events.filter { $0.fields["class"]?.string == "UserInterfaceEvent" }
        XCTAssertEqual(views.compactMap { $0.fields["view"]?.string }, ["NotesListViewController", "NoteEditorViewController"])
        XCTAssertEqual(views.map(\.time), [Self.startSeconds, Self.startSeconds + 5.5], "rel-time is seconds since abs-date-time")
        XCTAssertEqual(views.first?.fields["type"]?.string, "viewDidAppear")
        let recorder = events.filter { $0.fields["class"]?.string == "ApplicationEvent" }
        XCTAssertEqual(recorder.compactMap { $0.fields["type"]?.string }, ["recorderStart", "recorderStop"])
        XCTAssertEqual(recorder.last?.fields["file"]?.string, "1_s1_screen.1.m4v")
        XCTAssertEqual(events.first?.fields["imut"]?["mark"]?.string, "initial", "the initial mark is kept")

        // The device as session-init describes it.
        let devices = try SessionReader(path: outcome.session.path).devices()
        XCTAssertEqual(devices.first?.model, "iPhone")
        XCTAssertEqual(devices.first?.screenWidth, 320)

        // The same file again is recognised by its content.
        let again = try daemon.muevalctl(["import", log])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.contains("already imported as session \(outcome.session.id)"), again.stderr)
        XCTAssertEqual(try daemon.muevalctl(["import", log, "--again", "--name", "second"]).status, 0)
    }

    /// The imported session's report, in Chromium: the log's view changes and sensor values as the log
    /// describes them, each absolute value rebuilt from the deltas.
    func testTheReportOfAnImportedIMUTLogShowsItsViewsAndValuesInChromium() async throws {
        if let missing = try BrowserRequirement.missing() { throw XCTSkip(missing) }
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let run = try daemon.muevalctl(["import", try write("imut_s1.json", imutLog(packets(events: fullLog))), "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let session = try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(run.stdout.utf8)).first).session
        let out = scratch + "/report"
        let report = try daemon.muevalctl(["report", String(session.id), "--out", out])
        XCTAssertEqual(report.status, 0, report.stderr)
        let expected = #"{"views": ["NotesListViewController", "NoteEditorViewController"], "sensors": {"backlight": ["brightness=0.5", "brightness=0.7", "brightness=0.4"], "heading": ["magneticHeading=90", "magneticHeading=60", "magneticHeading=350"], "battery": ["level=0.9", "level=0.8"]}}"#
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/import_report_browser.py").path
        let browser = try runProcess(BrowserRequirement.python, [script, out + "/index.html", expected], timeout: 120)
        XCTAssertEqual(browser.status, 0, "import_report_browser.py: \(browser.stdout)\n\(browser.stderr)")
    }

    /// The console's session page says where an imported session came from, and why it was cut short;
    /// a file's name is text there, never markup.
    func testTheConsoleSaysWhereAnImportedSessionCameFrom() async throws {
        if let missing = try BrowserRequirement.missing() { throw XCTSkip(missing) }
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let whole = imutLog(packets(events: fullLog, final: false), closed: false)
        let name = "<img src=x onerror=window.__pwned=1>.json.tmp"
        let run = try daemon.muevalctl(["import", try write(name, String(whole[..<whole.range(of: "screenRecorderStop")!.lowerBound])), "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let session = try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(run.stdout.utf8)).first).session
        let link = try await daemon.consoleLink().url
        let expected = #"["<img src=x onerror=window.__pwned=1>.json.tmp (imut, 16 events", "cut short: the log ends inside the packet at line"]"#
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/import_console_browser.py").path
        let browser = try runProcess(BrowserRequirement.python, [script], environment: [
            "CONSOLE_LOGIN_URL": link, "SESSION_ID": String(session.id), "EXPECTED": expected,
        ], timeout: 120)
        XCTAssertEqual(browser.status, 0, "import_console_browser.py: \(browser.stdout)\n\(browser.stderr)")
    }

    func testTheRecordingALogNamesIsAttachedOnItsClock() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") else {
            throw XCTSkip("CANNOT RUN HERE: /usr/bin/ffmpeg is missing (make test-deps installs it)")
        }
        let video = scratch + "/1_s1_screen.1.m4v"
        let encode = try runProcess("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=duration=3:size=160x120:rate=10",
                                                        "-c:v", "libx264", "-pix_fmt", "yuv420p", "-f", "mp4", video])
        XCTAssertEqual(encode.status, 0, encode.stderr)
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let log = try write("imut_s1.json", imutLog(packets(events: fullLog)))
        let unnamed = scratch + "/other.m4v"
        try FileManager.default.copyItem(atPath: video, toPath: unnamed)
        let refused = try daemon.muevalctl(["import", log, unnamed])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("is not a recording the log names (it names 1_s1_screen.1.m4v)"), refused.stderr)

        let run = try daemon.muevalctl(["import", log, video, "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let outcome = try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(run.stdout.utf8)).first)
        XCTAssertEqual(outcome.attached, ["1_s1_screen.1.m4v"])
        let streams = try SessionReader(path: outcome.session.path).mediaStreams()
        XCTAssertEqual(streams.first?.stream, "screen")
        XCTAssertEqual(streams.first?.start, Self.startSeconds, "the recorder started at rel-time 0")
        let out = scratch + "/media"
        let media = try daemon.muevalctl(["media", String(outcome.session.id), "--out", out])
        XCTAssertEqual(media.status, 0, media.stderr)
        let file = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: out).first)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out + "/" + file)), try Data(contentsOf: URL(fileURLWithPath: video)),
                       "the attached recording comes back byte for byte")
    }

    func testAnUnfinishedTmpLogIsImportedUpToItsLastWholePacketAndSaysSo() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let whole = imutLog(packets(events: fullLog, final: false), closed: false)
        // IMUT's .tmp log: no closing bracket, and here cut inside the last packet too.
        let cut = String(whole[..<whole.range(of: "screenRecorderStop")!.lowerBound])
        let run = try daemon.muevalctl(["import", try write("imut_s1.json.tmp", cut), "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let outcome = try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(run.stdout.utf8)).first)
        XCTAssertEqual(outcome.events, 16, "the four packets before the cut one")
        XCTAssertTrue(outcome.cutShort?.contains("ends inside the packet at line") == true, outcome.cutShort ?? "nil")
        XCTAssertEqual(outcome.session.imports?.first?.cutShort, outcome.cutShort, "the session keeps why")

        let unclosed = try daemon.muevalctl(["import", try write("closed-packets.json.tmp", whole), "--json"])
        let second = try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(unclosed.stdout.utf8)).first)
        XCTAssertEqual(second.events, 18)
        XCTAssertTrue(second.cutShort?.contains("without its closing ']'") == true, second.cutShort ?? "nil")
    }

    func testTheEarlierIMUTFormatWithPayloadAndAbsTime() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let log = imutLog([
            "{\n  \"type\" : \"sync\",\n  \"sid\" : \"old\",\n  \"seq\" : 0,\n  \"abs-time\" : \"2014-06-28T10:00:00Z\",\n  \"time-source\" : \"screen\"\n}",
            "{\n  \"type\" : \"events\",\n  \"sid\" : \"old\",\n  \"seq\" : 1,\n  \"rel-time\" : 1.5,\n  \"payload\" : [{\"event\" : \"uiViewControllerChange\", \"type\" : \"abs\", \"params\" : {\"class-short\" : \"Start\"}}]\n}",
        ])
        let run = try daemon.muevalctl(["import", try write("old.json", log), "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let outcome = try XCTUnwrap(try JSONDecoder().decode([ImportOutcome].self, from: Data(run.stdout.utf8)).first)
        let events = try await payloads(daemon, outcome.session.id)
        XCTAssertEqual(events.map(\.time), [1_403_949_601.5])
        XCTAssertEqual(events.first?.fields["view"]?.string, "Start")
    }

    private let track = """
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

    private func sha256(of path: String) throws -> String {
        let run = try runProcess("/usr/bin/sha256sum", [path])
        return String(run.stdout.prefix(64))
    }
}
