import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// Many web phones at once against the real muevald (issue 52, item 4): Tests/Load/web_phones.py plays 80 phones in one
/// Python process, each a WebSocket to the console's `/capture` as capture.js keeps one (touches in 100 ms batches, every
/// phone's socket dropped once without a goodbye at a seeded moment, everything unacknowledged resent on a new socket, a
/// goodbye after the last ack). Forty phones come from eight loopback addresses and forty from one, as a lab's room of
/// phones behind one Wi-Fi router does. muevald opens sessions by itself (`--unknown-devices auto`) and asks for no code
/// (`capture.web_require_code = false`). Then, from the session files themselves: one session per device, every seq the
/// phone made stored exactly once and nothing else, every session stopped by its goodbye, and each with its report.
final class WebPhonesSoakTests: XCTestCase {
    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Load/web_phones.py").path
    private static let python = "/usr/bin/python3"

    /// What the test reads of web_phones.py's summary (its snake_case keys, converted).
    struct Summary: Decodable {
        struct Phone: Decodable {
            let device: String
            let room: Int
            let made: Int
            let acked: Int
            let unacked: Int
            let refused: Int
            let reconnects: Int
            let sessions: [String]
            let refusals: Int
            let goodbye: String
            /// How its socket died once: close (a FIN), reset (an RST) or silent (left open, unread).
            let drop: String
            let firstSeq: Int64
            let lastSeq: Int64
        }

        struct Refusal: Decodable {
            let status: Int
            let body: String
            let count: Int
        }

        let perPhone: [Phone]
        let refusals: [Refusal]
        let errors: [String: Int]
    }

    func testEightyWebPhonesDroppingOnceEachKeepOneSessionStoreEverySeqOnceAndGetTheirReports() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python) else {
            throw XCTSkip("CANNOT RUN HERE: \(Self.python) is missing (apt-get install python3; `make test-deps` does)")
        }
        let config = try ConfigFile("[capture]\nweb_require_code = false\n")
        defer { config.remove() }
        let daemon = try await TestDaemon.start(arguments: ["--config", config.path, "--unknown-devices", "auto"])
        defer { daemon.cleanUp() }
        let console = try await daemon.consoleLink().url
        let port = try XCTUnwrap(URLComponents(string: console)?.port, console)

        // 80 phones × 10 events/s × 20 s; every phone drops once (a FIN, an RST or silence, seeded). The script bounds
        // itself (the drain's 30 s, then it gives up and says what stayed unacknowledged); the timeout is a safety net.
        let output = daemon.directory + "/phones.json"
        let run = try runProcess(Self.python, [Self.script, "--port", String(port), "--room", "40:8:127.0.0.10",
                                               "--room", "40:1:127.0.0.100", "--rate", "10", "--seconds", "20",
                                               "--drain-timeout", "30", "--drop", "mixed", "--seed", "52",
                                               "--device-prefix", "soak", "--output", output], timeout: 150)
        let context = "web_phones.py: status \(run.status)\n\(run.stderr)\nmuevald log (end):\n\(daemon.log.suffix(6000))"
        guard let written = FileManager.default.contents(atPath: output) else { return XCTFail("no summary from web_phones.py\n\(context)") }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let summary = try decoder.decode(Summary.self, from: written)
        XCTAssertEqual(summary.perPhone.count, 80, context)

        // What the phones saw: every event acknowledged, none refused, each phone dropped and came back, welcomed into
        // one session; the room behind one address was let in (issue 52: 150 phones from one address got 400s).
        for phone in summary.perPhone {
            XCTAssertEqual(phone.unacked, 0, "\(phone.device): \(phone.unacked) of \(phone.made) never acknowledged")
            XCTAssertEqual(phone.refused, 0, "\(phone.device): events refused")
            XCTAssertGreaterThanOrEqual(phone.reconnects, 1, "\(phone.device): it was to drop once and reconnect")
            XCTAssertEqual(phone.goodbye, "after every ack", "\(phone.device)")
            XCTAssertEqual(phone.sessions.count, 1, "\(phone.device) was welcomed into sessions \(phone.sessions)")
        }
        for room in [0, 1] {
            let refused = summary.perPhone.filter { $0.room == room }.reduce(0) { $0 + $1.refusals }
            XCTAssertEqual(refused, 0, "room \(room) (\(room == 0 ? "8 addresses" : "one address")): upgrades refused: "
                           + "\(summary.refusals.map { "\($0.count)× \($0.status) \($0.body)" })")
        }
        XCTAssertTrue(summary.errors.isEmpty, "errors from muevald: \(summary.errors)")

        // What muevald stored, from the catalog and the session files. Each goodbye stops its session at once: a goodbye
        // on a phone's new socket while its old one (a silent drop) is still open must stop it too.
        let sessions = try await stoppedSessions(of: summary, in: daemon)
        let drops = Dictionary(summary.perPhone.map { ($0.device, $0.drop) }) { first, _ in first }
        let open = sessions.filter { $0.state != .stopped }
        XCTAssertEqual(open.count, 0, "not stopped 30 s after the goodbyes (session, device, state, how its phone dropped): "
                       + "\(open.map { "\($0.id) \($0.device ?? "-") \($0.state.rawValue) \(drops[$0.device ?? ""] ?? "?")" })")
        let byDevice = Dictionary(grouping: sessions) { $0.device ?? $0.boundDevice ?? "" }
        for phone in summary.perPhone {
            let own = byDevice[phone.device] ?? []
            XCTAssertEqual(own.count, 1, "\(phone.device): sessions \(own.map(\.id)) (one per device, drops or not)")
            var seqs: [Int64] = []
            for session in own {
                seqs += try SessionReader(path: session.path).events().filter { $0.device == phone.device }.compactMap(\.seq)
            }
            let expected = Array(phone.firstSeq...phone.lastSeq)
            if seqs.sorted() != expected {
                let counts = Dictionary(seqs.map { ($0, 1) }, uniquingKeysWith: +)
                XCTFail("\(phone.device): \(seqs.count) stored of \(expected.count) made; missing "
                        + "\(expected.filter { counts[$0] == nil }.prefix(10)), twice \(counts.filter { $0.value > 1 }.keys.sorted().prefix(10)), "
                        + "extra \(counts.keys.filter { !(phone.firstSeq...phone.lastSeq).contains($0) }.sorted().prefix(10))")
            }
        }

        // Every stopped session's automatic report (the durable queue writes them max_concurrent at a time).
        let stopped = sessions.filter { $0.state == .stopped }.map(\.id)
        let missing = try await reportsMissing(for: stopped, in: daemon, timeout: 90)
        XCTAssertEqual(missing, [], "no report after 90 s for sessions \(missing)\n\(context)")
    }

    /// The phones' sessions (muevalctl sessions --json), once all are stopped or 30 s after the phones finished;
    /// the assertions say which were not.
    private func stoppedSessions(of summary: Summary, in daemon: TestDaemon) async throws -> [SessionRecord] {
        let devices = Set(summary.perPhone.map(\.device))
        let deadline = Date().addingTimeInterval(30)
        while true {
            let listed = try daemon.muevalctl(["sessions", "--json"])
            XCTAssertEqual(listed.status, 0, listed.stderr)
            let sessions = try JSONDecoder().decode([SessionRecord].self, from: Data(listed.stdout.utf8))
                .filter { devices.contains($0.device ?? $0.boundDevice ?? "") }
            if sessions.allSatisfy({ $0.state == .stopped }) || Date() > deadline { return sessions }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    /// The sessions among `ids` without `DATA/reports/ID/default/index.html` once all have one or `timeout` s passed.
    private func reportsMissing(for ids: [Int64], in daemon: TestDaemon, timeout: Double) async throws -> [Int64] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let missing = ids.filter {
                !FileManager.default.fileExists(atPath: "\(daemon.dataDirectory)/reports/\($0)/default/index.html")
            }
            if missing.isEmpty || Date() > deadline { return missing }
            try await Task.sleep(for: .milliseconds(250))
        }
    }
}
