import DaemonTestSupport
import Foundation
import XCTest

/// The Mobile Monitor web console (issue 15) in a real browser: Debian's Chromium, driven through
/// chromedriver by Tests/Browser/console_browser.py (python3-selenium), against a real muevald with
/// its console on a free loopback port and muevalsim as the phone. The script logs in with the link
/// `muevalctl console` prints, starts a session with one click, watches it live (canvas pixels),
/// adds notes, stops it, opens the report and replays it; it also checks the access rules and that
/// markup a device or a user sends stays text. This side starts the simulator when the script's
/// live page watches the session and afterwards finds the notes with `muevalctl events`.
/// The script saves a screenshot of every page into the daemon's directory, or into docs/console/
/// (which docs/CONSOLE.md shows) when MUEVAL_CONSOLE_SCREENSHOTS=1 is set, so that `make test` leaves the tree clean.
final class ConsoleBrowserTests: XCTestCase {
    private static func screenshotDirectory(_ daemon: TestDaemon) -> String {
        ProcessInfo.processInfo.environment["MUEVAL_CONSOLE_SCREENSHOTS"] == "1"
            ? repository.appendingPathComponent("docs/console").path : daemon.directory + "/screenshots"
    }

    private static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testConsoleInARealBrowser() async throws {
        // Skips, loudly, where the browser or its driver is not installed (`make test` installs them).
        if let missing = try BrowserRequirement.missing() { throw XCTSkip(missing) }
        let daemon = try await TestDaemon.start()  // its console on a free loopback port
        defer { daemon.cleanUp() }
        // The login link as a researcher gets it; the console may still be binding its port.
        let link = try await eventually("muevalctl console to print a login link; muevald log:\n\(daemon.log)") { () -> String? in
            let console = try daemon.muevalctl(["console", "--json"])
            guard console.status == 0 else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(console.stdout.utf8)) as? [String: Any])?["url"] as? String
        }

        // The study page's recruitment, counted as `study status` counts it (console_browser.py, recruitment_checks).
        try RecruitCommandTests.recruitInTwoIterations(daemon, study: "recruited-study")

        let script = try FollowingProcess(BrowserRequirement.python, [Self.repository.appendingPathComponent("Tests/Browser/console_browser.py").path],
                                          environment: ["CONSOLE_LOGIN_URL": link,
                                                        "SCREENSHOT_DIR": Self.screenshotDirectory(daemon)])
        defer { if script.process.isRunning { script.signal(SIGKILL) } }
        let output = { "script output:\n\(script.lines.joined(separator: "\n"))\n\(script.stderr)\nmuevald log:\n\(daemon.log)" }

        // The session waits and the live page watches it: now the phone connects and streams.
        try await eventually(timeout: 120, "the browser to start a session and open its live page; \(output())") { () -> Bool? in
            if script.lines.contains(where: { $0.hasPrefix("READY-FOR-DEVICE ") }) { return true }
            return script.process.isRunning ? nil : false
        }
        XCTAssertTrue(script.process.isRunning, output())
        let simulator = try FollowingProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--duration", "600",
            "--scenario", Self.repository.appendingPathComponent("Tests/Browser/hostile-scenario.json").path,
        ])
        defer { if simulator.process.isRunning { simulator.signal(SIGKILL) } }

        let status = try await script.exitStatus(timeout: 600)
        print(output())
        XCTAssertEqual(status, 0, "the browser test failed; \(output())")
        guard status == 0 else { return }

        // The notes the browser added are in the session file, as muevalctl sees them.
        let result = try XCTUnwrap(script.lines.last { $0.hasPrefix("RESULT ") }, output())
        let reported = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.dropFirst("RESULT ".count).utf8)) as? [String: Any])
        let session = try XCTUnwrap(reported["session"] as? String)
        let notes = try XCTUnwrap(reported["notes"] as? [[String: String]])
        let events = try daemon.muevalctl(["events", session, "--class", "ObserverNote", "--limit", "0", "--json"])
        XCTAssertEqual(events.status, 0, events.stderr)
        let stored = events.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["payload"] as? [String: Any]
        }
        for note in notes {
            XCTAssertTrue(stored.contains { $0["text"] as? String == note["text"] && $0["kind"] as? String == note["kind"] },
                          "muevalctl events lacks the note \(note): \(events.stdout)")
        }
    }
}
