internal import Foundation
internal import SessionAnalysis

/// Performance and fluidity: per view its rating with the figures behind it (hitch time per second of rendering,
/// dropped refreshes, longest frame, transitions into it), and the launch; from the frame-timing sensor.
struct FluiditySection: ReportSection {
    func body(_ context: ReportContext) -> String {
        let legend = "<p class=\"legend\">Hitch time per second of rendering: under \(number(context.options.hitchRatioWarning)) ms/s good, "
            + "to \(number(context.options.hitchRatioCritical)) ms/s warning, above critical (Apple's ratings). Transitions: warning above "
            + "\(milliseconds(context.options.transitionWarning)), critical above \(milliseconds(context.options.transitionCritical)); "
            + "launch to first frame: warning above \(milliseconds(context.options.launchWarning)), critical above \(milliseconds(context.options.launchCritical)).</p>"
        return legend + context.columns { session in
            guard let fluidity = session.result(Fluidity.self), !fluidity.views.isEmpty || !fluidity.launches.isEmpty else {
                return emptyNote("No frame timing in this session: the app's capture library had no frame-timing sensor, or the session did not select frameTiming.")
            }
            var html = ""
            if let rating = fluidity.launchRating, let slowest = fluidity.launches.map(\.duration).max() {
                html += "<p class=\"launch\">Launch to first frame: \(badge(rating)) \(milliseconds(slowest))"
                    + (fluidity.launches.count > 1 ? " (the slowest of \(fluidity.launches.count) launches)" : "") + "</p>"
            }
            guard !fluidity.views.isEmpty else { return html }
            html += "<table class=\"fluidity\"><tr><th>View</th><th>Rating</th><th>Hitch time</th><th>Dropped</th><th>Longest frame</th>"
                + "<th>Rendering</th><th>Transitions in</th></tr>"
            for rated in fluidity.views {
                let view = rated.figures
                let rendered = view.rendering > 0
                let transitions = view.slowestTransition.map { slowest in
                    "\(view.transitions.count), slowest \(milliseconds(slowest))" + (rated.transitions.map { " " + badge($0) } ?? "")
                } ?? "–"
                html += "<tr><td>\(esc(view.view))</td><td>\(rated.rating.map(badge) ?? "–")</td>"
                    + "<td class=\"num\">\(rendered ? "\(number(view.hitchRatio)) ms/s" : "–")</td>"
                    + "<td class=\"num\">\(rendered ? "\(view.dropped) of \(view.frames + view.dropped) (\(Format.percent(view.droppedShare)))" : "–")</td>"
                    + "<td class=\"num\">\(rendered ? milliseconds(view.longestFrame) : "–")</td>"
                    + "<td class=\"num\">\(rendered ? "\(Format.duration(view.rendering)), \(view.frames) frames" : "–")</td>"
                    + "<td>\(transitions)</td></tr>"
            }
            return html + "</table>"
        }
    }

    private func badge(_ rating: FluidityRating) -> String {
        "<span class=\"rating \(rating.rawValue)\">\(rating.rawValue)</span>"
    }

    private func number(_ value: Double) -> String { String(format: "%.1f", value) }

    private func milliseconds(_ seconds: Double) -> String { String(format: "%.0f ms", seconds * 1000) }
}
