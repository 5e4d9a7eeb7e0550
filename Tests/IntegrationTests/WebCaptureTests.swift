import ControlProtocol
import DaemonTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JournalStorage
import MuEvalWire
import SessionModel
import XCTest

/// Web devices against the real muevald (issue 40, docs/PROTOCOL.md "WebSocket"): the console's `/capture`
/// with its Origin allowlist and the code a web device needs, an invited tester's session over a WebSocket
/// (acks, de-duplication across a reconnect, the invitation done), the library at `/capture.js`, and the
/// endpoint's own address with the console off. The browser itself: WebCaptureBrowserTests.
final class WebCaptureTests: XCTestCase {
    static let app = "http://notes.test:8000"
    static let code = "3456bcdefg"

    private func touch(_ seq: Int64) -> [UInt8] {
        WireEncoder.event(["class": .string("UserInputEvent"), "seq": .integer(seq), "x": .integer(10), "y": .integer(20)])
    }

    /// A web device that said `hello`, once the daemon answered it.
    private func join(_ daemon: TestDaemon, _ hello: DeviceHello) async throws -> TestDevice {
        let device = try await daemon.connectWebDevice(origin: Self.app)
        try await device.hello(hello)
        try await device.waitFor("a reply to the hello") { replies in replies.first }
        return device
    }

    func testAnInvitedBrowserRecordsOverTheConsolesWebSocketExactlyOnce() async throws {
        let daemon = try await TestDaemon.start(arguments: ["--web-origin", Self.app])
        defer { daemon.cleanUp() }
        _ = try daemon.ok(["study", "create", "web"])
        _ = try daemon.ok(["study", "iteration", "add", "web"])
        _ = try daemon.ok(["study", "task", "add", "web", "Add a note"])
        let now = Date().timeIntervalSince1970
        let catalog = try Catalog(directory: daemon.dataDirectory)
        try catalog.createInvitations(
            [Invitation(code: Self.code, study: "web", iteration: 1, participant: "TWEBAA", created: now, expires: now + 3600)],
            participants: [Participant(code: "TWEBAA", created: now)],
            recruitment: Recruitment(study: "web", iteration: 1, target: 1, created: now, seed: 1))

        // A page of an origin the lab did not list gets no WebSocket.
        do {
            let port = try await consolePort(daemon)
            _ = try await TestDevice.connectWebSocket(port: port, origin: "https://elsewhere.example")
            XCTFail("a foreign origin was upgraded")
        } catch let refused as WebSocketRefused {
            XCTAssertEqual(refused.status, 403)
            XCTAssertEqual(refused.reason, "pages from https://elsewhere.example may not capture here: add it to capture.web_origins\n")
        }
        _ = try await eventually(timeout: 10, "the refusal logged") {
            daemon.log.contains("refused a web device from 127.0.0.1 with 403: pages from https://elsewhere.example may not capture here: add it to capture.web_origins") ? true : nil
        }

        // An allowed page without an invitation or a pairing code gets no session, even with one open for any device.
        _ = try daemon.ok(["start", "--name", "open to anyone"])
        let anonymous = try await join(daemon, DeviceHello(deviceId: "browser-x"))
        XCTAssertTrue(anonymous.errors.first?.reason.hasPrefix("a web device must present an invitation or a pairing code") == true,
                      "\(anonymous.replies)")
        await anonymous.close()

        // The invited tester's browser: the study's session, its task, acks as text messages.
        let browser = try await join(daemon, DeviceHello(deviceId: "browser-a", invitation: Self.code))
        let welcome = try XCTUnwrap(browser.welcome, "\(browser.replies)")
        XCTAssertEqual(welcome.tasks.map(\.name), ["Add a note"])
        let session = try XCTUnwrap(Int64(welcome.sessionId))
        for seq in Int64(1)...40 { try await browser.send(touch(seq)) }
        try await browser.waitForAck(40)
        await browser.close()

        // Back after a reload: what it resends is stored once, what is new is stored.
        let reloaded = try await join(daemon, DeviceHello(deviceId: "browser-a", invitation: Self.code))
        XCTAssertEqual(reloaded.welcome?.sessionId, welcome.sessionId)
        for seq in Int64(31)...50 { try await reloaded.send(touch(seq)) }
        try await reloaded.waitForAck(50)
        let stored = try await eventually(timeout: 20, "50 events stored") {
            try await daemon.ctl.call(ControlRequest.ListSessions()).first { $0.id == session && $0.events == 50 }
        }
        XCTAssertEqual(stored.study, "web")
        try await reloaded.goodbye()
        await reloaded.close()

        // Its session ended by the goodbye: the invitation is done, and a WebSocket with it is refused as a TCP one is.
        _ = try await eventually(timeout: 20, "invitation done") {
            try catalog.invitation(code: Self.code).flatMap { $0.status == .done ? $0 : nil }
        }
        let late = try await join(daemon, DeviceHello(deviceId: "browser-a", invitation: Self.code))
        XCTAssertEqual(late.errors.first?.reason, "this invitation was used: its session has ended; ask the study's organiser for a new one")
        await late.close()
        XCTAssertEqual(try daemon.muevalctl(["status"]).status, 0, "muevald still answers")
    }

    func testTheLibraryIsServedToAnyOrigin() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let port = try await consolePort(daemon)
        let (data, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/capture.js")!)
        let http = try XCTUnwrap(response as? HTTPURLResponse)
        XCTAssertEqual(http.statusCode, 200)
        XCTAssertEqual(http.value(forHTTPHeaderField: "Access-Control-Allow-Origin"), "*")
        XCTAssertEqual(http.value(forHTTPHeaderField: "Content-Type"), "text/javascript; charset=utf-8")
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../CaptureLibrary/Web/capture.js")
        XCTAssertEqual(data, try Data(contentsOf: repository), "the repository's capture.js")
    }

    func testWithTheConsoleOffTheEndpointHasItsOwnAddress() async throws {
        let daemon = try await TestDaemon.start(arguments: ["--no-console", "--web-listen", "127.0.0.1:0", "--web-open"])
        defer { daemon.cleanUp() }
        let port = try await eventually(timeout: 20, "the web listener (log: \(daemon.log))") { () -> Int? in
            guard let range = daemon.log.range(of: #"web capture listening on ws://127\.0\.0\.1:[0-9]+/capture"#, options: .regularExpression) else { return nil }
            return Int(daemon.log[range].split(separator: ":").last?.split(separator: "/").first ?? "")
        }
        do {
            _ = try await TestDevice.connectWebSocket(port: port, origin: "https://elsewhere.example")
            XCTFail("a foreign origin was upgraded")
        } catch let refused as WebSocketRefused {
            XCTAssertEqual(refused.status, 403)
            XCTAssertEqual(refused.reason, "pages from https://elsewhere.example may not capture here: add it to capture.web_origins\n")
        }
        // Opened (`--web-open`): a page's device records into the session waiting for any device.
        let started = try daemon.ok(["start", "--name", "kiosk"]).trimmingCharacters(in: .newlines)
        let device = try await TestDevice.connectWebSocket(port: port, origin: nil)
        try await device.hello(DeviceHello(deviceId: "kiosk-browser"))
        try await device.send(touch(1))
        try await device.waitForAck(1)
        XCTAssertEqual(device.welcome?.sessionId, started)
        await device.close()
    }

    private func consolePort(_ daemon: TestDaemon) async throws -> Int {
        let url = try await daemon.consoleLink().url
        return try XCTUnwrap(URLComponents(string: url)?.port)
    }
}
