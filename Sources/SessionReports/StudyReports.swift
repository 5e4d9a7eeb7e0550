internal import Foundation
package import Logging
package import ReportCritique
internal import SessionAnalysis
package import SessionModel
internal import StudyAnalysis

/// The one writer of study reports inside muevald: those the console asks for and a recruited study's at its
/// completion (`StudyCompletionService`), into one folder per study, `<data>/reports/studies/NAME/` (one
/// iteration's in `iteration-N/`; `ReportLocations`), which the console serves. Never two tasks write one
/// report at once; each takes a turn of `reports.max_concurrent` (`ReportSlots`) like a session's report.
package final class StudyReports: Sendable {
    private struct Key: Hashable, Sendable {
        var study: String
        var iteration: Int?
    }

    private let locations: ReportLocations
    private let logger: Logger
    private let slots: ReportSlots
    /// The console's address, for the report's links to the session pages; nil: no links.
    private let consoleURL: @Sendable () -> String?
    private let tasks = ReportTasks<Key>()
    private let failures = ReportFailures<Key>()

    package init(dataDirectory: String, logger: Logger, slots: ReportSlots, consoleURL: @escaping @Sendable () -> String? = { nil }) {
        locations = ReportLocations(dataDirectory: dataDirectory)
        self.logger = logger
        self.slots = slots
        self.consoleURL = consoleURL
    }

    /// The report's index.html.
    package func index(of study: String, iteration: Int? = nil) -> String {
        locations.study(study, iteration: iteration) + "/index.html"
    }

    package func state(of study: String, iteration: Int?) -> ReportState {
        let key = Key(study: study, iteration: iteration)
        if tasks.isRunning(key) { return .running }
        return failures.failure(of: key) ?? .written(index: index(of: study, iteration: iteration), url: ReportLocations.url(study: study, iteration: iteration))
    }

    /// Starts writing the report unless it is being written already; returns at once. A request beyond
    /// `reports.max_queued` is refused, as a session's: its state says so.
    package func start(_ data: StudyData, iteration: Int?) -> ReportState {
        let key = Key(study: data.study.name, iteration: iteration)
        _ = tasks.join(key) { [self] in await write(data, key: key, unbounded: false) }
        return .running
    }

    /// Writes the report of every iteration from `data`, once no other task writes it (that one may have read
    /// the study before `data` was), and returns its outcome; it waits its turn however many wait (at most one
    /// per study). Nil when the waiting task is cancelled first: the report is still written.
    package func rewrite(_ data: StudyData) async -> ReportState? {
        let key = Key(study: data.study.name, iteration: nil)
        return await tasks.next(key) { [self] in await write(data, key: key, unbounded: true) }
    }

    private func write(_ data: StudyData, key: Key, unbounded: Bool) async -> ReportState {
        let began = Date()
        let output = locations.study(key.study, iteration: key.iteration)
        let links = StudyReportLinks(console: consoleURL())
        let outcome: ReportState
        do {
            // Analysis and writing run off the cooperative threads (StudyReportGenerator). The digests it has to make
            // (sessions imported, or changed since their stop) are stored: muevald owns the session files.
            let written = try await slots.run(unbounded: unbounded) {
                try await StudyReportGenerator.generate(data, iteration: key.iteration, output: output, options: AnalysisOptions(),
                                                        links: links, sessionReports: false, digests: .readWrite)
            }
            logger.info("report of study \(key.study)\(key.iteration.map { " iteration \($0)" } ?? "") written in \(String(format: "%.2f", Date().timeIntervalSince(began))) s: \(written)")
            outcome = .ready(url: ReportLocations.url(study: key.study, iteration: key.iteration), generated: Date().timeIntervalSince1970)
        } catch {
            logger.error("report of study \(key.study)\(key.iteration.map { " iteration \($0)" } ?? "") failed: \(error)")
            outcome = .failed(error)
        }
        failures.record(outcome, for: key)
        return outcome
    }
}
