import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import SessionModel
import XCTest

/// Issue 15: "a slow or stalled browser never slows ingest: bounded per-client queue, skips counted and
/// shown". A browser that opened the Live page's WebSocket and then stopped reading (a frozen tab, a
/// laptop lid closed) must cost the daemon neither events nor unbounded memory, nor hold up another
/// browser watching the same session. The ingest time with and without it is a `make bench` figure
/// (docs/BENCHMARKS.md), not asserted here.
final class ConsoleStallTests: XCTestCase {
    /// Seven times what `console.live_buffer` (4,096 lines) holds for the stalled browser, so that it must skip; 100,000
    /// made this the suite's longest test (273 s of a loaded CI run) for nothing more.
    private static let events = 30_000
    /// muevald's peak resident memory may grow by at most this while the events arrive. What a stalled
    /// browser may hold in the daemon: `console.live_buffer` (4,096) tail lines and the one message being
    /// written; the kernel's socket buffers are not the daemon's memory. Measured: 8 MiB (debug build).
    private static let growthBound = 48 << 20

    func testAStalledLiveBrowserLosesNoEventsKeepsMemoryBoundedAndHoldsUpNoOtherBrowser() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "stall"))
        let link = try await daemon.consoleLink()
        let browser = ConsoleClient(link: link.url)
        try await browser.login(link.url)
        let cookie = try XCTUnwrap(browser.cookie, "the login link gave no cookie")
        let consolePort = try XCTUnwrap(URL(string: browser.base)?.port)
        let path = "/api/sessions/\(session.id)/live"

        // The stalled browser: a 4 KB receive window, the upgrade request, and then it never reads.
        let stalled = try RawSocket(port: consolePort, receiveBuffer: 4096)
        defer { stalled.close(reset: true) }
        try stalled.write(Array(("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(consolePort)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: c3RhbGxlZC1icm93c2VyIQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Cookie: mueval_console=\(cookie)\r\n\r\n").utf8))
        try await waitForFollowers(daemon, 1)

        // The reading browser counts the events and the skips it is told about, until they cover every event.
        let tally = Tally()
        let reader = Task { [browser, tally] in try await ConsoleStallTests.follow(path, in: browser, counting: tally) }
        defer { reader.cancel() }
        try await waitForFollowers(daemon, 2)

        let before = try peakMemory(of: daemon)
        let simulator = try simulate(port: daemon.port)
        defer { if simulator.process.isRunning { simulator.process.terminate() } }
        try await eventually(timeout: 600, "muevalsim to send \(Self.events) events") { simulator.process.isRunning ? nil : true }
        XCTAssertEqual(simulator.process.terminationStatus, 0, "muevalsim: \(simulator.output())")

        // Every event stored: acknowledged to the simulator, counted by the daemon, in the session.
        let counters = try await daemon.ctl.call(ControlRequest.Status()).counters
        XCTAssertEqual(counters.eventsStored, Self.events)
        XCTAssertEqual(counters.eventsFailedStorage, 0)
        let growth = try peakMemory(of: daemon) - before
        XCTAssertLessThan(growth, Self.growthBound, "peak RSS grew by \(growth >> 20) MiB with a stalled browser")

        // The other browser saw every event, or was told how many it missed.
        try await eventually(timeout: 120, "the reading browser to account for every event") { () -> Bool? in
            tally.total >= Self.events ? true : nil
        }
        let seen = tally.counts
        print("ConsoleStallTests: peak RSS grew by \(growth >> 20) MiB; the reading browser got \(seen.events) events and \(seen.skipped) skipped")
        XCTAssertTrue(seen.skipped > 0 || seen.events == Self.events, "\(seen.events) events, \(seen.skipped) skipped")
        XCTAssertEqual(seen.events + seen.skipped, Self.events)

        // Stopping the session does not wait for the stalled browser either.
        let stopped = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
        XCTAssertEqual(stopped.first?.events, Int64(Self.events))
        // Nor does muevald's exit: shutdown ends the stalled browser's write.
        let status = try await daemon.stop(timeout: 30)
        XCTAssertEqual(status, 0, "muevald did not exit cleanly while a browser stalled: \(daemon.log.suffix(2000))")
    }

    /// Reads the live stream until the messages account for every event.
    private static func follow(_ path: String, in browser: ConsoleClient, counting tally: Tally) async throws {
        try await browser.webSocket(path) { text in
            tally.add(message: text)
            return tally.total < events
        }
    }

    /// Live tails and live pages following now (`status`'s `tails` counts both).
    private func waitForFollowers(_ daemon: TestDaemon, _ count: Int) async throws {
        try await eventually(timeout: 30, "\(count) live stream subscribers") { () -> Bool? in
            try await daemon.ctl.call(ControlRequest.Status()).tails == count ? true : nil
        }
    }

    /// muevalsim, one device, as fast as the daemon acknowledges, with screenshots (the Wordpress scenario).
    private func simulate(port: Int) throws -> (process: Process, output: @Sendable () -> String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("muevalsim-\(UUID().uuidString.prefix(8)).txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        addTeardownBlock { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestDaemon.executable("muevalsim"))
        process.arguments = ["--connect", "127.0.0.1:\(port)", "--rate", "max", "--events", String(Self.events), "--seed", "15"]
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return (process, { (try? String(contentsOf: output, encoding: .utf8)) ?? "" })
    }
}

/// What a reading browser got: events, and events it was told it missed.
private final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var events = 0
    private var skipped = 0

    /// Counts a live stream message: `events` by its events, `skipped` by its count.
    func add(message text: String) {
        guard let message = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else { return }
        let type = message["type"] as? String
        let count = type == "events" ? (message["events"] as? [Any])?.count ?? 0 : 0
        let missed = type == "skipped" ? message["count"] as? Int ?? 0 : 0
        lock.withLock {
            events += count
            skipped += missed
        }
    }

    var counts: (events: Int, skipped: Int) { lock.withLock { (events, skipped) } }
    var total: Int { lock.withLock { events + skipped } }
}
