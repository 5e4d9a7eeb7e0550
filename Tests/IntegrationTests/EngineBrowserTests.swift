import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// capture.js end to end in each engine phones use: Chromium's (Android), WebKit's (Safari: WebKitGTK's MiniBrowser)
/// and Gecko's (Firefox ESR), each driven with the input its WebDriver can make (Tests/Browser/engines.py), on a page
/// of its own (Tests/Browser/engines-page, its own origin) recording into a real muevald by a session's pairing code
/// (Tests/Browser/engines_browser.py). This side starts muevald and the session, and reads what the session file
/// holds: one finger per tap, two in a pinch, a view with its tree and wireframe, each event once after a silence
/// of muevald (SIGSTOP) long enough for the library to give its socket up, and what each engine's fallbacks made.
/// One test per engine, so that `swift test --parallel` runs them side by side; each takes 20–30 s here, 15–20 of
/// them the silence (the library's heartbeat gives an unanswered socket 15 s).
final class EngineBrowserTests: XCTestCase {
    private static let browser = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Browser")
    private static let script = browser.appendingPathComponent("engines_browser.py").path
    private static let page = browser.appendingPathComponent("engines-page").path

    func testChromiumStoresOneFingerPerTapAPinchAViewAndEachEventOnce() async throws {
        let run = try await record("chromium")
        try checkTouches(run)
        try checkView(run)
        try checkOnce(run)
        try checkFallbacks(run)
    }

    /// Safari's engine: taps are mouse clicks and TouchEvents the page makes (its WebDriver has no touch), and it
    /// lacks requestIdleCallback, DeviceMotionEvent and long-animation-frame: the library's fallbacks for Safari.
    func testWebKitGTKStoresOneFingerPerTapAPinchAViewAndEachEventOnce() async throws {
        let run = try await record("webkitgtk")
        try checkTouches(run)
        try checkView(run)
        try checkOnce(run)
        try checkFallbacks(run)
        let features = try XCTUnwrap(run.result["features"] as? [String: Any])
        for feature in ["requestIdleCallback", "DeviceMotionEvent", "longAnimationFrame", "longtask"] {
            XCTAssertEqual(features[feature] as? Bool, false, "webkitgtk lacks \(feature), so the fallback this test checks ran: \(features)")
        }
        XCTAssertTrue(run.events(of: "DeviceSensorEvent").allSatisfy { $0["sensor"] as? String != "accelerometer" },
                      "no accelerometer without DeviceMotionEvent")
    }

    /// Firefox's W3C touch actions reach the page as touch events and pointer events while `"ontouchstart" in window`
    /// is false: until the library tells them apart there, each tap is stored as two fingers, and this test fails.
    func testFirefoxStoresOneFingerPerTapAPinchAViewAndEachEventOnce() async throws {
        let run = try await record("firefox")
        try checkTouches(run)
        try checkView(run)
        try checkOnce(run)
        try checkFallbacks(run)
    }

    // MARK: - One engine's run

    /// What an engine's run left: the script's RESULT and the session file's events, payloads decoded.
    private struct Recorded {
        let engine: String
        let result: [String: Any]
        let reader: SessionReader
        let events: [(event: StoredEvent, payload: [String: Any])]

        func events(of eventClass: String) -> [[String: Any]] {
            events.filter { $0.event.eventClass == eventClass }.map(\.payload)
        }

        var touches: [[String: Any]] { events(of: "UserInputEvent").filter { $0["type"] as? String == "touch" } }
        var gestures: [[String: Any]] { events(of: "UserInputEvent").filter { $0["type"] as? String == "gesture" } }
    }

    /// Starts the page's server and muevald, a session with a pairing code, the script for `engine`; stops the session.
    private func record(_ engine: String) async throws -> Recorded {
        try skipUnlessRunnable(engine)
        let web = try FollowingProcess(BrowserRequirement.python, ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", Self.page])
        defer { web.signal(SIGTERM) }
        let port = try await eventually(timeout: 30, "http.server to listen: \(web.stderr)") { () -> String? in
            // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
            web.lines.first { $0.hasPrefix("Serving HTTP") }?.components(separatedBy: " port ").last?.components(separatedBy: " ").first
        }
        let origin = "http://127.0.0.1:\(port)"
        let daemon = try await TestDaemon.start(arguments: ["--web-origin", origin])
        defer { daemon.cleanUp() }
        let console = try await daemon.consoleLink().url.components(separatedBy: "/login").first ?? ""
        let session = try daemon.json(SessionRecord.self, ["start", "--name", engine, "--pairing-code"])
        let code = try XCTUnwrap(session.pairingCode, "a pairing code for the \(engine) session")

        let started = Date()
        let run = try runProcess(BrowserRequirement.python, [Self.script, "run", engine, origin + "/index.html", console, code,
                                                             String(daemon.process.processIdentifier)], timeout: 300)
        // The script's account, skips included, in the test's log whatever the outcome.
        print("\(engine) (\(Int(Date().timeIntervalSince(started))) s):\n\(run.stdout)\(run.stderr)")
        XCTAssertEqual(run.status, 0, "\(engine): the script failed\n\(run.stdout)\n\(run.stderr)\nmuevald log:\n\(daemon.log)")
        let line = try XCTUnwrap(run.stdout.split(separator: "\n").last { $0.hasPrefix("RESULT ") }, "\(engine): no RESULT\n\(run.stdout)\n\(run.stderr)")
        let result = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.dropFirst("RESULT ".count).utf8)) as? [String: Any])
        XCTAssertEqual(result["sessionId"] as? String, String(session.id), "\(engine) recorded into the session of its code")

        _ = try daemon.ok(["stop", String(session.id)])
        let stored = try XCTUnwrap(try daemon.json([SessionRecord].self, ["sessions"]).first { $0.id == session.id })
        let reader = try SessionReader(path: stored.path)
        let events = try reader.events().map { event -> (StoredEvent, [String: Any]) in
            (event, try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(event.payload.utf8)) as? [String: Any], event.payload))
        }
        return Recorded(engine: engine, result: result, reader: reader, events: events)
    }

    /// The loud skip: only when the engine's binaries (or Selenium) are missing here, in the script's words.
    private func skipUnlessRunnable(_ engine: String) throws {
        guard FileManager.default.isExecutableFile(atPath: BrowserRequirement.python) else {
            throw XCTSkip("CANNOT RUN HERE: \(BrowserRequirement.python) is missing (apt-get install python3; `make test-deps` does)")
        }
        let probe = try runProcess(BrowserRequirement.python, [Self.script, "missing", engine])
        let said = probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        if probe.status == 0, said.hasPrefix("MISSING ") { throw XCTSkip("CANNOT RUN HERE: " + said.dropFirst("MISSING ".count)) }
        // Anything else is the script broken, which fails the test (no skip).
        _ = try XCTUnwrap(probe.status == 0 && said == "READY" ? said : nil, "engines_browser.py missing \(engine): \(probe.status)\n\(probe.stdout)\(probe.stderr)")
    }

    // MARK: - What the session file must hold

    /// (b) Each tap one finger: one `began` and one `ended` per tap on its element, and one `tap` gesture of one finger;
    /// the pinch two fingers (two identifiers down on the pad) and a `pinch` gesture of two.
    private func checkTouches(_ run: Recorded, file: StaticString = #filePath, line: UInt = #line) throws {
        let taps = try XCTUnwrap(run.result["taps"] as? [String: Int])
        XCTAssertFalse(taps.isEmpty)
        for (element, count) in taps.sorted(by: { $0.key < $1.key }) {
            let on = { (event: [String: Any]) in (event["target"] as? [String: Any])?["id"] as? String == element }
            let began = run.touches.filter { on($0) && $0["phase"] as? String == "began" }
            let ended = run.touches.filter { on($0) && $0["phase"] as? String == "ended" }
            let kinds = began.map { "\($0["pointerType"] ?? "?") \($0["identifier"] ?? "?")" }
            XCTAssertEqual(began.count, count, "\(run.engine): taps on #\(element): \(count), one finger each: \(count) began, stored \(began.count) (\(kinds))",
                           file: file, line: line)
            XCTAssertEqual(ended.count, count, "\(run.engine): taps on #\(element): \(count), \(count) ended, stored \(ended.count)", file: file, line: line)
            let gestures = run.gestures.filter { on($0) && $0["gesture"] as? String == "tap" }
            XCTAssertEqual(gestures.map { $0["fingers"] as? Int }, Array(repeating: 1, count: count),
                           "\(run.engine): taps on #\(element): \(count), each a tap gesture of one finger", file: file, line: line)
        }
        guard run.result["pinches"] as? Int == 1 else { return }
        let onPad = run.touches.filter { ($0["target"] as? [String: Any])?["id"] as? String == "pad" }
        let down = onPad.filter { $0["phase"] as? String == "began" }, up = onPad.filter { $0["phase"] as? String == "ended" }
        let kinds = down.map { "\($0["pointerType"] ?? "?") \($0["identifier"] ?? "?")" }
        XCTAssertEqual(down.count, 2, "\(run.engine): the pinch's two fingers down, each once: stored \(down.count) (\(kinds))", file: file, line: line)
        XCTAssertEqual(up.count, 2, "\(run.engine): the pinch's two fingers up, each once: stored \(up.count)", file: file, line: line)
        XCTAssertEqual(Set(down.compactMap { $0["identifier"] as? Int }).count, 2, "\(run.engine): two identifiers: \(kinds)", file: file, line: line)
        let pinches = run.gestures.filter { $0["gesture"] as? String == "pinch" }
        XCTAssertEqual(pinches.map { $0["fingers"] as? Int }, [2], "\(run.engine): one pinch of two fingers; the gestures: "
                       + run.gestures.map { "\($0["gesture"] ?? "?") of \($0["fingers"] ?? "?")" }.joined(separator: ", "), file: file, line: line)
    }

    /// (c) The route change as a view with its UI state tree (the Settings field in it) and a PNG wireframe.
    private func checkView(_ run: Recorded, file: StaticString = #filePath, line: UInt = #line) throws {
        let views = run.events(of: "UserInterfaceEvent").filter { $0["type"] as? String == "viewDidAppear" }
        XCTAssertEqual(views.compactMap { $0["view"] as? String }, ["Home", "Settings"], "\(run.engine): the views in order", file: file, line: line)
        let settings = try XCTUnwrap(views.first { $0["view"] as? String == "Settings" }, "\(run.engine): no Settings view", file: file, line: line)
        XCTAssertEqual(settings["transition"] as? String, "push", file: file, line: line)
        let tree = try XCTUnwrap(settings["uiState"] as? [String: Any], "\(run.engine): the view's tree", file: file, line: line)
        let field = nodes(tree).first { $0["id"] as? String == "name" }
        XCTAssertEqual(field?["className"] as? String, "UITextField", "\(run.engine): the name field in the tree: \(tree)", file: file, line: line)
        let shot = try XCTUnwrap((settings["screenshot"] as? [String: Any])?["$data"] as? String, "\(run.engine): a screenshot", file: file, line: line)
        let png = try XCTUnwrap(try run.reader.blob(sha256: shot), "\(run.engine): the screenshot's bytes", file: file, line: line)
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "\(run.engine): a PNG", file: file, line: line)
        // IHDR's width and height (big-endian, at 16 and 20): the wireframe of the viewport, one pixel per CSS pixel.
        let size = [16, 20].map { png.count >= $0 + 4 ? png[$0..<$0 + 4].reduce(0) { $0 << 8 | Int($1) } : 0 }
        XCTAssertTrue(size.allSatisfy { (300...1_400).contains($0) }, "\(run.engine): a viewport-sized wireframe: \(size)", file: file, line: line)
    }

    private func nodes(_ node: [String: Any]) -> [[String: Any]] {
        [node] + ((node["subviews"] as? [[String: Any]]) ?? []).flatMap(nodes)
    }

    /// (d) Each mark of the silence once, the silence's taps once each (their gestures), no (device, seq) twice.
    private func checkOnce(_ run: Recorded, file: StaticString = #filePath, line: UInt = #line) throws {
        let marks = try XCTUnwrap(run.result["marks"] as? Int)
        let stored = run.events(of: "CustomEvent").filter { $0["name"] as? String == "Mark" }
        XCTAssertEqual(stored.compactMap { $0["n"] as? Int }.sorted(), Array(1...marks), "\(run.engine): each mark once: \(stored)", file: file, line: line)
        XCTAssertTrue(stored.allSatisfy { $0["engine"] as? String == run.engine }, file: file, line: line)
        let quiet = try XCTUnwrap((run.result["taps"] as? [String: Int])?["quiet-target"])
        let gestures = run.gestures.filter { ($0["target"] as? [String: Any])?["id"] as? String == "quiet-target" }
        XCTAssertEqual(gestures.count, quiet, "\(run.engine): the silence's taps, once each", file: file, line: line)
        let keys = run.events.compactMap { $0.event.seq.map { [run.events[0].event.device, String($0)] } }
        XCTAssertEqual(Set(run.events.map(\.event.device)).count, 1, "\(run.engine): one device", file: file, line: line)
        XCTAssertEqual(Set(keys).count, run.events.count, "\(run.engine): every event numbered, no seq twice", file: file, line: line)
        let spooled = try XCTUnwrap(run.result["spooledInSilence"] as? Int)
        let sent = try XCTUnwrap(run.result["sentInSilence"] as? Int)
        XCTAssertGreaterThanOrEqual(sent, spooled + marks, "\(run.engine): the silence's events were sent twice, so stored once is a real check",
                                    file: file, line: line)
    }

    /// (e) The fallbacks made what the features would have: the trees (checkView), frame timing, and no exception.
    private func checkFallbacks(_ run: Recorded, file: StaticString = #filePath, line: UInt = #line) throws {
        let exceptions = run.events(of: "ApplicationEvent").filter { $0["type"] as? String == "exception" }
        XCTAssertEqual(exceptions.count, 0, "\(run.engine): nothing thrown in the page: \(exceptions)", file: file, line: line)
        let frames = run.events(of: "DeviceSensorEvent").filter { $0["sensor"] as? String == "frameTiming" }.compactMap { $0["kind"] as? String }
        XCTAssertTrue(frames.contains("transition"), "\(run.engine): a transition reading from animation frames: \(frames)", file: file, line: line)
        XCTAssertEqual(run.events(of: "ApplicationEvent").first?["type"] as? String, "launch", file: file, line: line)
    }
}
