internal import Foundation
package import Logging
internal import StudyAnalysis
internal import ServiceLifecycle
package import SessionCore
package import SessionModel

/// The default report of every session that stops while muevald runs, started as soon as its file is
/// final (thesis 2.4.1: "as soon as the developer stops the evaluation session … the framework should
/// start the analysis phase"). The daemon's, not the console's: a disabled or failed console changes
/// nothing here. Imported sessions get theirs on request (`muevalctl report`, the console), as before.
/// A deleted session's reports are removed here too. Each stop's report is queued on disk first (`ReportQueue`) and
/// written from there (`ReportDrain`): however many sessions stop at once, every one gets its report, and a report
/// a restart cut short is written after it.
package struct AutomaticReports: Service {
    private let reports: SessionReports
    private let registry: SessionRegistry
    private let queue: ReportQueue
    private let drain: ReportDrain
    private let logger: Logger
    /// Taken when the service is made, before the daemon's services run, so that no stop is missed.
    private let events: SessionEventSubscription
    /// When the subscription began: a stop after it is this service's to report.
    private let since: Double

    /// `limit`: reports written at once (`reports.max_concurrent`).
    package init(reports: SessionReports, registry: SessionRegistry, queue: ReportQueue, limit: Int, logger: Logger,
                 now: Double = Date().timeIntervalSince1970) {
        self.reports = reports
        self.registry = registry
        self.queue = queue
        self.logger = logger
        drain = ReportDrain(queue: queue, reports: reports, registry: registry, limit: limit, logger: logger)
        events = registry.events.subscribe()
        since = now
    }

    /// Automatic reports waiting and being written (`status`).
    package var status: ReportQueueStatus { drain.status }

    package func run() async throws {
        await withGracefulShutdownHandler {
            drain.kick()  // what the last run left in the queue
            var reported: Set<Int64> = []
            for await event in events {
                switch event {
                case .stopped(let record):
                    reported.insert(record.id)
                    await enqueue(record)
                case .missed:
                    // A stop may be among what was dropped: the catalog has every session stopped since the
                    // subscription (a catalog that cannot be read now is read again at the next gap).
                    let sessions = (try? registry.sessions()) ?? []
                    for record in sessions where Self.stoppedHere(record, since: since) && !reported.contains(record.id) {
                        reported.insert(record.id)
                        await enqueue(record)
                    }
                    // A deletion may be among them too.
                    if !sessions.isEmpty { reports.forgetAll(except: Set(sessions.map(\.id))) }
                case .deleted(let record):
                    // Whoever deleted it (`muevalctl delete`, the console, a tester's withdrawal): its reports
                    // hold its screenshots and touches, so they go with it.
                    reports.forget(record.id)
                case .started, .deviceAttached, .deviceDetached, .pairingCodesChanged, .stopping, .imported,
                     .recruitmentChanged, .studyCompleted:
                    break
                }
            }
        } onGracefulShutdown: { [events] in
            events.cancel()
        }
    }

    /// The stop's report goes on the queue, synced on a thread of its own; a queue the disk refuses (full) still gets
    /// this report written, only not across a restart.
    private func enqueue(_ record: SessionRecord) async {
        do {
            try await BlockingWork.run { [queue] in try queue.add(record.id) }
            drain.kick()
        } catch {
            logger.error("\(error)")
            reports.write(record, automatic: true)
        }
    }

    /// Stopped by muevald since `since`: not an import, which is as final but gets its report on request.
    static func stoppedHere(_ record: SessionRecord, since: Double) -> Bool {
        record.state == .stopped && record.imports == nil && (record.stopped ?? 0) >= since
    }
}
