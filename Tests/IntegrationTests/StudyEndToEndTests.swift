import ControlProtocol
import DaemonTestSupport
import Foundation
import SessionModel
import XCTest

/// A whole study through the real chain (issue 16): two iterations of the WordPress app, three tasks,
/// five simulated participants per iteration recorded by muevald from `muevalsim` (some fail, abandon,
/// wander, misclick or dawdle), the observer's verdicts and the questionnaires given with muevalctl;
/// then `muevalctl study export` and `muevalctl report --study`. Every number of the export is
/// computed here again from the sessions' events, with the textbook formulas written out below; the
/// CSV is read by Python's csv module; the report is opened in Debian's Chromium with its charts drawn.
final class StudyEndToEndTests: XCTestCase {
    static let study = "wordpress-redesign"
    static let tasks: [(name: String, success: String, path: [String])] = [
        ("Open the blog", "event:BlogOpened", ["PostsViewController"]),
        ("Edit blog posting", "event:PostDrafted", ["EditPostViewController", "CategoriesViewController", "EditPostViewController"]),
        ("Publish blog posting", "observer", ["PostsViewController", "BlogsViewController"]),
    ]
    /// Who does what: muevalsim's participant options, the observer's verdict on publishing, SUS and SEQ answers.
    struct Participant {
        var code: String
        var iteration: Int
        var behaviour: [String]
        var verdict: String?
        var sus: [Int]
        var seq: Int
    }

    static let participants: [Participant] = [
        Participant(code: "P01", iteration: 1, behaviour: [], verdict: "success", sus: [4, 2, 4, 1, 5, 2, 5, 1, 4, 2], seq: 6),
        Participant(code: "P02", iteration: 1, behaviour: ["--fail-task", "Edit blog posting"], verdict: "failure", sus: [2, 4, 2, 4, 3, 3, 2, 4, 2, 4], seq: 2),
        Participant(code: "P03", iteration: 1, behaviour: ["--abandon-task", "Publish blog posting", "--wander", "0.4"], verdict: nil,
                    sus: [3, 3, 3, 3, 3, 3, 3, 3, 3, 3], seq: 3),
        Participant(code: "P04", iteration: 1, behaviour: ["--misclick-rate", "0.5"], verdict: "assisted", sus: [4, 2, 3, 2, 4, 2, 4, 2, 3, 2], seq: 4),
        Participant(code: "P05", iteration: 1, behaviour: ["--think-scale", "2.5"], verdict: "success", sus: [5, 1, 4, 1, 4, 2, 4, 1, 4, 1], seq: 5),
        Participant(code: "P06", iteration: 2, behaviour: [], verdict: "success", sus: [5, 1, 5, 1, 5, 1, 5, 1, 5, 1], seq: 7),
        Participant(code: "P07", iteration: 2, behaviour: ["--wander", "0.2"], verdict: "success", sus: [4, 1, 5, 2, 4, 1, 5, 2, 4, 1], seq: 6),
        Participant(code: "P08", iteration: 2, behaviour: ["--think-scale", "0.6"], verdict: "success", sus: [5, 2, 5, 1, 4, 1, 5, 1, 5, 2], seq: 7),
        Participant(code: "P09", iteration: 2, behaviour: ["--fail-task", "Open the blog"], verdict: "success", sus: [3, 2, 4, 2, 4, 2, 4, 2, 3, 2], seq: 5),
        Participant(code: "P10", iteration: 2, behaviour: ["--misclick-rate", "0.3"], verdict: "success", sus: [4, 2, 4, 2, 4, 2, 4, 2, 4, 2], seq: 6),
    ]

    private static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private func ok(_ daemon: TestDaemon, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let run = try daemon.muevalctl(arguments)
        XCTAssertEqual(run.status, 0, "muevalctl \(arguments.joined(separator: " ")): \(run.stderr)", file: file, line: line)
        return run.stdout
    }

    func testAStudyOfTwoIterationsFromSimulatedParticipantsToItsNumbersExportAndReport() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let study = Self.study
        _ = try ok(daemon, ["study", "create", study, "--app-id", "org.wordpress", "--description", "Does the new editor help?"])
        _ = try ok(daemon, ["study", "iteration", "add", study, "--label", "2.6.4"])
        _ = try ok(daemon, ["study", "iteration", "add", study, "--label", "2.7 editor redesign"])
        for task in Self.tasks {
            _ = try ok(daemon, ["study", "task", "add", study, task.name, "--success", task.success,
                                "--expected-path", task.path.joined(separator: ",")])
        }
        for participant in Self.participants {
            _ = try ok(daemon, ["study", "participant", "add", study, participant.code,
                                "--attribute", "experience=\(participant.iteration == 1 ? "novice" : "blogger")"])
        }

        // Each participant: a session of the study, one pass of the scenario on a simulated phone, the verdict.
        var sessions: [String: String] = [:]
        for (index, participant) in Self.participants.enumerated() {
            let id = try ok(daemon, ["start", "--study", study, "--iteration", String(participant.iteration), "--participant", participant.code])
                .trimmingCharacters(in: .whitespacesAndNewlines)
            sessions[participant.code] = id
            let run = try runProcess(TestDaemon.executable("muevalsim"), [
                "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "wordpress", "--seed", String(100 + index), "--speed", "40",
                "--ack-timeout", "20",
            ] + participant.behaviour)
            XCTAssertEqual(run.status, 0, "muevalsim for \(participant.code): \(run.stderr)")
            _ = try ok(daemon, ["stop", id])
            if let verdict = participant.verdict {
                _ = try ok(daemon, ["task", id, "outcome", "Publish blog posting", verdict])
            }
            _ = try ok(daemon, ["questionnaire", "sus", study, "--iteration", String(participant.iteration), "--participant", participant.code,
                                "--answers", participant.sus.map(String.init).joined(separator: ",")])
            _ = try ok(daemon, ["questionnaire", "seq", study, "--iteration", String(participant.iteration), "--participant", participant.code,
                                "--task", "Edit blog posting", "--rating", String(participant.seq)])
        }

        // What the sessions hold, computed here from their events.
        var expected: [String: ExpectedAttempt] = [:]
        for participant in Self.participants {
            let events = try self.events(daemon, session: sessions[participant.code]!)
            for task in Self.tasks {
                expected["\(participant.code)|\(task.name)"] = ExpectedAttempt(events: events, task: task, participant: participant)
            }
        }
        XCTAssertEqual(expected["P02|Edit blog posting"]?.outcome, "failure")
        XCTAssertEqual(expected["P03|Publish blog posting"]?.outcome, "abandoned")
        XCTAssertEqual(expected["P04|Publish blog posting"]?.outcome, "assisted")
        XCTAssertEqual(expected["P09|Open the blog"]?.outcome, "failure")
        XCTAssertEqual(expected["P01|Open the blog"]?.outcome, "success")

        // The export, read by Python's csv module.
        let csvPath = daemon.directory + "/study.csv"
        _ = try ok(daemon, ["study", "export", study, "--format", "csv", "--output", csvPath])
        let parsed = try runProcess(BrowserRequirement.python, ["-c", """
            import csv, json, sys
            with open(sys.argv[1], newline='') as f:
                rows = list(csv.DictReader(f))
            print(json.dumps(rows))
            """, csvPath])
        XCTAssertEqual(parsed.status, 0, parsed.stderr)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [[String: String]])
        XCTAssertEqual(rows.count, Self.participants.count * Self.tasks.count, "one row per participant × task × iteration")

        for row in rows {
            let key = "\(row["participant"] ?? "")|\(row["task"] ?? "")"
            let attempt = try XCTUnwrap(expected[key], key)
            XCTAssertEqual(row["outcome"], attempt.outcome, key)
            XCTAssertEqual(row["iteration"], String(attempt.participant.iteration), key)
            XCTAssertEqual(row["session"], sessions[attempt.participant.code], key)
            XCTAssertEqual(row["overridden"], attempt.participant.verdict != nil && attempt.task.success == "observer" ? "true" : "false", key)
            if attempt.outcome == "success" {
                XCTAssertEqual(try XCTUnwrap(Double(row["time_s"] ?? ""), key), attempt.duration!, accuracy: 0.01, key)
            }
            XCTAssertEqual(row["misclicks"], String(attempt.misclicks), key)
            XCTAssertEqual(row["backtracks"], String(attempt.backtracks), key)
            XCTAssertEqual(row["extra_views"], String(attempt.extraViews), key)
            XCTAssertEqual(try XCTUnwrap(Double(row["sus"] ?? ""), key), susScore(attempt.participant.sus), accuracy: 0.001, key)
            XCTAssertEqual(row["seq"], attempt.task.name == "Edit blog posting" ? String(attempt.participant.seq) : "", key)

            // The task's numbers in this iteration, from every participant of it.
            let peers = expected.values.filter { $0.task.name == attempt.task.name && $0.participant.iteration == attempt.participant.iteration }
            let successes = peers.filter { $0.outcome == "success" }
            let (rate, low, high) = adjustedWald(successes: successes.count, trials: peers.count)
            XCTAssertEqual(try XCTUnwrap(Double(row["completion_rate"] ?? ""), key), rate, accuracy: 0.0005, key)
            XCTAssertEqual(try XCTUnwrap(Double(row["completion_low"] ?? ""), key), low, accuracy: 0.0005, key)
            XCTAssertEqual(try XCTUnwrap(Double(row["completion_high"] ?? ""), key), high, accuracy: 0.0005, key)
            if let (mean, low, high) = geometricMean(successes.compactMap(\.duration)) {
                XCTAssertEqual(try XCTUnwrap(Double(row["time_geomean_s"] ?? ""), key), mean, accuracy: 0.01, key)
                XCTAssertEqual(try XCTUnwrap(Double(row["time_low"] ?? ""), key), low, accuracy: 0.01, key)
                XCTAssertEqual(try XCTUnwrap(Double(row["time_high"] ?? ""), key), high, accuracy: 0.01, key)
            }
        }

        // The report: written, then opened in Chromium.
        let reportDirectory = daemon.directory + "/study-report"
        let index = try ok(daemon, ["report", "--study", study, "--out", reportDirectory, "--session-reports"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(index, reportDirectory + "/index.html")
        let html = try String(contentsOfFile: index, encoding: .utf8)
        for iteration in [1, 2] {
            let scores = Self.participants.filter { $0.iteration == iteration }.map { susScore($0.sus) }
            let mean = scores.reduce(0, +) / Double(scores.count)
            XCTAssertTrue(html.contains(String(format: "%.1f", mean)), "SUS mean \(mean) of iteration \(iteration) in the report")
        }
        for participant in Self.participants {
            XCTAssertTrue(FileManager.default.fileExists(atPath: reportDirectory + "/sessions/\(sessions[participant.code]!)/index.html"),
                          "the session report of \(participant.code)")
        }
        try checkInBrowser(index)
    }

    // MARK: What the events say

    struct ExpectedAttempt {
        var participant: Participant
        var task: (name: String, success: String, path: [String])
        var outcome: String
        var duration: Double?
        var misclicks = 0
        var backtracks = 0
        var extraViews = 0

        init(events: [[String: Any]], task: (name: String, success: String, path: [String]), participant: Participant) {
            self.participant = participant
            self.task = task
            func payload(_ event: [String: Any]) -> [String: Any] { event["payload"] as? [String: Any] ?? [:] }
            func time(_ event: [String: Any]) -> Double { event["timestamp"] as? Double ?? 0 }
            let markers = events.filter { $0["class"] as? String == "CustomEvent" && payload($0)["name"] as? String == task.name }
            let begin = markers.first { payload($0)["marker"] as? String == "begin" }.map(time)!
            let end = markers.first { payload($0)["marker"] as? String == "end" }.map(time)
            let window = { (event: [String: Any]) in time(event) >= begin && time(event) <= (end ?? .infinity) }
            duration = end.map { $0 - begin }
            let inside = events.filter(window)
            let appearances = inside.filter { $0["class"] as? String == "UserInterfaceEvent" && payload($0)["type"] as? String == "viewDidAppear" }
            backtracks = appearances.count { ["pop", "dismiss"].contains(payload($0)["transition"] as? String) }
            extraViews = appearances.count - longestCommonSubsequence(appearances.compactMap { payload($0)["view"] as? String }, task.path)
            misclicks = inside.count { event in
                let fields = payload(event)
                return event["class"] as? String == "UserInputEvent" && fields["type"] as? String == "gesture"
                    && fields["gesture"] as? String == "tap" && fields["recognized"] as? Bool == false
            }
            if end == nil {
                outcome = "abandoned"
            } else if task.success.hasPrefix("event:") {
                let name = String(task.success.dropFirst("event:".count))
                outcome = inside.contains { $0["class"] as? String == "CustomEvent" && payload($0)["name"] as? String == name } ? "success" : "failure"
            } else {
                outcome = participant.verdict ?? "failure"
            }
        }
    }

    private func events(_ daemon: TestDaemon, session: String) throws -> [[String: Any]] {
        let run = try daemon.muevalctl(["events", session, "--json", "--limit", "0", "--class", "CustomEvent", "--class", "UserInterfaceEvent",
                                        "--class", "UserInputEvent"])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    // MARK: The formulas, written out independently of StudyMetrics

    /// Brooke (1996): odd items score answer − 1, even items 5 − answer; the sum times 2.5.
    private func susScore(_ items: [Int]) -> Double {
        Double(items.enumerated().map { $0.offset % 2 == 0 ? $0.element - 1 : 5 - $0.element }.reduce(0, +)) * 2.5
    }

    /// Agresti & Coull (1998), as Sauro & Lewis recommend for small samples: observed rate, adjusted interval.
    private func adjustedWald(successes: Int, trials: Int) -> (Double, Double, Double) {
        let z = 1.959963984540054
        let adjusted = (Double(successes) + z * z / 2) / (Double(trials) + z * z)
        let margin = z * (adjusted * (1 - adjusted) / (Double(trials) + z * z)).squareRoot()
        return (Double(successes) / Double(trials), max(0, adjusted - margin), min(1, adjusted + margin))
    }

    /// Two-sided 95 % t quantiles for 1…9 degrees of freedom (any statistics table).
    private static let t975 = [12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851, 2.364624252, 2.306004135, 2.262157163]

    /// Geometric mean and the t-interval of the logs, back-transformed (Sauro & Lewis, chapter 3).
    private func geometricMean(_ times: [Double]) -> (Double, Double, Double)? {
        guard times.count >= 2 else { return nil }
        let logs = times.map { Foundation.log($0) }
        let mean = logs.reduce(0, +) / Double(logs.count)
        let sd = (logs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(logs.count - 1)).squareRoot()
        let margin = Self.t975[logs.count - 2] * sd / Double(logs.count).squareRoot()
        return (exp(mean), exp(mean - margin), exp(mean + margin))
    }

    // MARK: The browser

    private func checkInBrowser(_ index: String) throws {
        if let missing = try BrowserRequirement.missing() { throw XCTSkip(missing) }
        let run = try runProcess(BrowserRequirement.python, [Self.repository.appendingPathComponent("Tests/Browser/study_report_browser.py").path, index])
        XCTAssertEqual(run.status, 0, "study_report_browser.py: \(run.stdout)\n\(run.stderr)")
    }
}

private func longestCommonSubsequence(_ a: [String], _ b: [String]) -> Int {
    guard !a.isEmpty, !b.isEmpty else { return 0 }
    var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 1...a.count {
        for j in 1...b.count {
            table[i][j] = a[i - 1] == b[j - 1] ? table[i - 1][j - 1] + 1 : max(table[i - 1][j], table[i][j - 1])
        }
    }
    return table[a.count][b.count]
}
