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
    var scratch = ""

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: scratch)
    }

    func write(_ name: String, _ text: String) throws -> String {
        let path = scratch + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// An IMUT log as IMUTLib's JSON stream encoder writes it: "[", packets pretty-printed and indented
    /// by two spaces, separated by ",", and "\n]" when the log is finished.
    func imutLog(_ packets: [String], closed: Bool = true) -> String {
        let body = packets.map { packet in packet.split(separator: "\n", omittingEmptySubsequences: false).map { "\n  " + $0 }.joined() }
        return "[" + body.joined(separator: ",") + (closed ? "\n]" : "")
    }

    static let start = "2014-07-05T14:03:22+02:00"
    /// 2014-07-05T12:03:22Z.
    static let startSeconds = 1_404_561_802.0

    func packets(events: [(Double, String)], final: Bool = true) -> [String] {
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
    var fullLog: [(Double, String)] {
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

    func payloads(_ daemon: TestDaemon, _ session: Int64) async throws -> [(time: Double, fields: PlistValue)] {
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
}
