import ReportCritique
@testable import SessionAnalysis
import SessionReports
import Testing

/// The replay scrubber's marks of a report's problems: where they are, bounded whatever their number (issue 41).
@Suite struct ProblemMarksTests {
    private func problem(_ kind: UsabilityProblem.Kind, _ time: Double, view: String? = "Feed") -> UsabilityProblem {
        UsabilityProblem(kind: kind, view: view, time: time, occurrences: 1, screenshot: nil, frame: nil, point: nil,
                         evidence: "", recommendation: "", element: nil)
    }

    @Test func aFewProblemsAreEachAMark() {
        let marks = ProblemMark.scrubber(Problems([[problem(.rageTap, 10), problem(.freeze, 10), problem(.rageTap, 20, view: nil)]]))
        #expect(marks == [ProblemMark(t: 10, title: "rage taps in Feed"), ProblemMark(t: 10, title: "freeze in Feed"),
                          ProblemMark(t: 20, title: "rage taps")])
    }

    @Test func endlessProblemsOfOneTitleAreOneMarkPerScrubberPixel() {
        let many = (0..<100_000).map { problem(.rageTap, 1_700_000_000 + Double($0) * 0.1) }
        let marks = ProblemMark.scrubber(Problems([many, [problem(.freeze, 1_700_005_000)]]))
        #expect(marks.count { $0.title == "rage taps in Feed" } <= ProblemMark.resolution + 1)
        #expect(marks.count { $0.title == "rage taps in Feed" } >= ProblemMark.resolution)
        #expect(marks.contains(ProblemMark(t: 1_700_005_000, title: "freeze in Feed")), "another title keeps its own marks")
        #expect(marks.first?.t == 1_700_000_000 && marks.last?.t == many.last?.time, "the first and the last are kept")
        #expect(ProblemMark.scrubber(Problems([])) == [])
    }

    /// Times whose span overflows a Double (absurd, but a session file can hold them) fold, not trap.
    @Test func aSpanBeyondDoublesFoldsWithoutTrapping() {
        let marks = ProblemMark.scrubber(Problems([[problem(.rageTap, -.greatestFiniteMagnitude), problem(.rageTap, 0),
                                                    problem(.rageTap, .greatestFiniteMagnitude)]]))
        #expect(marks.first?.t == -.greatestFiniteMagnitude)
        #expect(marks.count <= 3)
    }
}
