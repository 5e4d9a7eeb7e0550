import ControlProtocol
import DaemonTestSupport
import Foundation
import MuEvalWire
import OrderedCollections
import SessionModel
import WireProtocol
import XCTest

/// The web console of a real muevald over real sockets, as a browser uses it (the pages themselves
/// are tested in Chromium by ConsoleBrowserTests).
final class ConsoleTests: XCTestCase {
    var daemon: TestDaemon!

    override func setUp() async throws {
        daemon = try await TestDaemon.start()
    }

    override func tearDown() async throws {
        daemon?.cleanUp()
    }

    func loggedIn() async throws -> ConsoleClient {
        let link = try await daemon.consoleLink()
        let client = ConsoleClient(link: link.url)
        let reply = try await client.login(link.url)
        XCTAssertEqual(reply.status, 303, reply.text)
        XCTAssertNotNil(client.csrf)
        return client
    }

    func testNothingButTheLoginPageWithoutTheCookieAndALoginLinkWorksOnce() async throws {
        let link = try await daemon.consoleLink()
        let client = ConsoleClient(link: link.url)
        let page = try await client.request("GET", "/", authenticated: false)
        XCTAssertEqual(page.status, 401)
        XCTAssertTrue(page.text.contains("muevalctl console"), page.text)
        for path in ["/api/sessions", "/api/status", "/api/devices", "/sessions/1/replay"] {
            let reply = try await client.request("GET", path, authenticated: false)
            XCTAssertEqual(reply.status, 401, path)
            XCTAssertFalse(reply.text.contains("\"state\""), "\(path) leaked data: \(reply.text)")
        }

        let first = try await client.login(link.url)
        XCTAssertEqual(first.status, 303)
        let cookie = try XCTUnwrap(first.header("Set-Cookie"))
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
            XCTAssertTrue(cookie.contains(attribute), "cookie without \(attribute): \(cookie)")
        }
        XCTAssertFalse(cookie.contains("Secure"), "no TLS here, so no Secure: \(cookie)")
        let again = try await ConsoleClient(link: link.url).login(link.url)
        XCTAssertEqual(again.status, 403, "a used login code must be refused")
        let forged = try await ConsoleClient(link: link.url).login(client.base + "/login?code=" + String(repeating: "0", count: 64))
        XCTAssertEqual(forged.status, 403)

        let sessions = try await client.request("GET", "/api/sessions")
        XCTAssertEqual(sessions.status, 200, sessions.text)
        XCTAssertTrue(try sessions.json() is [Any])
        let headers = sessions.headers.map { "\($0.key): \($0.value)" }.joined(separator: "\n")
        XCTAssertNotNil(sessions.header("Content-Security-Policy"), headers)
        XCTAssertEqual(sessions.header("X-Content-Type-Options"), "nosniff")
        XCTAssertNil(sessions.header("Access-Control-Allow-Origin"), "no CORS")
    }

    func testAStateChangeNeedsTheCSRFTokenAndThisOrigin() async throws {
        let client = try await loggedIn()
        let withoutToken = try await client.request("POST", "/api/sessions", json: ["name": "forged"], csrf: false)
        XCTAssertEqual(withoutToken.status, 403, withoutToken.text)
        let wrongToken = try await client.request("POST", "/api/sessions", json: ["name": "forged"], csrf: false,
                                                  headers: ["X-CSRF-Token": String(repeating: "a", count: 64)])
        XCTAssertEqual(wrongToken.status, 403)
        let crossOrigin = try await client.request("POST", "/api/sessions", json: ["name": "forged"],
                                                   headers: ["Origin": "http://evil.example"])
        XCTAssertEqual(crossOrigin.status, 403)
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertTrue(sessions.isEmpty, "a refused request started a session: \(sessions)")

        let started = try await client.request("POST", "/api/sessions", json: ["name": "usability 1", "user": "P01"])
        XCTAssertEqual(started.status, 201, started.text)
        let record = try XCTUnwrap(try started.json() as? [String: Any])
        XCTAssertEqual(record["name"] as? String, "usability 1")
        XCTAssertEqual(record["testUser"] as? String, "P01")
        let tooBig = try await client.request("POST", "/api/sessions", json: ["notes": String(repeating: "x", count: 100_000)])
        XCTAssertEqual(tooBig.status, 413, tooBig.text)
        let notJSON = try await client.request("POST", "/api/sessions/1/notes", headers: ["Content-Type": "application/json"])
        XCTAssertEqual(notJSON.status, 400, notJSON.text)
    }

    /// One click to start, a device streams, the live stream shows it, a note, one click to stop, the report.
    func testASessionFromStartToReportThroughTheConsole() async throws {
        let client = try await loggedIn()
        let started = try await client.request("POST", "/api/sessions", json: ["name": "walkthrough", "device": "phone-1"])
        XCTAssertEqual(started.status, 201, started.text)
        let id = try XCTUnwrap((try started.json() as? [String: Any])?["id"] as? Int)

        // The live stream: a hello, then the events as they are committed.
        let received = LockedMessages()
        let live = Task {
            try await client.webSocket("/api/sessions/\(id)/live") { text in
                received.append(text)
                return !text.contains("\"type\":\"marker\",\"kind\":\"session-stopped\"")
            }
        }
        try await eventually(timeout: 10, "the live stream's hello") { received.types.contains("hello") ? true : nil }

        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "phone-1", device: DeviceDescription(screenWidth: 320, screenHeight: 480)))
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 64)
        try await device.event(["class": .string("UserInterfaceEvent"), "timestamp": .real(1_000), "seq": .integer(1),
                                "type": .string("viewDidAppear"), "view": .string("<script>window.__pwned=1</script>"),
                                "viewStack": .array([.string("Root")]), "screenshot": .data(png)])
        for seq in 2...20 {
            try await device.event(["class": .string("UserInputEvent"), "timestamp": .real(1_000 + Double(seq)), "seq": .integer(Int64(seq)),
                                    "type": .string("touch"), "phase": .string(seq % 2 == 0 ? "began" : "ended"),
                                    "x": .real(100), "y": .real(200)])
        }
        try await eventually(timeout: 10, "20 events on the live stream") { received.eventIDs.count >= 20 ? true : nil }
        XCTAssertEqual(received.eventIDs, Array(1...20), "each event once, in order")

        let note = try await client.request("POST", "/api/sessions/\(id)/notes", json: ["text": "hesitates at <b>Publish</b>", "kind": "problem"])
        XCTAssertEqual(note.status, 201, note.text)
        try await eventually(timeout: 10, "the note on the live stream") { received.eventIDs.count >= 21 ? true : nil }
        let badNote = try await client.request("POST", "/api/sessions/\(id)/notes", json: ["text": "  "])
        XCTAssertEqual(badNote.status, 400, badNote.text)

        // Paged events, one event, a blob, the replay index.
        let pageReply = try await client.request("GET", "/api/sessions/\(id)/events?limit=5")
        let page = try XCTUnwrap(try pageReply.json() as? [String: Any])
        XCTAssertEqual((page["events"] as? [Any])?.count, 5)
        XCTAssertEqual(page["next"] as? Int, 5)
        let indexReply = try await client.request("GET", "/api/sessions/\(id)/replay")
        let index = try XCTUnwrap(try indexReply.json() as? [String: Any])
        let screenshots = try XCTUnwrap(index["screenshots"] as? [[String: Any]])
        XCTAssertEqual(screenshots.count, 1)
        XCTAssertEqual((index["touches"] as? [Any])?.count, 19)
        XCTAssertEqual((index["notes"] as? [[String: Any]])?.first?["text"] as? String, "hesitates at <b>Publish</b>")
        XCTAssertEqual(((index["events"] as? [String: Any])?["id"] as? [Int])?.count, 21)
        // The file the Replay page reads by ranges: its preamble and head first, the same file after.
        let file = try await client.request("GET", "/api/sessions/\(id)/replay/index", headers: ["Range": "bytes=0-63"])
        XCTAssertEqual(file.status, 206, file.text)
        XCTAssertTrue(file.text.hasPrefix("mueval-replay-index 2 21 "), file.text)
        let etag = try XCTUnwrap(file.header("ETag"))
        let total = try XCTUnwrap(file.header("Content-Range")?.split(separator: "/").last.flatMap { Int64($0) })
        let same = try await client.request("GET", "/api/sessions/\(id)/replay/index", headers: ["Range": "bytes=64-", "If-Match": etag])
        XCTAssertEqual(same.status, 206, same.text)
        XCTAssertEqual(Int64(same.body.count), total - 64)
        // A range past any end is a 416, whatever its digits; an ETag of another file a 412.
        for range in ["bytes=99999999999999999999999999-", "bytes=\(total)-", "bytes=-0"] {
            let past = try await client.request("GET", "/api/sessions/\(id)/replay/index", headers: ["Range": range])
            XCTAssertEqual(past.status, 416, "\(range): \(past.text)")
            XCTAssertEqual(past.header("Content-Range"), "bytes */\(total)")
        }
        let stale = try await client.request("GET", "/api/sessions/\(id)/replay/index", headers: ["Range": "bytes=0-63", "If-Match": "\"1-2-3-4\""])
        XCTAssertEqual(stale.status, 412, stale.text)
        let blob = try await client.request("GET", "/api/sessions/\(id)/blobs/\(try XCTUnwrap(screenshots[0]["sha"] as? String))")
        XCTAssertEqual(blob.status, 200)
        XCTAssertEqual(Array(blob.body), png)
        XCTAssertEqual(blob.header("Content-Type"), "image/png")

        // One click to stop; the default report follows on its own.
        let stopped = try await client.request("POST", "/api/sessions/\(id)/stop")
        XCTAssertEqual(stopped.status, 200, stopped.text)
        _ = try await live.value
        XCTAssertTrue(received.types.contains("marker"))
        let report = try await eventually(timeout: 30, "the default report") { () -> [String: Any]? in
            let state = try await client.request("GET", "/api/sessions/\(id)/report").json() as? [String: Any]
            return state?["state"] as? String == "ready" ? state : nil
        }
        let url = try XCTUnwrap(report["url"] as? String)
        let html = try await client.request("GET", url)
        XCTAssertEqual(html.status, 200)
        XCTAssertTrue(html.text.contains("hesitates at &lt;b&gt;Publish&lt;/b&gt;"), "the note, escaped, in the report")
        XCTAssertFalse(html.text.contains("<script>window.__pwned"), "a device string became markup in the report")
        let escape = try await client.request("GET", "/sessions/\(id)/reports/default/..%2F..%2Fcatalog.sqlite")
        XCTAssertEqual(escape.status, 404)
        // The page is offered before its screenshots are copied into its folder: until one is there, the console
        // sends the browser to the session's own copy (docs/REPORTS.md, "When a report is ready").
        let sha = try XCTUnwrap(screenshots[0]["sha"] as? String)
        XCTAssertTrue(html.text.contains("shots/\(sha).png"), "the report shows the screenshot from its folder")
        let shot = "/sessions/\(id)/reports/default/shots/\(sha).png"
        let copied = try await eventually(timeout: 10, "the screenshot copied into the report's folder") { () -> ConsoleClient.Reply? in
            let reply = try await client.request("GET", shot)
            return reply.status == 200 ? reply : nil
        }
        XCTAssertEqual(Array(copied.body), png)
        try FileManager.default.removeItem(atPath: daemon.dataDirectory + "/reports/\(id)/default/shots/\(sha).png")
        let redirected = try await client.request("GET", shot)
        XCTAssertEqual(redirected.status, 302, redirected.text)
        XCTAssertEqual(redirected.header("Location"), "/api/sessions/\(id)/blobs/\(sha)")
        let original = try await client.request("GET", try XCTUnwrap(redirected.header("Location")))
        XCTAssertEqual(Array(original.body), png)
        let notAShot = try await client.request("GET", "/sessions/\(id)/reports/default/shots/\(String(repeating: "0", count: 64)).gif")
        XCTAssertEqual(notAShot.status, 404)

        let chosen = try await client.request("POST", "/api/sessions/\(id)/report", json: ["sections": ["overview", "notes"]])
        XCTAssertEqual((try chosen.json() as? [String: Any])?["state"] as? String, "ready", chosen.text)

        let metrics = try await client.request("GET", "/metrics", authenticated: false)
        XCTAssertTrue(metrics.text.contains("mueval_events_stored_total 21"), metrics.text)
        XCTAssertTrue(metrics.text.contains("# TYPE mueval_events_stored_total counter"), metrics.text)
        // The stop's automatic report went through the durable queue (issue 52) and left it: none waits, none is written.
        _ = try await eventually(timeout: 30, "the automatic reports' queue in /metrics, drained") { () -> Bool? in
            let text = try await client.request("GET", "/metrics", authenticated: false).text
            return text.contains("mueval_reports_queued 0") && text.contains("mueval_reports_writing 0") ? true : nil
        }
        XCTAssertEqual(try daemon.json(StatusReport.self, ["status"]).reports, ReportQueueStatus(waiting: 0, writing: 0))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: daemon.dataDirectory + "/reports/.queue"), [])
    }

    func testTheSessionsPageIsToldWhenASessionStarts() async throws {
        let client = try await loggedIn()
        let received = LockedMessages()
        let updates = Task {
            try await client.webSocket("/api/updates") { text in
                received.append(text)
                return received.types.filter { $0 == "sessions" }.count < 2
            }
        }
        try await eventually(timeout: 10, "the first update") { received.types.contains("sessions") ? true : nil }
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "from the CLI"))
        _ = try await updates.value
        XCTAssertEqual(received.types.filter { $0 == "sessions" }.count, 2)
    }

    func testUnderTLSTheConsoleSpeaksHTTPSOnlyAndItsCookieIsSecure() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-tls-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let made = try runProcess("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                                                       "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let config = directory + "/muevald.toml"
        try "[console]\ntls_certificate = \"\(directory)/cert.pem\"\ntls_key = \"\(directory)/key.pem\"\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        daemon.cleanUp()
        daemon = try await TestDaemon.start(arguments: ["--config", config])

        let link = try await daemon.consoleLink()
        XCTAssertTrue(link.url.hasPrefix("https://127.0.0.1:"), link.url)
        let login = try runProcess("/usr/bin/curl", ["-s", "-k", "-i", link.url])
        XCTAssertTrue(login.stdout.hasPrefix("HTTP/1.1 303"), login.stdout)
        let cookie = try XCTUnwrap(login.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") })
        XCTAssertTrue(cookie.contains("; Secure"), String(cookie))
        let plain = try runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", link.url.replacingOccurrences(of: "https:", with: "http:")])
        XCTAssertNotEqual(plain.stdout, "303", "plain HTTP must not log anybody in")
    }

    func testAConsoleThatCannotListenLeavesCaptureWorking() async throws {
        // The port is taken by this very daemon's console.
        let link = try await daemon.consoleLink()
        let taken = try XCTUnwrap(URL(string: link.url)?.port)
        let second = try await TestDaemon.start(arguments: ["--console-listen", "127.0.0.1:\(taken)"])
        defer { second.cleanUp() }
        // The console fails after the daemon is up (until then muevalctl hears "still starting"): wait for its log line.
        try await eventually(timeout: 30, "the console's failure logged") { second.log.contains("goes on without it") ? true : nil }
        let result = try second.muevalctl(["console"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("could not start"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)

        let session = try await second.ctl.call(ControlRequest.StartSession(name: "still recording"))
        let device = try await second.connectDevice()
        try await device.event(["class": .string("CustomEvent"), "timestamp": .real(1), "seq": .integer(1)])
        try await eventually(timeout: 10, "the event stored without the console") {
            try await second.ctl.call(ControlRequest.ListSessions()).first { $0.id == session.id }?.events == 1 ? true : nil
        }
    }

    func testTheConsoleCanBeTurnedOff() async throws {
        daemon.cleanUp()
        daemon = try await TestDaemon.start(arguments: ["--no-console"])
        let result = try daemon.muevalctl(["console"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("console is off"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
    }

    /// The automatic report is the daemon's: a session stopped while the console is off gets it all the same.
    func testASessionStoppedWithTheConsoleOffStillGetsItsReport() async throws {
        daemon.cleanUp()
        daemon = try await TestDaemon.start(arguments: ["--no-console"])
        let started = try daemon.muevalctl(["start", "--name", "no-console"])
        XCTAssertEqual(started.status, 0, started.stderr)
        let id = try XCTUnwrap(Int64(started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), started.stdout)
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "phone-1"))
        try await device.event(["class": .string("CustomEvent"), "timestamp": .real(1), "seq": .integer(1), "name": .string("tap")])
        try await device.waitForAck(1)
        let stop = try daemon.muevalctl(["stop", String(id)])
        XCTAssertEqual(stop.status, 0, stop.stderr)

        let index = "\(daemon.dataDirectory)/reports/\(id)/default/index.html"
        try await eventually(timeout: 30, "the default report at \(index) (log: \(daemon.log))") {
            FileManager.default.fileExists(atPath: index) && daemon.log.contains("report of session \(id) (default) written") ? true : nil
        }
        let html = try String(contentsOfFile: index, encoding: .utf8)
        XCTAssertTrue(html.contains("no-console"), "the report names its session")
    }
}

/// Messages a WebSocket received, shared with the test.
final class LockedMessages: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [[String: Any]] = []

    func append(_ text: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return }
        lock.withLock { messages.append(object) }
    }

    var types: [String] { lock.withLock { messages.compactMap { $0["type"] as? String } } }

    var eventIDs: [Int] {
        lock.withLock {
            messages.flatMap { message -> [Int] in
                let events = message["type"] as? String == "hello" ? message["recent"] : message["events"]
                return (events as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
            }
        }
    }
}
