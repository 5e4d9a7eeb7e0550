internal import SessionModel
internal import Foundation
internal import SessionAnalysis
internal import StudyAnalysis
internal import StudyMetrics

/// What every section of the study report sees: the results, where links go, and the screenshots written.
struct StudyReportContext {
    let results: StudyResults
    let links: StudyReportLinks
    /// Report-relative file of each screenshot written, by SHA-256.
    let shotFiles: [String: String]
    /// The page under a screenshot of a web session that recorded its page (`StudyReportPages`).
    let pages: [ScreenshotReference: ShotPage]
    let sessionsByID: [Int64: AnalysedSession]

    init(results: StudyResults, links: StudyReportLinks, shotFiles: [String: String], pages: [ScreenshotReference: ShotPage] = [:]) {
        self.results = results
        self.links = links
        self.shotFiles = shotFiles
        self.pages = pages
        sessionsByID = Dictionary(results.sessions.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// "Iteration 2 · redesign", as HTML.
    func iterationTitle(_ number: Int) -> String {
        let label = results.iterations.first { $0.number == number }?.label
            ?? results.study.iterations.first { $0.number == number }?.label
        return "Iteration \(number)" + (label.map { " · " + esc($0) } ?? "")
    }

    /// The tasks in the study's order, then any the results name that the study no longer lists.
    var taskNames: [String] {
        var names = results.study.tasks.map(\.name)
        for name in results.taskMetrics.map(\.task) + results.attempts.map(\.task) where !names.contains(name) { names.append(name) }
        return names
    }

    /// The moment `time` (device time) of session `id`, counted from the session's start, as `m:ss.s`.
    func clock(_ time: Double, session id: Int64) -> String {
        Format.clock(time - (sessionsByID[id]?.start ?? time))
    }

    /// Links to session `id`: its own report, and in the console its page and its replay at `time`.
    func sessionLinks(_ id: Int64, at time: Double? = nil) -> String {
        var links: [String] = []
        if let report = self.links.sessionReports[id] {
            links.append("<a href=\"\(esc(report))\">report</a>")
        }
        if let console = self.links.consoleBase {
            links.append("<a href=\"\(esc(console))/sessions/\(id)\">console</a>")
            let offset = time.map { max(0, $0 - (sessionsByID[id]?.start ?? $0)) } ?? 0
            links.append("<a href=\"\(esc(console))/sessions/\(id)/replay?t=\(String(format: "%.3f", offset))\">replay</a>")
        }
        return links.isEmpty ? "" : "<span class=\"links\">" + links.joined(separator: " · ") + "</span>"
    }

    /// A screenshot of a session file with its marks, or nothing when it was not written.
    func screenshot(_ reference: ScreenshotReference?, frame: Rect? = nil, point: Point? = nil, caption: String = "") -> String {
        guard let reference, let file = shotFiles[reference.sha256] else { return "" }
        return markedScreenshot(file: file, screen: reference.screen, alt: "screenshot", frame: frame, point: point, caption: caption,
                                page: pages[reference])
    }
}

extension StudyReportLinks {
    /// The console's base URL without a trailing slash; nil when none is given.
    var consoleBase: String? {
        guard var base = console?.trimmingCharacters(in: .whitespaces), !base.isEmpty else { return nil }
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }
}

/// One part of the study report, like `ReportSection` for a session's; its id and title are registered
/// in `StudyReportWriter.sections`.
protocol StudyReportSection {
    func body(_ context: StudyReportContext) -> String
}

extension Format {
    /// "82.5 % (61.2–93.7 %)".
    static func estimate(_ estimate: Estimate?, _ format: (Double) -> String) -> String {
        guard let estimate else { return "–" }
        return format(estimate.value) + (estimate.interval.map { " <span class=\"interval\">(\(format($0.low))–\(format($0.high)))</span>" } ?? "")
    }

    /// A mean per attempt: "0.40".
    static func mean(_ value: Double?) -> String {
        value.map { String(format: "%.2f", $0) } ?? "–"
    }

    static func seq(_ value: Double) -> String { String(format: "%.1f", value) }

    static func sus(_ value: Double) -> String { String(format: "%.1f", value) }

    /// A signed number: "+12.5", "−3.0".
    static func signed(_ value: Double, digits: Int = 1) -> String {
        let text = String(format: "%.\(digits)f", abs(value))
        return (value < 0 ? "−" : "+") + text
    }
}
