package import FaceAnalysis
internal import Foundation
package import Logging
internal import MuEvalAsync
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
    /// Reports whose screenshots are being copied after their page was offered (`follow`).
    private let copying = AsyncCondition<Set<Key>>([])
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

    /// Writes the report in the background, or joins the task already writing it. `automatic`: the daemon's report
    /// of a stop, from the durable queue (`ReportDrain`), which waits its turn however many wait: it is never refused.
    @discardableResult
    package func write(_ record: SessionRecord, name: String = ReportLocations.defaultName,
                       configuration: ReportConfiguration = ReportConfiguration(), automatic: Bool = false) -> Task<ReportState, Never> {
        let key = Key(session: record.id, name: name)
        return tasks.join(key) { [self] in
            let outcome = await write(record, name: name, configuration: configuration, automatic: automatic)
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

    /// Whether the report's screenshots are being written into its `shots/`: while it is written, and after its page
    /// is offered until the copy ends. The console then serves them from the session file, never a file half written.
    package func copyingScreenshots(of session: Int64, name: String) -> Bool {
        copying.withState { $0.contains(Key(session: session, name: name)) }
    }

    private func write(_ record: SessionRecord, name: String, configuration: ReportConfiguration, automatic: Bool) async -> ReportState {
        let key = Key(session: record.id, name: name)
        // Written again before the last copy of its screenshots ended, it waits: both would write the same files.
        // Taken in the wait itself, so that nobody slips in between.
        guard await copying.wait(until: { copying in copying.insert(key).inserted }) else {
            // Cancelled while waiting: it holds no key, so it writes nothing (and removes no other writer's).
            return .failed(CancellationError())
        }
        let started = Date()
        let output = locations.session(record.id, report: name)
        do {
            // Analysis reads the whole session file and the face scan waits for its subprocess (minutes for an
            // hour of video): on the report threads of their own, never NIO's pool, which the console's SQLite
            // calls share, nor the cooperative one; and only as many at once as `reports.max_concurrent` allows.
            let (digestOutcome, analysed, screenshots) = try await slots.run(unbounded: automatic) { try await BlockingWork.run { [faceScanner, problemMarks] in
                // The default report's analysis also gives a study session its digest (docs/STUDIES.md, "Digests"),
                // read before the analysis so that a note added meanwhile makes it stale, never wrong.
                let digest = name == ReportLocations.defaultName ? StudyDigestMaker(sessionFile: record.path, options: configuration.options) : nil
                let analysis = try AnalyzedSession(path: record.path, options: configuration.options)
                let analysed = Date()
                let digestOutcome = digest.map { digest in
                    let making = Date()
                    return Result { try digest.store(from: analysis, record: record, options: configuration.options) }
                        .map { Date().timeIntervalSince(making) }
                }
                var writer = ReportWriter(configuration: configuration)
                writer.faceScanner = faceScanner
                let (_, screenshots) = try writer.writePage([analysis], to: output)
                try problemMarks.write(ProblemMark.scrubber(analysis.problems), session: record.id, report: name)
                return (digestOutcome, analysed, screenshots)
            } }
            switch digestOutcome {
            case .success(let seconds): logger.info("digest of session \(record.id) stored in \(String(format: "%.3f", seconds)) s")
            case .failure(let error): logger.warning("digest of session \(record.id) not stored (its study report will analyse it): \(error)")
            case nil: break
            }
            // The analysis apart: what the report waits for splits into reading the journal and writing the page.
            let written = Date()
            logger.info("report of session \(record.id) (\(name)) written in \(String(format: "%.2f", written.timeIntervalSince(started))) s (analysis \(String(format: "%.2f", analysed.timeIntervalSince(started))) s): \(output)")
            follow(screenshots, of: key, into: output, since: written)
            return .ready(url: ReportLocations.url(session: record.id, report: name), generated: Date().timeIntervalSince1970)
        } catch {
            logger.error("report of session \(record.id) (\(name)) failed: \(error)")
            // Its copy, if one began, ended with the page.
            copying.withState { _ = $0.remove(key) }
            return .failed(error)
        }
    }

    /// The page is offered before its screenshots are all in `shots/` (creating a thousand files took up to 0.85 s
    /// after a stop, more than the page): until the copy ends, the console serves them from the session file.
    /// A copy that fails leaves the page as it is, still complete in the console, and says so in the log.
    private func follow(_ screenshots: ScreenshotCopy, of key: Key, into output: String, since written: Date) {
        screenshots.whenDone { [logger, copying] failure in
            switch failure {
            case nil:
                logger.debug("screenshots of report \(key.name) of session \(key.session) copied \(String(format: "%.2f", Date().timeIntervalSince(written))) s after its page")
            case let failure? where FileManager.default.fileExists(atPath: output):
                logger.error("screenshots of report \(key.name) of session \(key.session) not all copied into its folder (the console shows them from the session file; write the report again to complete it): \(failure)")
            case _?:
                break // deleted meanwhile with its session: nothing to complete
            }
            copying.withState { _ = $0.remove(key) }
        }
    }
}
