internal import SessionAnalysis

/// Time per view, sorted, as a table with bars (thesis 5.4, `ViewDurationSection`), and time per functionality
/// per user (seed 001 Fig. 1) when views are grouped or several users are compared.
struct DurationsSection: ReportSection {
    func body(_ context: ReportContext) -> String {
        var html = context.columns { session in
            guard let durations = session.result(ViewDurations.self), !durations.views.isEmpty else {
                return emptyNote("No view changes in this session.")
            }
            return table(durations.views, first: "View")
        }
        let grouped = !context.options.functionalities.isEmpty
        if context.isComparison || grouped {
            html += "<h3>Time per \(grouped ? "functionality" : "view") and user</h3>" + comparison(context)
        }
        return html
    }

    private func table(_ shares: [TimeShare], first: String) -> String {
        "<table class=\"durations\"><tr><th>\(first)</th><th>Time</th><th>Share</th><th>Visits</th><th class=\"barcell\"></th></tr>"
            + shares.map { share in
                "<tr><td>\(esc(share.name))</td><td class=\"num\">\(Format.duration(share.seconds))</td><td class=\"num\">\(Format.percent(share.share))</td><td class=\"num\">\(share.visits)</td><td class=\"barcell\"><span class=\"bar\" style=\"width:\(String(format: "%.1f", share.share * 100))%\"></span></td></tr>"
            }.joined() + "</table>"
    }

    /// Functionality × user: each user's share, as bars side by side.
    private func comparison(_ context: ReportContext) -> String {
        let perUser = context.sessions.map { session in
            Dictionary(uniqueKeysWithValues: (session.result(ViewDurations.self)?.functionalities ?? []).map { ($0.name, $0) })
        }
        var totals: [String: Double] = [:]
        for shares in perUser { for (name, share) in shares { totals[name, default: 0] += share.seconds } }
        let names = totals.keys.sorted { (totals[$0]!, $1) > (totals[$1]!, $0) }
        return "<table class=\"durations compare-table\"><tr><th></th>" + context.sessions.map { "<th>\(esc($0.label))</th>" }.joined() + "</tr>"
            + names.map { name in
                "<tr><td>\(esc(name))</td>" + perUser.map { shares in
                    let share = shares[name]?.share ?? 0
                    return "<td><span class=\"bar\" style=\"width:\(String(format: "%.1f", share * 100))%\"></span> \(Format.percent(share))</td>"
                }.joined() + "</tr>"
            }.joined() + "</table>"
    }
}
