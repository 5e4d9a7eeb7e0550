internal import SessionAnalysis

/// Usability problems of every detector: where, the evidence, and the change to make (thesis 2.4.3). Written a
/// problem at a time: a long session has tens of thousands (heaptrack of the 500,000-touch stop: its page as one
/// string was 24 MB of the peak). A web session that recorded its page marks its problems on the page as it was at
/// their screenshot, as long as `ReportPages.problemBytes` of pages last; the later ones on the screenshot.
struct ProblemsSection: SectionWriter {
    func write(_ context: ReportContext, to output: ReportOutput) throws {
        try context.columns(to: output) { session in
            guard let problems = session.analysis.problems.nonEmpty else { return try output.append(emptyNote("No usability problem detected.")) }
            let counts = Dictionary(grouping: problems, by: \.kind).mapValues(\.count)
            let summary = UsabilityProblem.Kind.allCases.compactMap { kind in counts[kind].map { "\(kind.rawValue): \($0)" } }
            try output.append("<p class=\"summary\">\(summary.joined(separator: " · "))</p><ol class=\"problems\">")
            var pageBytes = 0
            for problem in problems {
                let page = pageBytes < ReportPages.problemBytes ? session.page(problem.screenshot) : nil
                pageBytes += page?.html.utf8.count ?? 0
                let times = problem.occurrences > 1 ? " · \(problem.occurrences)×" : ""
                try output.append("""
                    <li class="problem \(problem.kind.styleClass)">\
                    \(markedScreenshot(session, problem.screenshot, frame: problem.frame, point: problem.point, page: page))\
                    <div><h4>\(esc(problem.kind.heading))</h4>\
                    <p class="where">\(esc(problem.view ?? "–")) · \(session.clock(problem.time))\(times)</p>\
                    <p class="evidence">\(esc(problem.evidence))</p>\
                    <p class="recommendation"><strong>Recommended change:</strong> \(esc(problem.recommendation))</p></div></li>
                    """)
            }
            try output.append("</ol>")
        }
    }
}

extension UsabilityProblem.Kind {
    /// "Unresponsive tap": the kind as a heading.
    var heading: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }

    /// Guideline problems (found in the UI's description) are drawn apart from behaviour seen in use.
    var styleClass: String { [.smallHitTarget, .missingPlaceholder, .smallText].contains(self) ? "guideline" : "behaviour" }
}
