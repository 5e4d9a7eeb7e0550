internal import StudyAnalysis
internal import StudyMetrics

/// The System Usability Scale: each participant's score as a dot on the 0–100 scale over the Sauro–Lewis
/// grade bands, the mean with its interval, and the grade of each iteration.
struct StudySUSSection: StudyReportSection {
    func body(_ context: StudyReportContext) -> String {
        guard let answered = context.results.iterations.filter({ !$0.susScores.isEmpty }).nonEmpty else {
            return emptyNote("No participant answered the SUS questionnaire.")
        }
        return "<p class=\"legend\">Dots: participants' scores. Red line and whisker: the mean and its 95 % interval. "
            + "Bands: the Sauro–Lewis curved grading scale.</p>"
            + answered.map { "<h3>\(context.iterationTitle($0.number))</h3>" + Self.chart($0) }.joined()
            + Self.table(context)
    }

    /// Per iteration: answers, mean with interval, grade, change against the one before (HTML).
    static func table(_ context: StudyReportContext) -> String {
        var html = "<table class=\"sus\"><tr><th>Iteration</th><th>Answers</th><th>Mean SUS</th><th>Grade</th><th>Against the iteration before</th></tr>"
        for iteration in context.results.iterations {
            html += "<tr><td>\(context.iterationTitle(iteration.number))</td><td class=\"num\">\(iteration.susScores.count)</td>"
                + "<td class=\"num\">\(Format.estimate(iteration.sus, Format.sus))</td><td>\(iteration.grade?.rawValue ?? "–")</td>"
                + "<td>\(StudyComparisonSection.change(iteration.susChange, better: .higher) { Format.signed($0) })</td></tr>"
        }
        return html + "</table>"
    }

    static let width = 640.0, height = 94.0, left = 10.0, right = 630.0

    static func chart(_ iteration: IterationResult) -> String {
        func x(_ score: Double) -> Double { left + min(max(score, 0), 100) / 100 * (right - left) }
        func n(_ value: Double) -> String { BarChart.n(value) }
        var svg = "<svg class=\"chart sus\" role=\"img\" viewBox=\"0 0 \(n(width)) \(n(height))\" width=\"\(n(width))\" height=\"\(n(height))\" xmlns=\"http://www.w3.org/2000/svg\"><title>SUS scores, iteration \(iteration.number)</title>"
        for band in bands {
            svg += "<rect class=\"band\" x=\"\(n(x(band.low)))\" y=\"14\" width=\"\(n(x(band.high) - x(band.low)))\" height=\"44\" fill=\"\(color(band.grade))\"><title>\(band.grade.rawValue): \(n(band.low))–\(n(band.high))</title></rect>"
            svg += "<text class=\"muted\" x=\"\(n((x(band.low) + x(band.high)) / 2))\" y=\"10\" text-anchor=\"middle\" font-size=\"9\">\(band.grade.rawValue)</text>"
        }
        // Equal scores side by side, not on top of each other.
        var seen: [Double: Int] = [:]
        for (participant, score) in iteration.susScores.sorted(by: { ($0.value, $0.key) < ($1.value, $1.key) }) {
            let stack = seen[score, default: 0]
            seen[score] = stack + 1
            svg += "<circle class=\"score\" cx=\"\(n(x(score)))\" cy=\"\(n(48 - Double(stack % 5) * 7))\" r=\"4\"><title>\(esc(participant)): \(Format.sus(score))</title></circle>"
        }
        if let mean = iteration.sus {
            if let interval = mean.interval {
                svg += "<path class=\"whisker\" d=\"M\(n(x(interval.low))) 26H\(n(x(interval.high)))M\(n(x(interval.low))) 21V31M\(n(x(interval.high))) 21V31\"/>"
            }
            svg += "<line class=\"mean\" x1=\"\(n(x(mean.value)))\" y1=\"16\" x2=\"\(n(x(mean.value)))\" y2=\"56\"><title>mean \(Format.sus(mean.value))</title></line>"
        }
        for tick in stride(from: 0, through: 100, by: 10) {
            svg += "<text class=\"muted\" x=\"\(n(x(Double(tick))))\" y=\"74\" text-anchor=\"middle\">\(tick)</text>"
        }
        let grade = iteration.grade.map { " · grade \($0.rawValue)" } ?? ""
        svg += "<text x=\"\(n(left))\" y=\"\(n(height - 1))\">\(Format.count(iteration.susScores.count, "answer"))\(iteration.sus.map { " · mean \(Format.sus($0.value))" } ?? "")\(grade)</text>"
        return svg + "</svg>"
    }

    /// The grade bands from F up, each ending where the next begins (`SUSGrade.range` gives the thresholds,
    /// which live in StudyMetrics only).
    static let bands: [(grade: SUSGrade, low: Double, high: Double)] = {
        let grades = SUSGrade.allCases.sorted { $0.range.lowerBound < $1.range.lowerBound }
        return grades.enumerated().map { index, grade in
            (grade, grade.range.lowerBound, index + 1 < grades.count ? grades[index + 1].range.lowerBound : grade.range.upperBound)
        }
    }()

    static func color(_ grade: SUSGrade) -> String {
        switch grade.rawValue.prefix(1) {
        case "A": "#cdebd5"
        case "B": "#e3f1c9"
        case "C": "#f8efc2"
        case "D": "#f9dcc0"
        default: "#f5c9c4"
        }
    }
}
