import Foundation
import MuEvalWire
import OrderedCollections
import ReportCritique
import SessionAnalysis
import SessionAnalysisTestSupport
import WireProtocol
import XCTest

/// Observers' notes in the analysis (their own result, and the timeline) and in the report.
final class ObserverNotesTests: AnalysisTestCase {
    private func note(_ text: String, kind: String, observer: String? = nil) throws -> OrderedDictionary<String, PlistValue> {
        guard case .dict(let fields) = try ObserverNote(text: text, kind: kind, source: .console, observer: observer).payload else {
            throw XCTSkip("a note's payload is a dictionary")
        }
        return fields
    }

    /// Two screens, a note on each; the second note was taken first during replay, so the file has it last.
    private func session() async throws -> AnalyzedSession {
        try await analyse { journal in
            journal.viewDidAppear(at: t0, view: "PostsViewController", transition: "launch", stack: ["Posts"], screenshot: image("posts"))
            journal.viewDidAppear(at: t0 + 10, view: "EditPostViewController", transition: "push", stack: ["Posts", "Edit"],
                                  screenshot: image("edit"))
            journal.add(ObserverNote.eventClass, at: t0 + 12, try note("says <script>alert(1)</script> & leaves", kind: "quote",
                                                                         observer: "<b>eve</b>"))
            journal.add(ObserverNote.eventClass, at: t0 + 5, try note("cannot find\nthe Edit button", kind: "problem"))
        }
    }

    func testNotesAreInTimeOrderWithTheScreenOfTheirMomentAndInTheTimelineByKind() async throws {
        let analysis = try await session()
        let notes = try analysis.result(ObserverNotes.self).notes
        XCTAssertEqual(notes.map(\.time), [t0 + 5, t0 + 12])
        XCTAssertEqual(notes.map(\.note.kind), ["problem", "quote"])
        XCTAssertEqual(notes.map(\.screenshot), [0, 1])
        XCTAssertEqual(notes[1].note.observer, "<b>eve</b>")
        var timeline: [TimelineEntry] = []
        try analysis.result(Timeline.self).forEachEntry(screenshots: analysis.result(Screenshots.self)) { entry in
            if entry.eventClass == ObserverNote.eventClass { timeline.append(entry) }
        }
        XCTAssertEqual(timeline.map(\.type), ["quote", "problem"])
        XCTAssertEqual(timeline.last?.summary, "cannot find the Edit button")
    }

    func testTheReportListsNotesAsTextNeverMarkup() async throws {
        _ = try await session()
        let index = try ReportGenerator.generate(sessionFiles: [directory + "/s.sqlite"],
                                                 configuration: ReportConfiguration(sections: [.notes, .timeline]),
                                                 output: directory + "/report")
        let html = try String(contentsOfFile: index, encoding: .utf8)
        let section = try XCTUnwrap(html.range(of: "<section id=\"notes\"").map { String(html[$0.lowerBound...]) })
        let list = try XCTUnwrap(section.range(of: "</ol>").map { String(section[..<$0.upperBound]) })
        XCTAssertTrue(list.contains("Observer notes"), list)
        XCTAssertEqual(list.components(separatedBy: "<li class=\"note\"").count - 1, 2, list)
        XCTAssertTrue(list.contains("says &lt;script&gt;alert(1)&lt;/script&gt; &amp; leaves"), list)
        XCTAssertTrue(list.contains("&lt;b&gt;eve&lt;/b&gt;"), list)
        XCTAssertTrue(list.contains("<span class=\"badge\">problem</span> 0:05.0"), list)
        let problem = try XCTUnwrap(list.range(of: "problem</span>")), quote = try XCTUnwrap(list.range(of: "quote</span>"))
        XCTAssertLessThan(problem.lowerBound, quote.lowerBound, "in session time")
        XCTAssertFalse(html.contains("<script>alert") || html.contains("<b>eve"), "a note's text became markup")
        XCTAssertTrue(html.contains(#""ObserverNote""#), "the timeline offers the notes' class")

        let empty = try ReportGenerator.generate(sessionFiles: [try await simulatedSessionWithoutNotes()],
                                                 configuration: ReportConfiguration(sections: [.notes]), output: directory + "/plain")
        XCTAssertTrue(try String(contentsOfFile: empty, encoding: .utf8).contains("No observer took a note in this session"))
    }

    private func simulatedSessionWithoutNotes() async throws -> String {
        let path = directory + "/plain.sqlite"
        try await SimulatedSession.write(scenario: "plainnote", to: path)
        return path
    }
}
