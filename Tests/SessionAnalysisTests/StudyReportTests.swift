import Foundation
import ReportCritique
import SessionAnalysis
import SessionAnalysisTestSupport
import SessionModel
import StudyAnalysis
import StudyMetrics
import WireProtocol
import XCTest

/// The study report, written from results made by hand: two iterations, three tasks, five participants,
/// problems and heatmaps whose screenshots come from a small session file.
final class StudyReportTests: AnalysisTestCase {
    static let hostile = "<script>alert(\"x\")</script>"
    static let participants = ["P1", "P2", "P3", "P4", "P5"]
    static let tasks = ["Write a post", "Publish", "Change settings"]

    /// A session file with two screens; returns its path and the screenshots' references.
    private func screens() async throws -> (path: String, posts: ScreenshotReference, edit: ScreenshotReference) {
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "PostsViewController", transition: "launch", stack: ["Posts"], screenshot: image("posts"))
            journal.viewDidAppear(at: t0 + 10, view: "EditPostViewController", transition: "push", stack: ["Posts", "Edit"],
                                  screenshot: image("edit"))
        }
        let shots = try analysis.result(Screenshots.self).shots
        XCTAssertEqual(shots.count, 2)
        let path = directory + "/s.sqlite"
        return (path, ScreenshotReference(sessionPath: path, sha256: shots[0].blob.sha256, screen: Size(width: 320, height: 480)),
                ScreenshotReference(sessionPath: path, sha256: shots[1].blob.sha256, screen: Size(width: 320, height: 480)))
    }

    private func results() async throws -> StudyResults {
        let (path, posts, edit) = try await screens()
        return try sampleStudyResults(path: path, posts: posts, edit: edit)
    }

    private func count(_ needle: String, in html: String) -> Int { html.components(separatedBy: needle).count - 1 }

    func testEverySectionWithItsNumbersChartsAndEscapedText() async throws {
        let results = try await results()
        let index = try StudyReportWriter().write(results, to: directory + "/report", links: StudyReportLinks())
        XCTAssertEqual(index, directory + "/report/index.html")
        let html = try String(contentsOfFile: index, encoding: .utf8)
        for id in ["overview", "tasks", "comparison", "participants", "sus", "problems", "heatmaps", "notes"] {
            XCTAssertTrue(html.contains("<section id=\"\(id)\""), "no \(id) section")
        }
        // Overview.
        XCTAssertTrue(html.contains("Study report: Blog &lt;app&gt;"))
        XCTAssertTrue(html.contains("Iteration 2 · redesign"))
        XCTAssertTrue(html.contains("<td class=\"num\">72.0 <span class=\"interval\">(50.3–93.7)</span></td><td>C+</td>"), "SUS with grade")
        // Tasks: numbers formatted, charts drawn here with one bar per estimate (one time is missing).
        XCTAssertTrue(html.contains("<td class=\"num\">4 of 5</td><td class=\"num\">80.0 % <span class=\"interval\">(37.6 %–96.4 %)</span></td>"))
        XCTAssertTrue(html.contains("42.5 s <span class=\"interval\">(30.2 s–1:01.8)</span>"))
        XCTAssertTrue(html.contains("<td class=\"num\">0.40</td><td class=\"num\">0.20</td><td class=\"num\">1.25</td><td class=\"num\">0.60</td>"))
        XCTAssertEqual(count("<svg class=\"chart\"", in: html), 9, "three charts per task")
        XCTAssertEqual(count("<rect class=\"bar\"", in: html), 17, "6 completion + 5 time + 6 SEQ bars")
        XCTAssertEqual(count("<path class=\"whisker\"", in: html), 17 + 1, "every bar's interval, and the SUS mean's")
        // Iteration against iteration.
        XCTAssertTrue(html.contains("+40.0 pp <span class=\"interval\">(+10.0 pp to +70.0 pp)</span><br><span class=\"verdict improved\">improved</span>"))
        XCTAssertTrue(html.contains("1.80× <span class=\"interval\">(1.20× to 2.60×)</span><br><span class=\"verdict worse\">worse</span>"))
        XCTAssertTrue(html.contains("<span class=\"verdict unclear\">no clear change</span>"))
        // Participants: 2 iterations × 5 participants × 3 tasks, P4's assisted verdict marked as overridden, P5 abandoned.
        XCTAssertEqual(count("<span class=\"outcome\">", in: html), 30)
        XCTAssertEqual(count("<span class=\"overridden\">*</span></td>", in: html), 0)
        XCTAssertEqual(count("<span class=\"outcome\">◐</span><span class=\"overridden\">*</span>", in: html), 2)
        XCTAssertEqual(count("<td class=\"abandoned\"", in: html), 2)
        XCTAssertTrue(html.contains("title=\"assisted: custom event PostSaved (derived: success)\""))
        // SUS: a dot per answer over the grade bands, from F to A+.
        XCTAssertEqual(count("<circle class=\"score\"", in: html), 5)
        XCTAssertEqual(count("<rect class=\"band\"", in: html), SUSGrade.allCases.count)
        // Problems: ranked, "3 of 5", a marked screenshot; device strings are text.
        XCTAssertTrue(html.contains("<strong>3 of 5</strong> participants (P1, P2, P3) · severity 3 of 4 · priority 1.80 · 7 occurrences"))
        XCTAssertTrue(html.contains("<span class=\"mark box\""))
        XCTAssertTrue(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"))
        XCTAssertFalse(html.contains("<script>alert"), "a device string became markup")
        XCTAssertEqual(count("<script", in: html), 1, "only report.js")
        // Heatmaps: aggregated per iteration, each participant folded; a view without screenshot on a blank canvas.
        XCTAssertEqual(count("<canvas", in: html), 4)
        XCTAssertTrue(html.contains("<details class=\"participant\"><summary>P1 · 1 view</summary>"))
        XCTAssertTrue(html.contains("data-shot=\"\""))
        // Notes grouped by task; task marks left out.
        XCTAssertTrue(html.contains("<h3>Publish</h3>") && html.contains("<h3>Outside any task</h3>"))
        XCTAssertEqual(count("<li class=\"note\"", in: html), 2)
        // No console, no session reports: no links.
        XCTAssertFalse(html.contains("replay?t=") || html.contains("/sessions/"))
        // Each screenshot once, nothing from the network.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory + "/report/shots").sorted(),
                       [results.heatmaps[0].screenshot!.sha256 + ".png", results.heatmaps[2].screenshot!.sha256 + ".png"].sorted())
        XCTAssertNil(html.range(of: #"(src|href)="(https?:)?//"#, options: .regularExpression))
    }

    func testLinksGoToTheConsoleAndTheSessionsReportsWhenGiven() async throws {
        let links = StudyReportLinks(console: "http://127.0.0.1:28080/", sessionReports: [101: "sessions/101/index.html"])
        let index = try StudyReportWriter().write(try await results(), to: directory + "/report", links: links)
        let html = try String(contentsOfFile: index, encoding: .utf8)
        XCTAssertTrue(html.contains("<a href=\"sessions/101/index.html\">report</a>"))
        XCTAssertFalse(html.contains("sessions/102/index.html"), "only the reports written")
        XCTAssertTrue(html.contains("<a href=\"http://127.0.0.1:28080/sessions/101\">console</a>"))
        // The problem's moment, 12.5 s into session 101; P2's 20 s into session 102.
        XCTAssertTrue(html.contains("<a href=\"http://127.0.0.1:28080/sessions/101/replay?t=12.500\">replay</a>"))
        XCTAssertTrue(html.contains("<a href=\"http://127.0.0.1:28080/sessions/102/replay?t=20.000\">replay</a>"))
    }

    /// A web session that recorded its page (issue 55): its heatmaps and problems are drawn over the page as it was at
    /// their screenshot, in a frame without scripts; the page's text is there, its script is not.
    func testAWebSessionsHeatmapsAndProblemsAreOverItsPage() async throws {
        let page = #"{"s":1,"n":0,"viewport":{"w":320,"h":480},"root":{"i":1,"c":[{"i":2,"t":"html","c":[{"i":3,"t":"body","c":["#
            + #"{"i":4,"t":"h1","c":[{"i":5,"x":"Posts of the day"}]},{"i":6,"t":"script","c":[{"i":7,"x":"alert(1)"}]}]}]}]}}"#
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "PostsViewController", transition: "launch", stack: ["Posts"], screenshot: image("posts"))
            journal.add("DOMSnapshot", at: t0 + 0.5, ["dom": .string(page)])
            journal.viewDidAppear(at: t0 + 10, view: "EditPostViewController", transition: "push", stack: ["Posts", "Edit"],
                                  screenshot: image("edit"))
        }
        let screenshots = try analysis.result(Screenshots.self)
        let path = directory + "/s.sqlite"
        let reference = { (index: Int) in
            ScreenshotReference(sessionPath: path, sha256: screenshots.shots[index].blob.sha256, screen: Size(width: 320, height: 480),
                                pageTime: screenshots.pageTime(of: index))
        }
        let index = try StudyReportWriter().write(try sampleStudyResults(path: path, posts: reference(0), edit: reference(1)),
                                                  to: directory + "/report", links: StudyReportLinks())
        let html = try String(contentsOfFile: index, encoding: .utf8)
        let heatmaps = try XCTUnwrap(html.components(separatedBy: "<section id=\"heatmaps\"").last?.components(separatedBy: "</section>").first)
        XCTAssertEqual(count("<iframe class=\"page\" sandbox=\"\" inert", in: heatmaps), 3, "the three heatmaps with a screenshot")
        XCTAssertEqual(count("Posts of the day", in: heatmaps), 3)
        XCTAssertFalse(heatmaps.contains("alert(1)"))
        let problems = try XCTUnwrap(html.components(separatedBy: "<section id=\"problems\"").last?.components(separatedBy: "</section>").first)
        XCTAssertTrue(problems.contains("<iframe class=\"page\" sandbox=\"\" inert") && problems.contains("Posts of the day"))
    }

    func testAMissingScreenshotIsAClearError() async throws {
        var results = try await results()
        results.heatmaps[0].screenshot?.sha256 = String(repeating: "0", count: 64)
        XCTAssertThrowsError(try StudyReportWriter().write(results, to: directory + "/report", links: StudyReportLinks())) { error in
            XCTAssertTrue("\(error)".contains("has no such blob"), "\(error)")
        }
    }
}

/// Two iterations, three tasks, five participants, two problems, four heatmaps and three notes, whose
/// screenshots are `posts` and `edit` of the session file at `path`.
func sampleStudyResults(path: String, posts: ScreenshotReference, edit: ScreenshotReference) throws -> StudyResults {
    let hostile = StudyReportTests.hostile
    let participants = StudyReportTests.participants, tasks = StudyReportTests.tasks
    let study = Study(name: "Blog <app>", appId: "org.example.blog", description: "Can bloggers publish?", created: 0,
                      iterations: [StudyIteration(number: 1, label: "baseline", created: 0),
                                   StudyIteration(number: 2, label: "redesign", created: 0)],
                      tasks: [StudyTask(name: tasks[0], timeLimit: 120, success: .event("PostSaved"), expectedPath: ["Posts", "Edit"]),
                              StudyTask(name: tasks[1], success: .view("PublishedViewController")),
                              StudyTask(name: tasks[2])],
                      participants: participants.map { Participant(code: $0, created: 0) }, questions: [])
    let estimate = { (value: Double, low: Double, high: Double, n: Int) in Estimate(value: value, interval: Interval(low: low, high: high), n: n) }
    var sessions: [AnalysedSession] = []
    var attempts: [TaskAttempt] = []
    for iteration in 1...2 {
        for (index, participant) in participants.enumerated() {
            let id = Int64(iteration * 100 + index + 1)
            let start = t0 + Double(index) * 1000
            sessions.append(AnalysedSession(id: id, uuid: "u\(id)", name: "session \(id)", iteration: iteration, participant: participant,
                                            path: path, start: start, duration: 600, events: 1000))
            for (number, task) in tasks.enumerated() {
                let failed = index == 4 && number == 1
                attempts.append(TaskAttempt(session: id, iteration: iteration, participant: participant, task: task,
                                            start: start + Double(number) * 100, end: failed ? nil : start + Double(number) * 100 + 42.5,
                                            outcome: failed ? .abandoned : (index == 3 && number == 2 ? .assisted : .success),
                                            derivedOutcome: failed ? .abandoned : .success, overridden: index == 3 && number == 2,
                                            reason: failed ? "no end" : "custom event PostSaved", seq: 5, misclicks: 1, unresponsiveTaps: 0,
                                            views: ["Posts", "Edit"], extraViews: 0, backtracks: 0, problems: [], runs: 1))
            }
        }
    }
    var metrics: [TaskMetrics] = []
    for iteration in 1...2 {
        for task in tasks {
            // The first task had no success in iteration 1: no time, no bar.
            let time = task == tasks[0] && iteration == 1 ? nil : estimate(42.5, 30.2, 61.8, 5)
            metrics.append(TaskMetrics(task: task, iteration: iteration, attempts: 5, successes: 4,
                                       completion: estimate(0.8, 0.376, 0.9638, 5), time: time, seq: estimate(5.2, 4.1, 6.3, 5),
                                       misclicks: 0.4, unresponsiveTaps: 0.2, extraViews: task == tasks[0] ? 1.25 : nil, backtracks: 0.6,
                                       problemsHit: 1))
        }
    }
    let comparisons = [
        TaskComparison(task: tasks[0], from: 1, to: 2, completion: Difference(value: 0.4, interval: Interval(low: 0.1, high: 0.7), isSignificant: true),
                       time: nil, seq: Difference(value: 0.2, interval: Interval(low: -0.5, high: 0.9), isSignificant: false)),
        TaskComparison(task: tasks[1], from: 1, to: 2, completion: nil,
                       time: Difference(value: 1.8, interval: Interval(low: 1.2, high: 2.6), isSignificant: true), seq: nil),
        TaskComparison(task: tasks[2], from: 1, to: 2, completion: nil, time: nil, seq: nil),
    ]
    let problem = ProblemGroup(id: "i1-unresponsive-tap-edit", iteration: 1, kind: .unresponsiveTap, view: hostile, element: "Publish",
                               participants: ["P1", "P2", "P3"], frequency: 0.6, severity: 3, priority: 1.8, occurrences: 7,
                               evidence: "7 taps on Publish with no response", recommendation: "Make Publish respond at once.",
                               sightings: [ProblemSighting(session: 101, participant: "P1", time: t0 + 12.5, screenshot: edit,
                                                           frame: Rect(x: 10, y: 20, width: 100, height: 40), point: nil),
                                           ProblemSighting(session: 102, participant: "P2", time: t0 + 1020, screenshot: posts, frame: nil,
                                                           point: Point(x: 50, y: 60))])
    let loop = ProblemGroup(id: "i2-navigation-loop-posts", iteration: 2, kind: .navigationLoop, view: "PostsViewController", element: nil,
                            participants: ["P4"], frequency: 0.2, severity: 2, priority: 0.4, occurrences: 2,
                            evidence: "Posts ↔ Edit twice", recommendation: "Show where the post went.", sightings: [])
    let heatmaps = [
        ViewHeatmap(iteration: 1, view: "PostsViewController", participant: nil, screenshot: posts, points: [Point(x: 10, y: 10), Point(x: 20, y: 30)]),
        ViewHeatmap(iteration: 1, view: "PostsViewController", participant: "P1", screenshot: posts, points: [Point(x: 10, y: 10)]),
        ViewHeatmap(iteration: 2, view: hostile, participant: nil, screenshot: edit, points: [Point(x: 5, y: 5)]),
        ViewHeatmap(iteration: 2, view: "NoShotViewController", participant: nil, screenshot: nil, points: [Point(x: 1, y: 1)]),
    ]
    let notes = [
        StudyNote(session: 101, iteration: 1, participant: "P1", task: tasks[1], time: t0 + 130,
                  note: try ObserverNote(text: "\"Where is " + hostile + "?\"", kind: "quote", source: .console, observer: "eve")),
        StudyNote(session: 102, iteration: 1, participant: "P2", task: nil, time: t0 + 1005,
                  note: try ObserverNote(text: "leans back", kind: "note", source: .muevalctl)),
        StudyNote(session: 101, iteration: 1, participant: "P1", task: tasks[0], time: t0,
                  note: try ObserverNote(.begin, task: tasks[0], source: .console)),
    ]
    let scores = Dictionary(uniqueKeysWithValues: zip(participants, [72.5, 85, 72.5, 40, 90]))
    return StudyResults(
        study: study,
        iterations: [IterationResult(number: 1, label: "baseline", participants: participants, susScores: scores,
                                     sus: estimate(72, 50.3, 93.7, 5), grade: .cPlus, susChange: nil),
                     IterationResult(number: 2, label: "redesign", participants: participants, susScores: [:], sus: nil, grade: nil,
                                     susChange: nil)],
        sessions: sessions, attempts: attempts, taskMetrics: metrics, comparisons: comparisons, problems: [problem, loop],
        heatmaps: heatmaps, notes: notes, responses: StudyResponses())
}
