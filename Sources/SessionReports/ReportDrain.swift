internal import Foundation
package import Logging
internal import NIOConcurrencyHelpers
package import SessionCore
package import SessionModel

/// Writes the reports the `ReportQueue` holds, oldest first, at most `limit` at once (`reports.max_concurrent`):
/// a hundred sessions that stop together wait on disk, not in memory, and none is refused. Each report leaves the
/// queue once written or failed; one cut short by a shutdown stays for the next start.
package final class ReportDrain: Sendable {
    private struct State: Sendable {
        var writing: Set<Int64> = []
        var queued = 0
    }

    private let queue: ReportQueue
    private let reports: SessionReports
    private let registry: SessionRegistry
    private let limit: Int
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    package init(queue: ReportQueue, reports: SessionReports, registry: SessionRegistry, limit: Int, logger: Logger) {
        self.queue = queue
        self.reports = reports
        self.registry = registry
        self.limit = max(limit, 1)
        self.logger = logger
    }

    /// Automatic reports waiting and being written now (`status`).
    package var status: ReportQueueStatus {
        state.withLockedValue { ReportQueueStatus(waiting: max($0.queued - $0.writing.count, 0), writing: $0.writing.count) }
    }

    /// Starts the queue's oldest reports that are not being written, as far as the limit allows.
    package func kick() {
        let queued = queue.sessions()
        let started = state.withLockedValue { state -> [Int64] in
            state.queued = queued.count
            var started: [Int64] = []
            for session in queued where state.writing.count < limit && !state.writing.contains(session) {
                state.writing.insert(session)
                started.append(session)
            }
            return started
        }
        for session in started {
            Task { [self] in
                await write(session)
                state.withLockedValue { _ = $0.writing.remove(session) }
                if !Task.isCancelled { kick() }
            }
        }
    }

    private func write(_ session: Int64) async {
        let record: SessionRecord
        do {
            guard let found = try registry.sessions().first(where: { $0.id == session }) else {
                logger.info("the queued report of session \(session) is dropped: the session was deleted")
                queue.remove(session)
                return
            }
            record = found
        } catch {
            // The catalog cannot be read now: the report stays queued for the next stop or start.
            logger.error("the queued report of session \(session) waits: the sessions' catalog cannot be read: \(error)")
            return
        }
        // Written or failed for good (the failure is the report's state, as for any report): off the queue. A muevald
        // that ends meanwhile never gets here, and the next start writes it.
        _ = await reports.write(record, automatic: true).value
        queue.remove(session)
    }
}
