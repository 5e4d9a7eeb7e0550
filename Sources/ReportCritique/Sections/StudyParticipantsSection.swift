internal import StudyAnalysis
internal import WireProtocol

/// Participants side by side: per iteration a matrix of participant × task with each attempt's outcome and time.
struct StudyParticipantsSection: StudyReportSection {
    static let symbols: [TaskOutcome: String] = [.success: "✓", .failure: "✗", .abandoned: "⊘", .assisted: "◐"]

    func body(_ context: StudyReportContext) -> String {
        let results = context.results
        guard !results.iterations.isEmpty else { return emptyNote("No iteration analysed.") }
        let tasks = context.taskNames
        var html = "<p class=\"legend\">✓ success · ✗ failure · ⊘ abandoned · ◐ assisted · "
            + "<span class=\"overridden\">*</span> the observer's verdict replaced the derived outcome (hover for both) · blank: not attempted. "
            + "Times are time on task (to the end of the attempt).</p>"
        let attempts = Dictionary(grouping: results.attempts) { "\($0.iteration)\u{1F}\($0.participant)\u{1F}\($0.task)" }
        for iteration in results.iterations {
            html += "<h3>\(context.iterationTitle(iteration.number))</h3><table class=\"matrix\"><tr><th>Participant</th>"
                + tasks.map { "<th>\(esc($0))</th>" }.joined() + "<th>SUS</th><th>Sessions</th></tr>"
            for participant in iteration.participants {
                html += "<tr><th>\(esc(participant))</th>"
                for task in tasks {
                    guard let attempt = attempts["\(iteration.number)\u{1F}\(participant)\u{1F}\(task)"]?.first else {
                        html += "<td></td>"
                        continue
                    }
                    html += cell(attempt)
                }
                let sessions = results.sessions.filter { $0.iteration == iteration.number && $0.participant == participant }
                html += "<td class=\"num\">\(iteration.susScores[participant].map(Format.sus) ?? "–")</td>"
                    + "<td>\(sessions.map { "\($0.id) \(context.sessionLinks($0.id, at: $0.start))" }.joined(separator: "<br>"))</td></tr>"
            }
            html += "</table>"
        }
        return html
    }

    private func cell(_ attempt: TaskAttempt) -> String {
        var tip = "\(attempt.outcome.rawValue): \(attempt.reason)"
        if attempt.overridden { tip += " (derived: \(attempt.derivedOutcome.rawValue))" }
        if attempt.runs > 1 { tip += "; \(attempt.runs) runs, the first shown" }
        let mark = attempt.overridden ? "<span class=\"overridden\">*</span>" : ""
        let time = attempt.duration.map { "<br>" + Format.duration($0) } ?? ""
        return "<td class=\"\(attempt.outcome.rawValue)\" title=\"\(esc(tip))\"><span class=\"outcome\">\(Self.symbols[attempt.outcome] ?? "?")</span>\(mark)\(time)</td>"
    }
}
