internal import Foundation
internal import Logging
internal import ServiceLifecycle
internal import SessionCore

/// Finishes at start the testers' withdrawals that a failed step left pending before muevald last
/// stopped (docs/STUDIES.md "Withdrawal"): what is left is carried out once, logged, and a step that
/// fails again stays pending for the tester's retry, the lab's or the next start.
struct PendingWithdrawals: Service {
    let studies: Studies
    let logger: Logger

    func run() async throws {
        do {
            for withdrawal in try await studies.resumeWithdrawals(now: Date().timeIntervalSince1970) {
                let code = withdrawal.tester.code
                if withdrawal.withdrawn {
                    logger.notice("pool: the pending withdrawal of tester \(code) finished (\(withdrawal.deletedSessions.count) sessions deleted)")
                } else {
                    logger.error("pool: the withdrawal of tester \(code) is still pending: \(withdrawal.pending.map(\.description).joined(separator: "; "))")
                }
            }
        } catch {
            logger.error("pool: cannot read the pending withdrawals: \(error)")
        }
        try? await gracefulShutdown()
    }
}
