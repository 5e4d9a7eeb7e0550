internal import SessionAnalysis

struct OverviewSection: ReportSection {
    func body(_ context: ReportContext) -> String {
        let rows: [(String, (ReportedSession) -> String)] = [
            ("Session", { esc($0.analysis.journal.session.name) }),
            ("Test user", { esc($0.analysis.journal.session.testUser ?? "–") }),
            ("Device", { session in esc(session.result(Overview.self)?.devices.map { [$0.name, $0.model, $0.systemVersion.map { "iOS \($0)" }].compactMap { $0 }.joined(separator: ", ") }.joined(separator: "; ") ?? "–") }),
            ("App", { session in esc(session.result(Overview.self)?.devices.compactMap { device in device.appId.map { "\($0) \(device.appVersion ?? "")" } }.first ?? "–") }),
            ("Started", { Format.date($0.result(Overview.self)?.start) }),
            ("Ended", { Format.date($0.result(Overview.self)?.end) }),
            ("Duration", { Format.duration($0.result(Overview.self)?.duration ?? 0) }),
            ("Events", { session in
                guard let overview = session.result(Overview.self) else { return "–" }
                let leftOut = overview.implausibleEvents == 0 ? ""
                    : "<li>left out, at no plausible time: \(overview.implausibleEvents)</li>"
                return "\(overview.eventCount)<ul class=\"plain\">" + overview.eventsPerClass.map { "<li>\(esc($0.eventClass)): \($0.count)</li>" }.joined() + leftOut + "</ul>"
            }),
            ("Screenshots", { "\($0.result(Screenshots.self)?.shots.count ?? 0) distinct" }),
            ("Usability problems", { "\($0.analysis.problems.count)" }),
            ("Gaps in the recording", { session in
                let gaps = session.result(Overview.self)?.gaps ?? []
                return gaps.isEmpty ? "none" : gaps.map { "\(session.clock($0.start))–\($0.end.map(session.clock) ?? "end"): \(esc($0.reason))" }.joined(separator: "<br>")
            }),
        ]
        var html = "<table class=\"overview\">"
        if context.isComparison {
            html += "<tr><th></th>" + context.sessions.map { "<th>\(esc($0.label))</th>" }.joined() + "</tr>"
        }
        for (name, value) in rows {
            html += "<tr><th>\(name)</th>" + context.sessions.map { "<td>\(value($0))</td>" }.joined() + "</tr>"
        }
        return html + "</table>"
    }
}
