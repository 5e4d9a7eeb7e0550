import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// Page recording and its replay (issue 55) in real browsers against the real muevald, driven by
/// Tests/Browser/page_replay_browser.py: Examples/webnotes recorded with `dom=1` by Chromium as a phone (trusted
/// DevTools touches) and by WebKitGTK (mouse input), known strings typed into its fields and shown under
/// `data-mueval-mask`, none of them in the session file while the heading is; the console's replay in Chromium
/// showing the page's text in `#page-frame`, seeks timed, screenshots left in /tmp for a person to look at; and a
/// hostile page of a WebSocket device of our own, replayed without running or fetching anything.
/// webnotes is served by the script's own server, which remembers every request with its Host: the app's origin
/// `http://127.0.0.1:PORT` is in capture.web_origins, `http://localhost:PORT` (the same server) is not.
final class PageReplayBrowserTests: XCTestCase {
    private static let browser = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Browser")
    private static let script = browser.appendingPathComponent("page_replay_browser.py").path
    private static let webnotes = browser.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/webnotes").path

    /// The typed note and search, and the heading the default mask keeps (page_replay_browser.py's NOTE, SEARCH, HEADING).
    private static let typed = ["Quokka marmalade 4471", "marmalade"]

    /// Screenshots and the wireframe, kept after the test for a person to look at.
    private let shots = "/tmp/page-replay-\(UUID().uuidString.prefix(8))"

    func testChromiumRecordsWebnotesMaskedAndTheConsoleReplaysThePage() async throws {
        try skipUnlessRunnable("chromium")
        let lab = try await Lab.start()
        defer { lab.stop() }
        var replayed: Int64?
        // The default mask, then none: with every text sent as it is, only data-mueval-mask keeps the note at home.
        for mask in ["", "&mask=none"] {
            let (session, stored) = try await record("chromium", lab, mask: mask)
            XCTAssertEqual(stored["found"] as? [String: [String]], [:], "typed or masked text in the session file (mask\(mask))")
            XCTAssertGreaterThanOrEqual(stored["headings"] as? Int ?? 0, 1, "the heading in a DOMSnapshot: \(stored)")
            let classes = try XCTUnwrap(stored["classes"] as? [String: Int])
            XCTAssertGreaterThanOrEqual(classes["DOMMutations"] ?? 0, 1, "the note added and the view changed: changes recorded: \(classes)")
            replayed = replayed ?? session
        }

        let login = try await lab.daemon.consoleLink().url
        let replay = try run(["replay", login, String(try XCTUnwrap(replayed)), shots], lab, timeout: 180)
        let text = try XCTUnwrap(replay["text"] as? String)
        XCTAssertTrue(text.contains("Webnotes") && text.contains("Add"), "the heading and the button in #page-frame: \(text)")
        let seeks = try XCTUnwrap(replay["seeksMs"] as? [Double])
        XCTAssertFalse(seeks.isEmpty)
        print("PAGE REPLAY screenshots in \(shots): replay-console.png, replay-page.png, replay-page-end.png, wireframe.png; "
              + "seeks (ms until data-at): \(seeks.map { String(format: "%.1f", $0) }.joined(separator: ", "))")
    }

    func testAHostilePageRunsNothingAndFetchesNothingInTheReplay() async throws {
        try skipUnlessRunnable("chromium")
        let lab = try await Lab.start()
        defer { lab.stop() }
        let session = try lab.daemon.json(SessionRecord.self, ["start", "--name", "hostile", "--pairing-code"])
        let code = try XCTUnwrap(session.pairingCode)
        let login = try await lab.daemon.consoleLink().url
        let result = try run(["hostile", login, code, String(session.id), String(lab.port)], lab, timeout: 180)
        XCTAssertEqual(result["evilRequests"] as? [String], [], "requests to an origin not in capture.web_origins")
        XCTAssertEqual(result["dialogs"] as? [String], [], "dialogs opened by the replay")
        XCTAssertTrue((result["text"] as? String)?.contains("Hostile page, changed") == true, "the page was built: \(result)")
        // The server's wall: nothing that runs was stored.
        let stored = try XCTUnwrap(try lab.daemon.json([SessionRecord].self, ["sessions"]).first { $0.id == session.id })
        for event in try SessionReader(path: stored.path).events(classes: ["DOMSnapshot", "DOMMutations"]) {
            for forbidden in ["__pwned", "javascript:", "srcdoc", "onerror", "onload", "http-equiv"] {
                XCTAssertFalse(event.payload.contains(forbidden), "\(forbidden) stored: \(event.payload.prefix(2_000))")
            }
        }
    }

    /// Safari's engine: its WebDriver clicks with a mouse and it lacks requestIdleCallback (the snapshot in timer slices).
    func testWebKitGTKRecordsWebnotesPageWithItsHeading() async throws {
        try skipUnlessRunnable("webkitgtk")
        let lab = try await Lab.start()
        defer { lab.stop() }
        let (_, stored) = try await record("webkitgtk", lab, mask: "")
        XCTAssertGreaterThanOrEqual(stored["headings"] as? Int ?? 0, 1, "the heading in a DOMSnapshot: \(stored)")
        XCTAssertEqual(stored["found"] as? [String: [String]], [:], "typed or masked text in the session file")
    }

    // MARK: - The lab: webnotes' server and muevald

    private struct Lab {
        let web: FollowingProcess
        let port: String
        let daemon: TestDaemon
        let console: String

        var origin: String { "http://127.0.0.1:\(port)" }

        static func start() async throws -> Lab {
            let web = try FollowingProcess(BrowserRequirement.python, ["-u", PageReplayBrowserTests.script, "serve", PageReplayBrowserTests.webnotes])
            do {
                let port = try await eventually(timeout: 30, "the script's server to listen: \(web.stderr)") { () -> String? in
                    web.lines.first { $0.hasPrefix("Serving HTTP") }?.components(separatedBy: " port ").last?.components(separatedBy: " ").first
                }
                // replay.remote_assets stays its default (web_origins): the frame may fetch from the app's origin only.
                let daemon = try await TestDaemon.start(arguments: ["--web-origin", "http://127.0.0.1:\(port)"])
                let console = try await daemon.consoleLink().url.components(separatedBy: "/login").first ?? ""
                return Lab(web: web, port: port, daemon: daemon, console: console)
            } catch {
                web.signal(SIGTERM)
                throw error
            }
        }

        func stop() {
            web.signal(SIGTERM)
            daemon.cleanUp()
        }
    }

    /// webnotes recorded by `engine` into a new session (pairing code), stopped; the script's account of its file.
    private func record(_ engine: String, _ lab: Lab, mask: String) async throws -> (session: Int64, stored: [String: Any]) {
        let session = try lab.daemon.json(SessionRecord.self, ["start", "--name", "webnotes \(engine)\(mask)", "--pairing-code"])
        let code = try XCTUnwrap(session.pairingCode)
        let app = "\(lab.origin)/?server=\(lab.console)&dom=1&pairing=\(code)\(mask)"
        let phone = try run(["phone", engine, app], lab, timeout: 240)
        XCTAssertEqual(phone["typed"] as? [String], Self.typed)
        // capture.stop() said goodbye; the session is stopped here if that did not stop it.
        let stopped = try await eventually(timeout: 60, "the session stopped; \(lab.daemon.log)") { () -> SessionRecord? in
            guard lab.daemon.process.isRunning else { throw TestDaemonError.exited(status: lab.daemon.process.terminationStatus, log: lab.daemon.log) }
            let record = try lab.daemon.json([SessionRecord].self, ["sessions"]).first { $0.id == session.id }
            if record?.state == .stopped { return record }
            _ = try lab.daemon.muevalctl(["stop", String(session.id)])
            return nil
        }
        // The wireframe of the first session, the one replayed, kept beside the replay's screenshots.
        return (session.id, try run(["stored", stopped.path, mask.isEmpty ? shots : ""], lab))
    }

    /// One step of the script; its RESULT line. The script's output goes into the test's log whatever the outcome.
    private func run(_ arguments: [String], _ lab: Lab, timeout: Double = 120) throws -> [String: Any] {
        let started = Date()
        let run = try runProcess(BrowserRequirement.python, [Self.script] + arguments, timeout: timeout)
        print("page_replay_browser.py \(arguments[0]) (\(Int(Date().timeIntervalSince(started))) s):\n\(run.stdout)\(run.stderr)")
        XCTAssertEqual(run.status, 0, "\(arguments[0]): the script failed\n\(run.stdout)\n\(run.stderr)\nmuevald log:\n\(lab.daemon.log)")
        let line = try XCTUnwrap(run.stdout.split(separator: "\n").last { $0.hasPrefix("RESULT ") }, "\(arguments[0]): no RESULT")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.dropFirst("RESULT ".count).utf8)) as? [String: Any])
    }

    /// The loud skip: only when the engine's binaries or Selenium are missing here, in engines_browser.py's words.
    private func skipUnlessRunnable(_ engine: String) throws {
        if let missing = try BrowserRequirement.missing() { throw XCTSkip(missing) }
        let probe = try runProcess(BrowserRequirement.python, [Self.browser.appendingPathComponent("engines_browser.py").path, "missing", engine])
        let said = probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        if probe.status == 0, said.hasPrefix("MISSING ") { throw XCTSkip("CANNOT RUN HERE: " + said.dropFirst("MISSING ".count)) }
        _ = try XCTUnwrap(probe.status == 0 && said == "READY" ? said : nil, "engines_browser.py missing \(engine): \(probe.status)\n\(probe.stdout)\(probe.stderr)")
    }
}
