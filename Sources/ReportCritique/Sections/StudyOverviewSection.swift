internal import SessionModel
internal import StudyAnalysis
internal import StudyMetrics

/// The study, its app, iterations, tasks, participants and sessions, and the SUS of each iteration.
struct StudyOverviewSection: StudyReportSection {
    func body(_ context: StudyReportContext) -> String {
        let results = context.results, study = results.study
        let tasks = study.tasks.map { task in
            var text = "<strong>\(esc(task.name))</strong> · success: \(esc(task.success.description))"
            if let limit = task.timeLimit { text += " · limit \(Format.duration(limit))" }
            if !task.expectedPath.isEmpty { text += " · expected path: " + esc(task.expectedPath.joined(separator: " → ")) }
            if let instructions = task.instructions { text += "<br><span class=\"where\">\(esc(instructions))</span>" }
            return "<li>\(text)</li>"
        }.joined()
        let iterations = results.iterations.map { iteration in
            "<li>\(context.iterationTitle(iteration.number)): \(Format.count(iteration.participants.count, "participant")) "
                + "(\(esc(iteration.participants.joined(separator: ", "))))</li>"
        }.joined()
        var html = "<table class=\"overview\">"
        html += "<tr><th>Study</th><td>\(esc(study.name))</td></tr>"
        if let description = study.description { html += "<tr><th>Description</th><td>\(esc(description))</td></tr>" }
        html += "<tr><th>App</th><td>\(esc(study.appId ?? "–"))</td></tr>"
        html += "<tr><th>Iterations</th><td><ul class=\"plain\">\(iterations)</ul></td></tr>"
        html += "<tr><th>Tasks</th><td><ul class=\"plain\">\(tasks)</ul></td></tr>"
        html += "<tr><th>Participants</th><td>\(Set(results.iterations.flatMap(\.participants)).count)</td></tr>"
        html += "<tr><th>Sessions</th><td>\(results.sessions.count), \(Format.duration(results.sessions.reduce(0) { $0 + $1.duration })) recorded</td></tr>"
        html += "</table>"
        html += "<h3>SUS per iteration</h3>" + StudySUSSection.table(context)
        html += "<h3>Sessions</h3>"
        guard !results.sessions.isEmpty else { return html + emptyNote("No session recorded yet.") }
        html += "<table class=\"sessions\"><tr><th>Session</th><th>Name</th><th>Iteration</th><th>Participant</th><th>Duration</th><th>Events</th><th></th></tr>"
        for session in results.sessions {
            html += "<tr><td class=\"num\">\(session.id)</td><td>\(esc(session.name))</td><td>\(context.iterationTitle(session.iteration))</td>"
                + "<td>\(esc(session.participant))</td><td class=\"num\">\(Format.duration(session.duration))</td>"
                + "<td class=\"num\">\(session.events)</td><td>\(context.sessionLinks(session.id, at: session.start))</td></tr>"
        }
        return html + "</table>"
    }
}
