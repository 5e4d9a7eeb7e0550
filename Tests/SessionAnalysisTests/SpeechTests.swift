import Foundation
import MuEvalWire
import ReportCritique
import SessionAnalysis
import WireProtocol
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

    /// The report carries the voice and the quotes: a click on a row plays from its moment.
    func testTheReportTimelineHasTheQuotesAndTheVoice() async throws {
        let analysis = try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "PostsViewController", transition: "launch", stack: ["Posts"], screenshot: image("posts"))
            journal.viewDidAppear(at: t0 + 10, view: "EditPostViewController", transition: "push", stack: ["Posts", "Edit"],
                                  screenshot: image("edit"))
            // The recording began 2 s before the first event: the report's 0:00 is at 2 s in the file.
            journal.add(media: WireMedia(stream: "voice-1", format: .wav, part: 0, start: t0 - 2, duration: 20, seq: nil,
                                         bytes: WAVFile.header(sampleRate: 16_000, dataBytes: nil) + [UInt8](repeating: 0, count: 20 * 32_000)))
            journal.transcript = [TranscriptSegment(device: "d", stream: "voice-1", start: t0 + 12, end: t0 + 13,
                                                    text: "where is the <b>publish</b> button", exclamation: "where is")]
        }
        let index = try ReportWriter(configuration: ReportConfiguration()).write([analysis], to: directory + "/report")
        let html = try String(contentsOfFile: index, encoding: .utf8)
        XCTAssertTrue(html.contains(#"<audio id="tl-audio""#))
        XCTAssertTrue(html.contains(#""audio":[["media/session-1.wav",2]]"#), "the file and where 0:00 is in it")
        XCTAssertTrue(html.contains(#""where is","EditPostViewController","“where is the \u003cb>publish\u003c/b> button”""#),
                      "the quote is a timeline row, its markup escaped")
        XCTAssertTrue(html.contains(#""speech""#), "of class speech")
        let audio = try Data(contentsOf: URL(fileURLWithPath: directory + "/report/media/session-1.wav"))
        XCTAssertEqual(audio.count, 44 + 20 * 32_000)
        XCTAssertEqual(Array(audio[40..<44]), [0x00, 0xC4, 0x09, 0x00], "the WAV's data size is set (640,000)")
    }
}
