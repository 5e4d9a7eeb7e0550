internal import Foundation
public import SessionAnalysis
public import SessionModel
public import StudyAnalysis

/// Where the study report links to: the web console, and the sessions' own reports.
public struct StudyReportLinks: Sendable {
    /// The web console's base URL (e.g. http://127.0.0.1:28080); links go to /sessions/ID and /sessions/ID/replay?t=SECONDS.
    public var console: String?
    /// Session id → report-relative path of that session's own report (when written alongside).
    public var sessionReports: [Int64: String]

    public init(console: String? = nil, sessionReports: [Int64: String] = [:]) {
        self.console = console
        self.sessionReports = sessionReports
    }
}

/// Writes the study report directory (docs/REPORTS.md, "Study report"): index.html, report.css, report.js
/// and each screenshot the heatmaps and problems show, once per SHA-256, read from the session files.
/// Charts are SVG drawn here, so the page reads without script; the script only draws the heatmaps.
public struct StudyReportWriter {
    /// The sections, in order: the one place where a study section is registered.
    static var sections: [(id: String, title: String, section: any StudyReportSection)] { [
        ("overview", "Overview", StudyOverviewSection()),
        ("tasks", "Tasks", StudyTasksSection()),
        ("comparison", "Iteration against iteration", StudyComparisonSection()),
        ("participants", "Participants", StudyParticipantsSection()),
        ("sus", "System Usability Scale", StudySUSSection()),
        ("problems", "Problems across participants", StudyProblemsSection()),
        ("heatmaps", "Touch heatmaps", StudyHeatmapSection()),
        ("notes", "Observer notes and quotes", StudyNotesSection()),
    ] }

    public init() {}

    /// Returns index.html's path.
    @discardableResult
    public func write(_ results: StudyResults, to directory: String, links: StudyReportLinks) throws -> String {
        let shots = try ReportDirectory.create(directory)
        // Each screenshot a heatmap or problem shows.
        let references = results.heatmaps.compactMap(\.screenshot) + results.problems.flatMap { $0.sightings.compactMap(\.screenshot) }
        let copy = ScreenshotCopy(references.map { ScreenshotCopy.Shot(sessionFile: $0.sessionPath, sessionName: $0.sessionPath, sha256: $0.sha256) },
                                  into: shots)
        let shotFiles = Dictionary(references.map { ($0.sha256, ScreenshotCopy.file($0.sha256)) }) { first, _ in first }
        let index = directory + "/index.html"
        try copy.alongside {
            let context = StudyReportContext(results: results, links: links, shotFiles: shotFiles, pages: StudyReportPages.pages(at: references))
            let parts = Self.sections.map { ReportDirectory.Part(id: $0.id, title: $0.title, body: $0.section.body(context)) }
            let participants = Set(results.iterations.flatMap(\.participants)).count
            try ReportDirectory.write(ReportDirectory.page(
                title: "Study report: " + results.study.name,
                subtitle: "muEval study report of \(Format.count(results.iterations.count, "iteration")), "
                    + "\(Format.count(participants, "participant")), \(Format.count(results.sessions.count, "session"))",
                parts: parts), to: index)
        }
        return index
    }
}

/// Analyses a study and writes its report: the study's counterpart of `ReportGenerator`.
public enum StudyReportGenerator {
    /// Analyses (StudyAnalyzer.analyze: from the sessions' digests, `digests` saying whether those it makes are
    /// stored) and writes; with `sessionReports`, also each session's own report into DIR/sessions/ID/
    /// (ReportGenerator), two at a time, and links to it. Returns index.html's path.
    public static func generate(_ data: StudyData, iteration: Int?, output: String, options: AnalysisOptions,
                                links: StudyReportLinks, sessionReports: Bool, digests: DigestStorage = .readOnly) async throws -> String {
        let results = try await StudyAnalyzer.analyze(data, iteration: iteration, options: options, digests: digests)
        var links = links
        if sessionReports {
            let configuration = ReportConfiguration(options: options)
            let sessions = results.sessions.map { (id: $0.id, path: $0.path) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                var next = sessions.makeIterator()
                func add() {
                    guard let session = next.next() else { return }
                    group.addTask {
                        _ = try await BlockingWork.run {
                            try ReportGenerator.generate(sessionFiles: [session.path], configuration: configuration,
                                                         output: output + "/sessions/\(session.id)")
                        }
                    }
                }
                for _ in 0..<2 { add() }
                while try await group.next() != nil { add() }
            }
            for session in sessions { links.sessionReports[session.id] = "sessions/\(session.id)/index.html" }
        }
        let written = links
        return try await BlockingWork.run { try StudyReportWriter().write(results, to: output, links: written) }
    }
}
