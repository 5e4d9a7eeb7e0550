internal import StudyAnalysis
internal import StudyMetrics

/// Per task, the numbers of each iteration as a table and as bar charts with their intervals.
struct StudyTasksSection: StudyReportSection {
    func body(_ context: StudyReportContext) -> String {
        guard let metrics = context.results.taskMetrics.nonEmpty else { return emptyNote("No task was attempted.") }
        var html = "<p class=\"legend\">Completion: successes per attempt, adjusted-Wald 95 % interval (assisted counts as not completed). "
            + "Time: geometric mean of successful attempts, 95 % interval. SEQ: Single Ease Question, 1 (very difficult) to 7 (very easy). "
            + "Misclicks, unresponsive taps, extra views (beyond the expected path) and backtracks: means per attempt.</p>"
        for task in context.taskNames {
            let rows = metrics.filter { $0.task == task }.sorted { $0.iteration < $1.iteration }
            guard !rows.isEmpty else { continue }
            html += "<h3 class=\"task\">\(esc(task))</h3><div class=\"wide\"><table class=\"task-metrics\"><tr><th>Iteration</th><th>Attempts</th><th>Completion</th>"
                + "<th>Time on task</th><th>SEQ</th><th>Misclicks</th><th>Unresponsive taps</th><th>Extra views</th><th>Backtracks</th><th>Problems hit</th></tr>"
            for row in rows {
                html += "<tr><td>\(context.iterationTitle(row.iteration))</td><td class=\"num\">\(row.successes) of \(row.attempts)</td>"
                    + "<td class=\"num\">\(Format.estimate(row.completion, Format.percent))</td>"
                    + "<td class=\"num\">\(Format.estimate(row.time, Format.duration))</td>"
                    + "<td class=\"num\">\(Format.estimate(row.seq, Format.seq))</td>"
                    + "<td class=\"num\">\(Format.mean(row.misclicks))</td><td class=\"num\">\(Format.mean(row.unresponsiveTaps))</td>"
                    + "<td class=\"num\">\(Format.mean(row.extraViews))</td><td class=\"num\">\(Format.mean(row.backtracks))</td>"
                    + "<td class=\"num\">\(row.problemsHit)</td></tr>"
            }
            html += "</table></div>" + charts(task, rows, context) + quotes(task, context)
        }
        return html
    }

    /// What participants said during their attempts (think-aloud), exclamations first marked.
    private func quotes(_ task: String, _ context: StudyReportContext) -> String {
        let said = context.results.attempts.filter { $0.task == task }.flatMap { attempt in
            attempt.quotes.map { (attempt, $0) }
        }
        guard !said.isEmpty else { return "" }
        let items = said.map { attempt, quote in
            "<li class=\"quote\(quote.exclamation == nil ? "" : " exclamation")\">\(esc(attempt.participant)), "
                + "\(context.iterationTitle(attempt.iteration)), \(Format.duration(quote.start - attempt.start)) into the task: "
                + "\u{201C}\(esc(quote.text))\u{201D}\(quote.exclamation.map { " <span class=\"badge\">\(esc($0))</span>" } ?? "")</li>"
        }
        return "<h4>What participants said</h4><ul class=\"quotes\">" + items.joined() + "</ul>"
    }

    private func charts(_ task: String, _ rows: [TaskMetrics], _ context: StudyReportContext) -> String {
        func bars(_ value: (TaskMetrics) -> Estimate?) -> [BarChart.Bar] {
            rows.map { BarChart.Bar(label: "Iteration \($0.iteration)", estimate: value($0)) }
        }
        let longest = rows.compactMap { $0.time.map { max($0.value, $0.interval?.high ?? 0) } }.filter(\.isFinite).max() ?? 0
        let charts = [
            BarChart.svg(title: "\(task): completion rate", bars: bars(\.completion), domain: 0...1, format: Format.percent),
            BarChart.svg(title: "\(task): time on task", bars: bars(\.time), domain: 0...max(longest, 1), format: Format.duration),
            BarChart.svg(title: "\(task): SEQ", bars: bars(\.seq), domain: 1...7, format: Format.seq),
        ]
        let captions = ["Completion rate", "Time on task (geometric mean)", "SEQ (1–7)"]
        return "<div class=\"charts\">" + zip(charts, captions).map { "<figure>\($0)<figcaption>\($1)</figcaption></figure>" }.joined() + "</div>"
    }
}
