internal import Foundation
package import JournalStorage
package import Logging
internal import NIOConcurrencyHelpers
internal import ReportCritique
internal import ServiceLifecycle
internal import SessionAnalysis
package import SessionCore
internal import SessionModel

/// Completes each study with a recruitment once enough of its invitations are `done` or its deadline
/// passed (issue 32, docs/STUDIES.md "When a study completes"): writes the cumulative study report into
/// `<data>/reports/studies/NAME/`, records the completion in the catalog, says `.studyCompleted` on the
/// lifecycle stream and runs `studies.completion_command`. The catalog is the truth: it looks again at
/// every start, at each lifecycle event that can change a recruitment, and when the nearest deadline
/// comes (one timer); a study the catalog says completed is never completed again.
package struct StudyCompletionService: Service {
    private let catalog: Catalog
    private let studies: Studies
    private let registry: SessionRegistry
    private let settings: StudyCompletionSettings
    private let dataDirectory: String
    private let logger: Logger
    /// The session reports' turns: a study's report takes one too.
    private let slots: ReportSlots
    /// Taken when the service is made, before the daemon's services run, so that no stop is missed.
    private let events: SessionEventSubscription
    /// Set at shutdown: a report finished after it records nothing, the next start completes the study.
    private let stopping = NIOLockedValueBox(false)

    /// What wakes the service's loop.
    private enum Wake: Sendable {
        case look
        case finished(study: String)
    }

    package init(catalog: Catalog, studies: Studies, registry: SessionRegistry, dataDirectory: String,
                 settings: StudyCompletionSettings, logger: Logger, slots: ReportSlots = ReportSlots(limits: ReportLimits())) {
        self.slots = slots
        self.catalog = catalog
        self.studies = studies
        self.registry = registry
        self.settings = settings
        self.dataDirectory = dataDirectory
        self.logger = logger
        events = registry.events.subscribe()
    }

    /// Where a completed study's report is written (the console serves it from there). A study's name is one
    /// safe path component (`StudyError.checkName`).
    package static func directory(dataDirectory: String, study: String) -> String { "\(dataDirectory)/reports/studies/\(study)" }

    package func run() async throws {
        let (wakes, wake) = AsyncStream.makeStream(of: Wake.self)
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { [events] in
                    for await event in events where Self.mayChangeRecruitment(event) { wake.yield(.look) }
                    wake.finish()
                }
                wake.yield(.look)
                var completing: Set<String> = []
                var timer: Task<Void, Never>?
                for await reason in wakes {
                    if case .finished(let study) = reason {
                        // Completed, or to be tried again at the next event: never at once, which would spin on a failing catalog.
                        completing.remove(study)
                        continue
                    }
                    timer?.cancel()
                    let now = Date().timeIntervalSince1970
                    guard let next = look(now: now, completing: &completing, wake: wake) else { continue }
                    // At most a day at a time: a wall clock set forward or back is caught up with within a day.
                    let seconds = min(max(next - now, 0), 86_400)
                    timer = Task {
                        guard (try? await Task.sleep(for: .seconds(seconds))) != nil else { return }
                        wake.yield(.look)
                    }
                }
                timer?.cancel()
            }
        } onGracefulShutdown: { [events, stopping] in
            stopping.withLockedValue { $0 = true }
            events.cancel()
        }
    }

    /// A session of a study stopped (its invitation may be done now), a recruitment changed, or events were dropped.
    static func mayChangeRecruitment(_ event: SessionEvent) -> Bool {
        switch event {
        case .stopped(let record), .deleted(let record): record.study != nil
        case .recruitmentChanged, .missed: true
        case .started, .deviceAttached, .deviceDetached, .pairingCodesChanged, .stopping, .imported, .studyCompleted: false
        }
    }

    /// Starts completing each study that is due; returns the nearest deadline of those that are not.
    private func look(now: Double, completing: inout Set<String>, wake: AsyncStream<Wake>.Continuation) -> Double? {
        let recruitments: [Recruitment]
        do {
            recruitments = try catalog.recruitments().filter { $0.completed == nil && !completing.contains($0.study) }
        } catch {
            logger.error("study completion: cannot read the recruitments: \(error)")
            return nil
        }
        var next: Double?
        for recruitment in recruitments {
            let progress: RecruitmentProgress
            do {
                progress = RecruitmentProgress(recruitment, invitations: try catalog.invitations(study: recruitment.study))
            } catch {
                logger.error("study completion: cannot read the invitations of study \(recruitment.study): \(error)")
                continue
            }
            switch progress.verdict(now: now) {
            case .complete(let reason):
                completing.insert(recruitment.study)
                Task {
                    await complete(progress, reason: reason)
                    wake.yield(.finished(study: recruitment.study))
                }
            case .wait(let deadline?):
                next = min(next ?? deadline, deadline)
            case .wait(nil), .alreadyCompleted:
                break
            }
        }
        return next
    }

    private func complete(_ progress: RecruitmentProgress, reason: Recruitment.CompletionReason) async {
        let study = progress.study
        let started = Date()
        var report = ""
        do {
            // The cumulative report of every session of the study; analysis and writing run off the cooperative threads.
            // It waits its turn however many wait: at most one per study, and refused it would be lost.
            report = try await slots.run(unbounded: true) {
                try await StudyReportGenerator.generate(try studies.data(study), iteration: nil,
                                                        output: Self.directory(dataDirectory: dataDirectory, study: study),
                                                        options: AnalysisOptions(), links: StudyReportLinks(), sessionReports: false)
            }
            logger.info("report of study \(study) written in \(String(format: "%.2f", Date().timeIntervalSince(started))) s: \(report)")
        } catch {
            logger.error("study \(study) completes without its report, which failed: \(error)")
        }
        guard !stopping.withLockedValue({ $0 }) else { return }
        do {
            try catalog.markRecruitmentCompleted(study: study, reason: reason.rawValue, report: report.isEmpty ? nil : report,
                                                 now: Date().timeIntervalSince1970)
        } catch {
            logger.error("study \(study) is due to complete (\(reason.rawValue)) but the catalog cannot record it: \(error)")
            return
        }
        let completion = StudyCompletionEvent(study: study, reason: reason, report: report, done: progress.done, target: progress.target)
        logger.notice("study \(study) completed by its \(reason.rawValue): \(progress.done) of \(progress.target) invitations done; report: \(report.isEmpty ? "none" : report)")
        registry.events.studyCompleted(study: study, reason: reason.rawValue, report: report)
        runCommand(for: completion)
    }

    /// In the background: the service goes on at once, whatever the command does.
    private func runCommand(for completion: StudyCompletionEvent) {
        guard let command = settings.command else { return }
        let logger = logger
        Task {
            switch await CompletionCommand(command: command, timeout: settings.timeout).run(environment: CompletionCommand.environment(completion)) {
            case .exited(0):
                logger.info("studies.completion_command for study \(completion.study) done")
            case .exited(let status):
                logger.error("studies.completion_command for study \(completion.study) failed: exit status \(status)")
            case .killed(let seconds):
                logger.error("studies.completion_command for study \(completion.study) still ran after \(seconds) s (studies.completion_command_timeout): killed")
            case .cannotStart(let reason):
                logger.error("studies.completion_command for study \(completion.study) cannot start: \(reason)")
            }
        }
    }
}
