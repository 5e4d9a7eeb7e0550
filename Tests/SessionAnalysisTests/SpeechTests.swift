import SessionAnalysis
import SessionModel
import XCTest

/// The think-aloud transcript in the analysis: quotes with their screen, exclamations as problems.
final class SpeechTests: AnalysisTestCase {
    func testExclamationsAreProblemsWithTheirQuoteViewAndScreenshot() async throws {
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "PostsViewController", transition: "launch", stack: ["Posts"], screenshot: image("posts"))
            journal.viewDidAppear(at: t0 + 10, view: "EditPostViewController", transition: "push", stack: ["Posts", "Edit"],
                                  screenshot: image("edit"))
            journal.transcript = [
                TranscriptSegment(device: "d", stream: "voice-1", start: t0 + 3, end: t0 + 4, text: "okay the list"),
                TranscriptSegment(device: "d", stream: "voice-1", start: t0 + 12, end: t0 + 13.5, text: "where is the <publish> button",
                                  confidence: 0.7, exclamation: "where is"),
            ]
        }
        let speech = try analysis.result(Speech.self)
        XCTAssertEqual(speech.quotes.map(\.segment.text), ["okay the list", "where is the <publish> button"])
        XCTAssertEqual(speech.quotes.map(\.view), ["PostsViewController", "EditPostViewController"])
        XCTAssertEqual(speech.quotes.map(\.screenshot), [0, 1])
        let problems = analysis.problems(.exclamation)
        XCTAssertEqual(problems.count, 1, "ordinary speech is no problem")
        XCTAssertEqual(problems.first?.time, t0 + 12)
        XCTAssertEqual(problems.first?.view, "EditPostViewController")
        XCTAssertEqual(problems.first?.screenshot, 1)
        XCTAssertEqual(problems.first?.element, "where is")
        XCTAssertEqual(problems.first?.evidence, "The tester said \u{201C}where is the <publish> button\u{201D} (where is) at this moment.")
    }

    func testASessionWithoutAudioHasNoSpeech() async throws {
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "A", transition: "launch", stack: ["A"], screenshot: image("a"))
        }
        XCTAssertEqual(try analysis.result(Speech.self).quotes, [])
        XCTAssertEqual(analysis.problems(.exclamation), [])
    }
}
