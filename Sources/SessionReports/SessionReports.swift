internal import Foundation
package import Logging
package import ReportCritique
internal import SessionAnalysis
package import SessionModel
internal import StudyAnalysis

/// The reports of sessions: folders under `<data>/reports/<session>/<name>/` (`ReportLocations`), written in the
/// background, one task per report at a time (a second request for one joins it: `ReportTasks`), at most
/// `reports.max_concurrent` at once (`ReportSlots`; a report waiting its turn says `running`). The daemon's
/// automatic report (`AutomaticReports`) and the console's reports on request both write here; the console
/// serves the folders as they are.
package final class SessionReports: Sendable {
    private struct Key: Hashable, Sendable {
        var session: Int64
        var name: String
    }

    private let locations: ReportLocations
    private let logger: Logger
    private let slots: ReportSlots
    private let tasks = ReportTasks<Key>()
    private let failures = ReportFailures<Key>()
    private let problemMarks: ProblemMarks
    /// Each report written or failed, for whoever follows (the console).
    package let finished = FinishedReports()
    /// The face scan's limits (`reports.face_*`).
    private let faceScanner: FaceScanner

    package init(dataDirectory: String, logger: Logger, slots: ReportSlots = ReportSlots(limits: ReportLimits()),
                 faceScanner: FaceScanner = FaceScanner()) {
        locations = ReportLocations(dataDirectory: dataDirectory)
        problemMarks = ProblemMarks(locations: locations)
        self.logger = logger
        self.slots = slots
        self.faceScanner = faceScanner
    }

    package func state(of session: Int64, name: String) -> ReportState {
        let key = Key(session: session, name: name)
        if tasks.isRunning(key) { return .running }
        return failures.failure(of: key)
            ?? .written(index: locations.session(session, report: name) + "/index.html", url: ReportLocations.url(session: session, report: name))
    }

    /// The problems the last default report of the session found.
    package func problems(of session: Int64) -> [ProblemMark] {
        problemMarks.of(session)
    }

    /// Writes the report in the background, or joins the task already writing it.
    @discardableResult
    package func write(_ record: SessionRecord, name: String = ReportLocations.defaultName,
                       configuration: ReportConfiguration = ReportConfiguration()) -> Task<ReportState, Never> {
        let key = Key(session: record.id, name: name)
        return tasks.join(key) { [self] in
            let outcome = await write(record, name: name, configuration: configuration)
            failures.record(outcome, for: key)
            return outcome
        } done: { [finished] outcome in
            finished.publish(FinishedReport(session: record.id, name: name, state: outcome))
        }
    }

    /// A deleted session's reports go with it.
    package func forget(_ session: Int64) {
        problemMarks.forget(session)
        failures.forget { $0.session == session }
        try? FileManager.default.removeItem(atPath: locations.session(session))
    }

    /// The reports of sessions not among `sessions` (deleted while their deletion went unseen) go.
    package func forgetAll(except sessions: Set<Int64>) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: locations.root)) ?? []
        for name in names {
            guard let session = Int64(name), !sessions.contains(session) else { continue }
            forget(session)
        }
    }

    private func write(_ record: SessionRecord, name: String, configuration: ReportConfiguration) async -> ReportState {
        let started = Date()
        let output = locations.session(record.id, report: name)
        do {
            // Analysis reads the whole session file and the face scan waits for its subprocess (minutes for an
            // hour of video): on the report threads of their own, never NIO's pool, which the console's SQLite
            // calls share, nor the cooperative one; and only as many at once as `reports.max_concurrent` allows.
            let digestOutcome = try await slots.run { try await BlockingWork.run { [faceScanner, problemMarks] in
                // The default report's analysis also gives a study session its digest (docs/STUDIES.md, "Digests"),
                // read before the analysis so that a note added meanwhile makes it stale, never wrong.
                let digest = name == ReportLocations.defaultName ? StudyDigestMaker(sessionFile: record.path, options: configuration.options) : nil
                let analysis = try AnalyzedSession(path: record.path, options: configuration.options)
                let digestOutcome = digest.map { digest in
                    let making = Date()
                    return Result { try digest.store(from: analysis, record: record, options: configuration.options) }
                        .map { Date().timeIntervalSince(making) }
                }
                var writer = ReportWriter(configuration: configuration)
                writer.faceScanner = faceScanner
                _ = try writer.write([analysis], to: output)
                let marks = analysis.problems.map { ProblemMark(t: $0.time, title: $0.kind.rawValue + ($0.view.map { " in " + $0 } ?? "")) }
                try problemMarks.write(marks, session: record.id, report: name)
                return digestOutcome
            } }
            switch digestOutcome {
            case .success(let seconds): logger.info("digest of session \(record.id) stored in \(String(format: "%.3f", seconds)) s")
            case .failure(let error): logger.warning("digest of session \(record.id) not stored (its study report will analyse it): \(error)")
            case nil: break
            }
            logger.info("report of session \(record.id) (\(name)) written in \(String(format: "%.2f", Date().timeIntervalSince(started))) s: \(output)")
            return .ready(url: ReportLocations.url(session: record.id, report: name), generated: Date().timeIntervalSince1970)
        } catch {
            logger.error("report of session \(record.id) (\(name)) failed: \(error)")
            return .failed(error)
        }
    }
}
