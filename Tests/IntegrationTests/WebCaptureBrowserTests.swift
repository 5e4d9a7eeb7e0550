import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// muEval for the web (issue 40) end to end: Examples/webnotes served from an origin of its own (python's
/// http.server), instrumented with the capture.js muevald serves, in Debian's Chromium as a phone
/// (Tests/Browser/webcapture_browser.py: trusted touches, a fake microphone, DevTools motion sensors, the
/// network cut), recording into the real muevald over wss:// on the console's listener with a test CA.
/// This side sets the study up with muevalctl, as a lab would, and reads what was stored.
final class WebCaptureBrowserTests: XCTestCase {
    private static let browser = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Browser")
    private static let script = browser.appendingPathComponent("webcapture_browser.py").path
    private static let webnotes = browser.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/webnotes").path
    private static let study = "webnotes"
    private static let tasks = [("Add a note", "event:NoteAdded"), ("Find the note", "event:NoteFound")]

    private var directory = ""
    private var certificates: TestCertificates!

    override func setUpWithError() throws {
        if let missing = try BrowserRequirement.missing() { throw XCTSkip(missing) }
        if let reason = TestCertificates.unavailableReason { throw XCTSkip("CANNOT RUN HERE: " + reason) }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("webcapture-\(UUID().uuidString.prefix(8))").path
        certificates = try TestCertificates(directory: directory)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// webnotes on a free loopback port of its own: a web app's origin, not the console's.
    private func serveWebnotes() async throws -> (server: FollowingProcess, origin: String) {
        let server = try FollowingProcess(BrowserRequirement.python, ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
                                                                     "--directory", Self.webnotes])
        let port = try await eventually(timeout: 30, "http.server to listen: \(server.stderr)") { () -> String? in
            // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
            server.lines.first { $0.hasPrefix("Serving HTTP") }?.components(separatedBy: " port ").last?.components(separatedBy: " ").first
        }
        return (server, "http://127.0.0.1:\(port)")
    }

    /// muevald with the console on HTTPS (the capture endpoint with it) and webnotes' origin allowed.
    private func daemon(origin: String, transcription: Bool) async throws -> (daemon: TestDaemon, console: String) {
        let config = directory + "/muevald.toml"
        try """
            [console]
            tls_certificate = "\(certificates.certificateFile)"
            tls_key = "\(certificates.keyFile)"
            [transcription]
            enabled = \(transcription)
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try await TestDaemon.start(arguments: ["--config", config, "--web-origin", origin])
        let link = try await daemon.consoleLink()
        XCTAssertTrue(link.url.hasPrefix("https://127.0.0.1:"), link.url)
        return (daemon, link.url.components(separatedBy: "/login").first ?? link.url)
    }

    /// The study with webnotes as its app, `count` testers enrolled in person and all recruited, done when all are.
    private func recruit(_ daemon: TestDaemon, app: String, count: Int) throws -> [Invitation] {
        let consent = directory + "/consent.txt"
        try "We record your touches, the screen and your voice while you test the app.".write(toFile: consent, atomically: true, encoding: .utf8)
        _ = try daemon.ok(["pool", "configure", "--consent-file", consent, "--field", "device=Phone:iPhone,Android"])
        for _ in 0..<count { _ = try daemon.ok(["pool", "enrol", "device=iPhone"]) }
        _ = try daemon.ok(["study", "create", Self.study, "--app-id", "webnotes", "--description", "Notes <b>on the go</b>", "--web-app", app])
        for (name, success) in Self.tasks { _ = try daemon.ok(["study", "task", "add", Self.study, name, "--success", success]) }
        _ = try daemon.ok(["study", "recruit", Self.study, "--count", String(count), "--target", String(count), "--seed", "1"])
        let invitations = try daemon.json(RecruitmentStatus.self, ["study", "status", Self.study]).invitations
        XCTAssertEqual(invitations.count, count)
        return invitations
    }

    /// One step of the script; its RESULT line.
    private func browser(_ arguments: [String], _ daemon: TestDaemon, timeout: Double = 240) throws -> [String: Any] {
        let run = try runProcess(BrowserRequirement.python, [Self.script] + arguments, timeout: timeout)
        let output = "\(arguments[0]): status \(run.status)\n\(run.stdout)\n\(run.stderr)\nmuevald log:\n\(daemon.log)"
        XCTAssertEqual(run.status, 0, output)
        let line = try XCTUnwrap(run.stdout.split(separator: "\n").last { $0.hasPrefix("RESULT ") }, output)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.dropFirst("RESULT ".count).utf8)) as? [String: Any])
    }

    private func payload(_ event: StoredEvent) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(event.payload.utf8)) as? [String: Any], event.payload)
    }

    private func invitation(_ daemon: TestDaemon, _ code: String, is status: InvitationStatus) async throws -> Invitation {
        try await eventually(timeout: 60, "invitation \(code) \(status.rawValue); \(daemon.log)") { () -> Invitation? in
            try daemon.json(RecruitmentStatus.self, ["study", "status", Self.study]).invitations.first { $0.code == code && $0.status == status }
        }
    }

    func testAnInvitedTesterDoesTheTasksInWebnotesAndTheStudyCompletes() async throws {
        if !FileManager.default.isExecutableFile(atPath: "/usr/bin/espeak-ng") {
            throw XCTSkip("CANNOT RUN HERE: /usr/bin/espeak-ng is missing (make test-deps installs espeak-ng)")
        }
        let (web, origin) = try await serveWebnotes()
        defer { web.signal(SIGTERM) }
        let (daemon, console) = try await daemon(origin: origin, transcription: true)
        defer { daemon.cleanUp() }
        let invitations = try recruit(daemon, app: "\(origin)/?server=\(console)", count: 1)
        let code = try XCTUnwrap(invitations.first?.code)

        let did = try browser(["tester", "\(console)/i/\(code)", certificates.certificateFile, #"["Add a note", "Find the note"]"#],
                              daemon, timeout: 300)
        let touchIds = Set(try XCTUnwrap(did["touchIds"] as? [Int]))

        // The recording stopped on the overlay: the invitation is done, and with it the study (target 1).
        let done = try await invitation(daemon, code, is: .done)
        let completed = try await eventually(timeout: 120, "the study's completion") { () -> Recruitment? in
            let recruitment = try daemon.json(RecruitmentStatus.self, ["study", "status", Self.study]).recruitment
            return recruitment?.completed != nil ? recruitment : nil
        }
        XCTAssertEqual(completed.completionReason, .target)
        let data = try daemon.json(StudyData.self, ["study", "show", Self.study])
        XCTAssertEqual(data.responses.sus.first?.items, did["sus"] as? [Int], "the SUS answered on the phone")
        let export = try daemon.ok(["study", "export", Self.study, "--format", "csv"])
        XCTAssertTrue(export.split(separator: "\n").contains { $0.contains("Find the note") && $0.contains("gave up") }, export)

        // Every touch point is in the session file, both fingers of the pinch among them, with their phases.
        let sessionID = try XCTUnwrap(done.sessionId)
        let session = try XCTUnwrap(try daemon.json([SessionRecord].self, ["sessions"]).first { $0.id == sessionID })
        let reader = try SessionReader(path: session.path)
        let touches = try reader.events(classes: ["UserInputEvent"]).map(payload).filter { $0["type"] as? String == "touch" }
        let stored = Set(touches.compactMap { $0["identifier"] as? Int })
        XCTAssertEqual(stored, touchIds, "every finger the browser put down, by its identifier: \(touches.prefix(5))")
        let phases = Set(touches.compactMap { $0["phase"] as? String })
        XCTAssertTrue(phases.isSuperset(of: ["began", "moved", "ended"]), "\(phases)")
        XCTAssertEqual(touches.filter { $0["phase"] as? String == "began" }.count, touchIds.count, "each finger down once")
        let gestures = try reader.events(classes: ["UserInputEvent"]).map(payload).filter { $0["type"] as? String == "gesture" }
        XCTAssertTrue(gestures.contains { $0["gesture"] as? String == "pinch" && $0["fingers"] as? Int == 2 }, "\(gestures)")
        XCTAssertTrue(gestures.contains { $0["gesture"] as? String == "swipe" }, "\(gestures)")
        let views = try reader.events(classes: ["UserInterfaceEvent"]).map(payload).compactMap { $0["view"] as? String }
        XCTAssertTrue(Set(views).isSuperset(of: ["NoteList", "NoteSearch"]), "both views by their data-mueval-view: \(views)")

        // Transcribed after the stop; the session's report then has every finding.
        let transcription = try await eventually(timeout: 180, "the transcription") { () -> TranscriptionStatus? in
            let status = try SessionReader(path: session.path).transcriptionStatus().first
            return status?.state == .done || status?.state == .failed ? status : nil
        }
        XCTAssertEqual(transcription.state, .done, transcription.error ?? "")
        let out = directory + "/report"
        let report = try daemon.muevalctl(["report", String(sessionID), "--out", out, "--sections", "problems"])
        XCTAssertEqual(report.status, 0, report.stderr)
        let html = try String(contentsOfFile: out + "/index.html", encoding: .utf8)
        let start = try XCTUnwrap(html.range(of: "<section id=\"problems\""), "no problems section")
        let problems = String(html[start.lowerBound...])
        for finding in ["Small hit target", "Sort", "Small text", "9 pt", "Shake", "Exclamation", "where is"] {
            XCTAssertTrue(problems.contains(finding), "the report's problems name \(finding): \(problems.prefix(6_000))")
        }
        let heard = try reader.transcript().map(\.text)
        // As Whisper writes it ("Where is the search?") or PocketSphinx ("where is the search").
        XCTAssertTrue(heard.contains { $0.lowercased().contains("where is") }, "the exclamation as said: \(heard)")
    }

    func testEventsRecordedOfflineInAClosedTabAreStoredOnceInOrder() async throws {
        let (web, origin) = try await serveWebnotes()
        defer { web.signal(SIGTERM) }
        let (daemon, console) = try await daemon(origin: origin, transcription: false)
        defer { daemon.cleanUp() }
        let app = "\(origin)/?server=\(console)"
        let invitations = try recruit(daemon, app: app, count: 1)
        let code = try XCTUnwrap(invitations.first?.code)

        let did = try browser(["once", "\(app)&mueval=\(code)", certificates.certificateFile], daemon)
        let marks = try XCTUnwrap(did["marks"] as? Int)
        let recording = try await invitation(daemon, code, is: .recording)
        let sessionID = try XCTUnwrap(recording.sessionId)
        _ = try daemon.ok(["stop", String(sessionID)])
        let session = try XCTUnwrap(try daemon.json([SessionRecord].self, ["sessions"]).first { $0.id == sessionID })

        // Each event once (the file's unique (device, seq) holds that for seqs; the marks' numbers hold it for events
        // a resend could have renumbered), in the order they happened, seqs rising with it.
        let events = try SessionReader(path: session.path).events()
        let numbered = try events.filter { $0.eventClass == "CustomEvent" }.compactMap { event -> (seq: Int64?, n: Int)? in
            let fields = try payload(event)
            guard fields["name"] as? String == "Mark", let n = fields["n"] as? Int else { return nil }
            return (event.seq, n)
        }
        XCTAssertEqual(numbered.map(\.n), Array(1...marks), "each mark once, in order: \(numbered)")
        let seqs = events.compactMap(\.seq)
        XCTAssertEqual(seqs.count, events.filter { $0.device == events.first?.device }.count, "every web event is numbered")
        XCTAssertEqual(seqs, seqs.sorted(), "stored in the order of their seqs")
        XCTAssertEqual(Set(seqs).count, seqs.count)
        let taps = try events.filter { $0.eventClass == "UserInputEvent" }.map(payload).filter { $0["type"] as? String == "touch" && $0["phase"] as? String == "began" }
        XCTAssertEqual(taps.count, 6, "the six taps made offline, once each")
    }

    func testForeignOriginsMissingAndUsedInvitationsAreRefused() async throws {
        let (web, origin) = try await serveWebnotes()
        defer { web.signal(SIGTERM) }
        let (daemon, console) = try await daemon(origin: origin, transcription: false)
        defer { daemon.cleanUp() }
        let app = "\(origin)/?server=\(console)"
        let invitations = try recruit(daemon, app: app, count: 1)
        let code = try XCTUnwrap(invitations.first?.code)
        // The tester's phone records by the invitation and stops: its session ended, the invitation is used.
        let profile = directory + "/phone-profile"
        let joined = try browser(["join", "\(app)&mueval=\(code)", certificates.certificateFile, profile], daemon)
        _ = try await invitation(daemon, code, is: .done)

        let capture = console.replacingOccurrences(of: "https://", with: "wss://") + "/capture"
        let refused = try browser(["refusals", capture, certificates.caFile, origin, code, "\(app)&mueval=\(code)",
                                   certificates.certificateFile, profile], daemon)
        // A refused upgrade is a 403 with its reason (docs/PROTOCOL.md, "WebSocket").
        XCTAssertEqual(refused["foreignOrigin"] as? Int, 403, "an Origin not in capture.web_origins")
        let missing = try XCTUnwrap(refused["noInvitation"] as? String)
        XCTAssertTrue(missing.hasPrefix("a web device must present an invitation or a pairing code"), missing)
        XCTAssertEqual(refused["otherPhone"] as? String, "this invitation is in use by another phone")
        XCTAssertEqual(refused["deviceId"] as? String, joined["deviceId"] as? String, "the same phone again")
        XCTAssertEqual(refused["usedInvitation"] as? String, "this invitation was used: its session has ended; ask the study's organiser for a new one",
                       "the library says why it records nothing")
    }
}
