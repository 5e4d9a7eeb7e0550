internal import SessionAnalysis

/// Touches as heat over each screenshot, and gesture paths as lines, drawn by report.js on canvases
/// (thesis 5.4, `TouchHeatmapsSection`). Coordinates are in points; the canvas has the screen's size in points.
/// A web session that recorded its page has them over the page as it was at that screenshot, not its wireframe.
struct HeatmapSection: ReportSection {
    func body(_ context: ReportContext) -> String {
        "<p class=\"legend\">Circles: where fingers went down (red where many did). Lines: gesture paths, from the dot.</p>"
            + context.columns { session in
                let heatmaps = session.result(TouchHeatmaps.self)?.heatmaps ?? []
                let paths = Dictionary(grouping: session.result(GesturePaths.self)?.paths ?? [], by: \.screenshot)
                guard let shown = Set(heatmaps.map(\.screenshot)).union(paths.keys.compactMap { $0 }).sorted().nonEmpty else {
                    return emptyNote("No touches on a screenshot in this session.")
                }
                let touches = Dictionary(uniqueKeysWithValues: heatmaps.map { ($0.screenshot, $0.touches) })
                let pageNote = shown.contains { session.page($0) != nil }
                    ? "<p class=\"legend\">Under them, the page as the tester saw it, rebuilt from its recording (no scripts, no images from the web).</p>" : ""
                return pageNote + "<div class=\"gallery\">" + shown.compactMap { index -> String? in
                    guard let file = session.shotFile(index) else { return nil }
                    let strokes = paths[index] ?? []
                    let view = session.result(Screenshots.self)?.shots[index].view ?? "?"
                    return heatmapCanvas(file: file, screen: session.screen(of: index), touches: touches[index] ?? [],
                                         paths: strokes.map(\.points),
                                         caption: "\(esc(view)) · screenshot \(index + 1) · \(touches[index]?.count ?? 0) touches\(strokes.isEmpty ? "" : ", \(strokes.count) gestures")",
                                         page: session.page(index))
                }.joined() + "</div>"
            }
    }
}
