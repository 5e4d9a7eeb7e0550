internal import SessionAnalysis
internal import StudyAnalysis

/// Usability problems across participants, per iteration, ranked by priority (share of participants × severity),
/// each with a marked screenshot and where every participant met it.
struct StudyProblemsSection: StudyReportSection {
    func body(_ context: StudyReportContext) -> String {
        let results = context.results
        guard !results.problems.isEmpty else { return emptyNote("No usability problem detected in any session.") }
        var html = "<p class=\"legend\">Grouped by kind, view and element within an iteration. Severity 1 (cosmetic) to 4 (catastrophic); "
            + "priority = share of the iteration's participants who hit it × severity.</p>"
        for iteration in results.iterations {
            let problems = results.problems.filter { $0.iteration == iteration.number }
            guard !problems.isEmpty else { continue }
            html += "<h3>\(context.iterationTitle(iteration.number))</h3><ol class=\"problems\">"
            for problem in problems {
                let where_ = [problem.view, problem.element].compactMap { $0 }.joined(separator: " · ")
                let shown = problem.sightings.first { $0.screenshot != nil && context.shotFiles[$0.screenshot!.sha256] != nil }
                let caption = shown.map { "\(esc($0.participant)) at \(context.clock($0.time, session: $0.session))" } ?? ""
                html += """
                    <li class="problem \(problem.kind.styleClass)" id="\(esc(problem.id))">\
                    \(context.screenshot(shown?.screenshot, frame: shown?.frame, point: shown?.point, caption: caption))\
                    <div><h4>\(esc(problem.kind.heading))</h4>\
                    <p class="where">\(esc(where_.isEmpty ? "–" : where_))</p>\
                    <p><strong>\(problem.participants.count) of \(iteration.participants.count)</strong> participants \
                    (\(esc(problem.participants.joined(separator: ", ")))) · severity \(problem.severity) of 4 · \
                    priority \(String(format: "%.2f", problem.priority)) · \(problem.occurrences) occurrence\(problem.occurrences == 1 ? "" : "s")</p>\
                    <p class="evidence">\(esc(problem.evidence))</p>\
                    <p class="recommendation"><strong>Recommended change:</strong> \(esc(problem.recommendation))</p>\
                    <ul class="sightings">\(problem.sightings.map { sighting in
                        "<li>\(esc(sighting.participant)), session \(sighting.session) at \(context.clock(sighting.time, session: sighting.session)) "
                            + context.sessionLinks(sighting.session, at: sighting.time) + "</li>"
                    }.joined())</ul></div></li>
                    """
            }
            html += "</ol>"
        }
        return html
    }
}
