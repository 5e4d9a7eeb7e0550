internal import SessionAnalysis

/// The way through the app's views, with the view stack and a thumbnail at each step (thesis 5.4, `NavigationPathSection`).
struct NavigationSection: ReportSection {
    func body(_ context: ReportContext) -> String {
        context.columns { session in
            guard let steps = session.result(NavigationPath.self)?.steps.nonEmpty else { return emptyNote("No view changes in this session.") }
            return "<ol class=\"path\">" + steps.map { step in
                let thumbnail = session.shotFile(step.screenshot).map { "<a href=\"\($0)\" target=\"_blank\"><img src=\"\($0)\" alt=\"\(esc(step.view))\" loading=\"lazy\"></a>" } ?? ""
                return "<li class=\"step \(esc(step.transition))\">\(thumbnail)<div><span class=\"time\">\(session.clock(step.time))</span> <span class=\"badge\">\(esc(step.transition))</span><br><strong>\(esc(step.title ?? step.view))</strong><br><span class=\"stack\">\(esc(step.stackText))</span></div></li>"
            }.joined() + "</ol>"
        }
    }
}
