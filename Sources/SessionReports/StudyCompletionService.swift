internal import Foundation
package import JournalStorage
package import Logging
internal import ServiceLifecycle
package import SessionCore
internal import SessionModel

/// Completes each study with a recruitment once enough of its invitations are `done` or its deadline
/// passed (issue 32, docs/STUDIES.md "When a study completes"): writes the cumulative study report
/// (`StudyReports`, into `<data>/reports/studies/NAME/`), records the completion in the catalog, says
/// `.studyCompleted` on the lifecycle stream and runs `studies.completion_command`. The catalog is the truth:
/// it looks again at every start, at each lifecycle event that can change a recruitment, and when the nearest
/// deadline comes (one alarm); a study the catalog says completed is never completed again.
///
/// Everything it starts is a child of its task group, cancelled at graceful shutdown: a completion still
/// waiting for its report records nothing (the next start completes the study), a command still running is
/// killed with its process group.
package struct StudyCompletionService: Service {
    private let catalog: Catalog
    private let studies: Studies
    private let settings: StudyCompletionSettings
    private let logger: Logger
    /// What decides when a study completes.
    private let lifecycle = InvitationLifecycle()
    /// The one writer of study reports, shared with the console.
    private let reports: StudyReports
    /// Taken when the service is made, before the daemon's services run, so that no stop is missed.
    private let events: SessionEventSubscription

    /// What wakes the service's loop.
    private enum Wake: Sendable {
        case look
        case finished(study: String)
    }

    package init(catalog: Catalog, studies: Studies, registry: SessionRegistry, reports: StudyReports,
                 settings: StudyCompletionSettings, logger: Logger) {
        self.catalog = catalog
        self.studies = studies
        self.reports = reports
        self.settings = settings
        self.logger = logger
        events = registry.events.subscribe()
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            await withDiscardingTaskGroup { group in
                let (wakes, wake) = AsyncStream.makeStream(of: Wake.self)
                let alarm = Alarm()
                group.addTask { [events] in
                    for await event in events where Self.mayChangeRecruitment(event) { wake.yield(.look) }
                }
                group.addTask {
                    while await alarm.rings() { wake.yield(.look) }
                }
                wake.yield(.look)
                var completing: Set<String> = []
                // Ends when the group is cancelled: the stream ends with the waiting task.
                for await reason in wakes {
                    if case .finished(let study) = reason {
                        // Completed, or to be tried again at the next event: never at once, which would spin on a failing catalog.
                        completing.remove(study)
                        continue
                    }
                    let now = Date().timeIntervalSince1970
                    for (recruitment, reason, done) in due(now: now, completing: completing, alarm: alarm) {
                        completing.insert(recruitment.study)
                        group.addTask {
                            let completion = await complete(recruitment, reason: reason, done: done)
                            wake.yield(.finished(study: recruitment.study))
                            if let completion { await runCommand(for: completion) }
                        }
                    }
                }
                group.cancelAll()
            }
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

    /// The studies due to complete now, but those being completed; sets the alarm for the nearest deadline of the rest.
    private func due(now: Double, completing: Set<String>, alarm: Alarm) -> [(Recruitment, Recruitment.CompletionReason, Int)] {
        let recruitments: [Recruitment]
        do {
            recruitments = try catalog.recruitments().filter { $0.completed == nil && !completing.contains($0.study) }
        } catch {
            logger.error("study completion: cannot read the recruitments: \(error)")
            alarm.set(nil)
            return []
        }
        var due: [(Recruitment, Recruitment.CompletionReason, Int)] = []
        var next: Double?
        for recruitment in recruitments {
            let invitations: [Invitation]
            do {
                invitations = try catalog.invitations(study: recruitment.study)
            } catch {
                logger.error("study completion: cannot read the invitations of study \(recruitment.study): \(error)")
                continue
            }
            switch lifecycle.verdict(recruitment, invitations: invitations, now: now) {
            case .complete(let reason):
                due.append((recruitment, reason, lifecycle.done(recruitment, invitations)))
            case .wait(let deadline?):
                next = min(next ?? deadline, deadline)
            case .wait(nil), .alreadyCompleted:
                break
            }
        }
        // At most a day at a time: a wall clock set forward or back is caught up with within a day.
        alarm.set(next.map { min(max($0 - now, 0), 86_400) })
        return due
    }

    /// Writes the report and records the completion; what the command is told, nil when nothing was recorded.
    private func complete(_ recruitment: Recruitment, reason: Recruitment.CompletionReason, done: Int) async -> StudyCompletionEvent? {
        let study = recruitment.study
        var report = ""
        do {
            // The cumulative report of every session of the study.
            guard let written = try await reports.rewrite(studies.data(study)) else { return nil }
            if written.state == .ready {
                report = reports.index(of: study)
            } else {
                logger.error("study \(study) completes without its report, which failed: \(written.error ?? "")")
            }
        } catch {
            logger.error("study \(study) completes without its report, which failed: \(error)")
        }
        // Shutdown came while the report was written: the next start completes the study.
        guard !Task.isCancelled else { return nil }
        do {
            try studies.complete(recruitment, reason: reason, report: report, now: Date().timeIntervalSince1970)
        } catch {
            logger.error("study \(study) is due to complete (\(reason.rawValue)) but the catalog cannot record it: \(error)")
            return nil
        }
        logger.notice("study \(study) completed by its \(reason.rawValue): \(done) of \(recruitment.target) invitations done; report: \(report.isEmpty ? "none" : report)")
        return StudyCompletionEvent(study: study, reason: reason, report: report, done: done, target: recruitment.target)
    }

    /// Beside the loop, which goes on at once whatever the command does.
    private func runCommand(for completion: StudyCompletionEvent) async {
        guard let command = settings.command else { return }
        switch await CompletionCommand(command: command, timeout: settings.timeout).run(environment: CompletionCommand.environment(completion)) {
        case .exited(0):
            logger.info("studies.completion_command for study \(completion.study) done")
        case .exited(let status):
            logger.error("studies.completion_command for study \(completion.study) failed: exit status \(status)")
        case .killed(let seconds):
            logger.error("studies.completion_command for study \(completion.study) still ran after \(seconds) s (studies.completion_command_timeout): killed")
        case .stopped:
            logger.error("studies.completion_command for study \(completion.study) still ran when muevald stopped: killed")
        case .cannotStart(let reason):
            logger.error("studies.completion_command for study \(completion.study) cannot start: \(reason)")
        }
    }
}
