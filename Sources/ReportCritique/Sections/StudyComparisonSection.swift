internal import StudyAnalysis
internal import StudyMetrics

/// Did the redesign help? Each task, each iteration against the one before: the difference (or ratio) with
/// its interval, and in words whether it is larger than the interval.
struct StudyComparisonSection: StudyReportSection {
    /// Which way is better for a measure.
    enum Better { case higher, lower }

    func body(_ context: StudyReportContext) -> String {
        guard let comparisons = context.results.comparisons.nonEmpty else {
            return emptyNote("Only one iteration\(context.results.iterations.count == 1 ? " is analysed" : " has attempts"): nothing to compare.")
        }
        var html = "<p class=\"legend\">Completion and SEQ: later minus earlier iteration; time: later divided by earlier (below 1 is faster). "
            + "“Improved” or “worse” only when the 95 % interval of the change leaves out no change; otherwise “no clear change”.</p>"
        html += "<table class=\"comparison\"><tr><th>Task</th><th>Iterations</th><th>Completion rate</th><th>Time on task</th><th>SEQ</th></tr>"
        let order = context.taskNames
        for comparison in comparisons.sorted(by: { (order.firstIndex(of: $0.task) ?? .max, $0.to) < (order.firstIndex(of: $1.task) ?? .max, $1.to) }) {
            html += "<tr><td>\(esc(comparison.task))</td><td>\(comparison.from) → \(comparison.to)</td>"
                + "<td>\(Self.change(comparison.completion, better: .higher) { Format.signed($0 * 100) + " pp" })</td>"
                + "<td>\(Self.change(comparison.time, better: .lower) { String(format: "%.2f×", $0) })</td>"
                + "<td>\(Self.change(comparison.seq, better: .higher) { Format.signed($0) })</td></tr>"
        }
        return html + "</table>"
    }

    /// The change with its interval and verdict, as HTML ("–" without one).
    static func change(_ difference: Difference?, better: Better, _ format: (Double) -> String) -> String {
        guard let difference else { return "–" }
        let interval = difference.interval.map { " <span class=\"interval\">(\(format($0.low)) to \(format($0.high)))</span>" } ?? ""
        return "\(format(difference.value))\(interval)<br>" + verdict(difference, better: better)
    }

    static func verdict(_ difference: Difference, better: Better) -> String {
        guard difference.isSignificant else { return "<span class=\"verdict unclear\">no clear change</span>" }
        let neutral: Double = better == .lower ? 1 : 0
        let improved = better == .higher ? difference.value > neutral : difference.value < neutral
        return improved ? "<span class=\"verdict improved\">improved</span>" : "<span class=\"verdict worse\">worse</span>"
    }
}
