internal import StudyAnalysis

/// Touches per view, of all an iteration's participants together, then of each participant (folded: drawn
/// when opened). report.js draws them as the session report's heatmaps, over the page where the session recorded it.
struct StudyHeatmapSection: StudyReportSection {
    func body(_ context: StudyReportContext) -> String {
        guard let heatmaps = context.results.heatmaps.nonEmpty else { return emptyNote("No touches recorded.") }
        var html = "<p class=\"legend\">Where fingers went down on each view (red where many did), over a screenshot of the view.</p>"
        for iteration in context.results.iterations {
            let mine = heatmaps.filter { $0.iteration == iteration.number }
            guard !mine.isEmpty else { continue }
            let all = mine.filter { $0.participant == nil }
            html += "<h3>\(context.iterationTitle(iteration.number)): all participants</h3>"
            html += all.isEmpty ? emptyNote("No touches.") : "<div class=\"gallery\">" + all.map { canvas($0, context) }.joined() + "</div>"
            let byParticipant = Dictionary(grouping: mine.filter { $0.participant != nil }, by: { $0.participant! })
            for participant in iteration.participants {
                guard let maps = byParticipant[participant] else { continue }
                html += "<details class=\"participant\"><summary>\(esc(participant)) · \(maps.count) view\(maps.count == 1 ? "" : "s")</summary>"
                    + "<div class=\"gallery\">" + maps.map { canvas($0, context) }.joined() + "</div></details>"
            }
        }
        return html
    }

    private func canvas(_ heatmap: ViewHeatmap, _ context: StudyReportContext) -> String {
        let file = heatmap.screenshot.flatMap { context.shotFiles[$0.sha256] }
        return heatmapCanvas(file: file, screen: heatmap.screenshot?.screen, touches: heatmap.points,
                             caption: "\(esc(heatmap.view)) · \(heatmap.points.count) touches", page: heatmap.screenshot.flatMap { context.pages[$0] })
    }
}
