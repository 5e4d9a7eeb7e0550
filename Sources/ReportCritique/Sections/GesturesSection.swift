internal import SessionAnalysis

/// Gestures versus buttons per view (seed 001 Fig. 3): which way users choose where the app offers both.
struct GesturesSection: ReportSection {
    func body(_ context: ReportContext) -> String {
        context.columns { session in
            guard let views = session.result(InputModalities.self)?.views.nonEmpty else { return emptyNote("No input in this session.") }
            return "<table class=\"gestures\"><tr><th>View</th><th>Taps</th><th>Button presses</th><th>Row selections</th><th>Gestures</th></tr>"
                + views.map { view in
                    let gestures = view.gestures.map { "\(esc($0.kind)) \($0.count)" }.joined(separator: ", ")
                    return "<tr><td>\(esc(view.view))</td><td class=\"num\">\(view.taps)</td><td class=\"num\">\(view.buttonPresses)</td><td class=\"num\">\(view.rowSelections)</td><td>\(gestures.isEmpty ? "–" : gestures)</td></tr>"
                }.joined() + "</table>"
        }
    }
}
