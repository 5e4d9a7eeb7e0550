internal import SessionAnalysis

/// Time on task and interactions per task, from the custom begin/end markers; users side by side.
struct TasksSection: ReportSection {
    func body(_ context: ReportContext) -> String {
        let runs = context.sessions.map { $0.result(Tasks.self)?.runs ?? [] }
        var names: [String] = []
        for name in runs.flatMap({ $0.map(\.name) }) where !names.contains(name) { names.append(name) }
        guard !names.isEmpty else { return emptyNote("No task markers (`beginEvent`/`endEvent`) in \(context.isComparison ? "these sessions" : "this session").") }
        var html = "<table class=\"tasks\"><tr><th>Task</th>"
        html += context.sessions.map { session in
            let who = context.isComparison ? " (\(esc(session.label)))" : ""
            return "<th>Time on task\(who)</th><th>Interactions\(who)</th><th>Views\(who)</th>"
        }.joined() + "</tr>"
        for name in names {
            html += "<tr><td>\(esc(name))</td>"
            for sessionRuns in runs {
                let matching = sessionRuns.filter { $0.name == name }
                guard !matching.isEmpty else {
                    html += "<td>–</td><td>–</td><td>–</td>"
                    continue
                }
                let time = matching.map { run in
                    run.duration.map { (run.gaveUp ? "gave up after " : "") + Format.duration($0) } ?? "not finished"
                }.joined(separator: ", ")
                html += "<td class=\"num\">\(time)</td><td class=\"num\">\(matching.map { String($0.interactions) }.joined(separator: ", "))</td>"
                html += "<td class=\"num\">\(matching.map { String($0.viewChanges) }.joined(separator: ", "))</td>"
            }
            html += "</tr>"
        }
        return html + "</table>"
    }
}
