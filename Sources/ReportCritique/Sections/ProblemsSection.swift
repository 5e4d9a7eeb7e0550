internal import SessionAnalysis

/// Usability problems of every detector: where, the evidence, and the change to make (thesis 2.4.3).
struct ProblemsSection: ReportSection {
    func body(_ context: ReportContext) -> String {
        context.columns { session in
            guard let problems = session.analysis.problems.nonEmpty else { return emptyNote("No usability problem detected.") }
            let counts = Dictionary(grouping: problems, by: \.kind)
            let summary = UsabilityProblem.Kind.allCases.compactMap { kind in counts[kind].map { "\(kind.rawValue): \($0.count)" } }
            return "<p class=\"summary\">\(summary.joined(separator: " · "))</p><ol class=\"problems\">" + problems.map { problem in
                let times = problem.occurrences > 1 ? " · \(problem.occurrences)×" : ""
                return """
                    <li class="problem \(problem.kind.styleClass)">\
                    \(markedScreenshot(session, problem.screenshot, frame: problem.frame, point: problem.point))\
                    <div><h4>\(esc(problem.kind.heading))</h4>\
                    <p class="where">\(esc(problem.view ?? "–")) · \(session.clock(problem.time))\(times)</p>\
                    <p class="evidence">\(esc(problem.evidence))</p>\
                    <p class="recommendation"><strong>Recommended change:</strong> \(esc(problem.recommendation))</p></div></li>
                    """
            }.joined() + "</ol>"
        }
    }
}

extension UsabilityProblem.Kind {
    /// "Unresponsive tap": the kind as a heading.
    var heading: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }

    /// Guideline problems (found in the UI's description) are drawn apart from behaviour seen in use.
    var styleClass: String { [.smallHitTarget, .missingPlaceholder, .smallText].contains(self) ? "guideline" : "behaviour" }
}
