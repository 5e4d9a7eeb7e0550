import Foundation
import ReportCritique
import SessionAnalysis
import SessionAnalysisTestSupport
import SessionModel
import WireProtocol
import XCTest

/// A session file recorded before values were checked at the edge, full of NaN, infinities, 10³⁰⁰ and times
/// 10¹⁸ s away: analysis treats each such value as missing, and the report is written (docs/REPORTS.md,
/// "Absurd numbers"). Each of these values trapped in some interpreter or section before.
final class AbsurdJournalTests: AnalysisTestCase {
    /// The device said its screen is infinitely wide and NaN high.
    private func absurdPhone() -> DeviceRecord {
        var phone = JournalBuilder.phone()
        phone.screenWidth = .infinity
        phone.screenHeight = .nan
        return phone
    }

    private func absurdSession() async throws -> String {
        let builder = try JournalBuilder(path: directory + "/absurd.sqlite", device: absurdPhone())
        let tree = JournalBuilder.node("UIWindow", frame: [0, 0, .infinity, 480], subviews: [
            JournalBuilder.node("UIButton", frame: [.nan, 10, 20, 20], title: "NaN"),
            JournalBuilder.node("UIButton", frame: [1e300, -.infinity, 1e300, 20], title: "Far"),
            JournalBuilder.node("UITextField", frame: [10, 10, .infinity, 31]),
            JournalBuilder.node("UIButton", frame: [10, 100, 20, 20], title: "Small"),
        ])
        builder.viewDidAppear(at: t0, view: "A", transition: "launch", stack: ["A"], screenshot: image("a"), uiState: tree)
        builder.tap(at: t0 + 1, x: .nan, y: 10, view: "A")
        builder.tap(at: t0 + 2, x: 1e300, y: -.infinity, view: "A")
        builder.tap(at: t0 + 3, x: 100, y: 100, view: "A")
        for time in [1e18, -1e18, .infinity, -.infinity, 1e300] {
            builder.tap(at: time, x: 100, y: 100, view: "A")
            builder.viewDidAppear(at: time, view: "B", transition: "push", stack: ["A", "B"])
        }
        // A task whose end marker is stamped before its begin.
        builder.marker(at: t0 + 5, "begin", task: "Publish")
        builder.marker(at: t0 + 4, "end", task: "Publish")
        builder.transcript = [
            TranscriptSegment(device: "device-1", stream: "voice-1", start: 1e18, end: 1e18 + 1, text: "far away"),
            TranscriptSegment(device: "device-1", stream: "voice-1", start: t0 + 2, end: .infinity, text: "forever"),
            TranscriptSegment(device: "device-1", stream: "voice-1", start: t0 + 3, end: t0 + 4, text: "where is it", exclamation: "where is"),
        ]
        try await builder.finish()
        return builder.path
    }

    func testAbsurdValuesAreMissingToAnalysis() async throws {
        let analysis = try AnalyzedSession(path: try await absurdSession())
        let overview = try analysis.result(Overview.self)
        XCTAssertEqual(overview.implausibleEvents, 15, "5 taps of 2 events and 5 view changes at no plausible time")
        XCTAssertEqual(overview.start, t0)
        XCTAssertEqual(overview.end, t0 + 5)
        XCTAssertNil(analysis.journal.screenSize, "an infinite screen is no screen")

        let interactions = try analysis.result(Interactions.self)
        XCTAssertEqual(try interactions.strokes.collected().map(\.origin), [Point(x: 100, y: 100)], "touches at no plausible place are missing")
        XCTAssertEqual(interactions.appearances.map(\.view), ["A"])
        XCTAssertEqual(try analysis.result(Screenshots.self).shots.map(\.screen), [nil], "the tree's window is infinitely wide")

        // Only the button with a plausible frame is judged.
        let small = analysis.problems(.smallHitTarget)
        XCTAssertEqual(small.map(\.element), [#"UIButton "Small""#])
        XCTAssertEqual(analysis.problems(.missingPlaceholder), [], "the text field's frame is missing")

        let run = try XCTUnwrap(try analysis.result(Tasks.self).runs.first)
        XCTAssertEqual(run.interactions, 0, "a task that ends before it begins holds nothing")
        XCTAssertEqual(try analysis.result(Speech.self).quotes.map(\.segment.text), ["where is it"])
        for problem in analysis.problems {
            XCTAssertNil(problem.evidence.range(of: #"\b(nan|inf)\b"#, options: .regularExpression), problem.evidence)
        }
    }

    func testTheReportOfAnAbsurdSessionIsWritten() async throws {
        let output = directory + "/report"
        let index = try ReportGenerator.generate(sessionFiles: [try await absurdSession()], configuration: ReportConfiguration(),
                                                 output: output)
        let html = try String(contentsOfFile: index, encoding: .utf8)
        XCTAssertTrue(html.contains("left out, at no plausible time: 15"), "the overview says what it left out")
        XCTAssertTrue(html.contains(#"<canvas width="320" height="480""#), "the heatmap falls back to a phone's screen")
        XCTAssertFalse(html.contains("1970-01-01"), "no time that is not plausible is shown")
    }
}
