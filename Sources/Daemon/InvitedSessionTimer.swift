internal import Foundation
internal import ServiceLifecycle
internal import SessionCore

/// Stops the sessions opened by a study invitation whose phone has been away
/// `studies.invited_session_idle` seconds: a remote, unmoderated session has nobody to stop it.
struct InvitedSessionTimer: Service {
    let registry: SessionRegistry
    let idleAfter: Double

    func run() async throws {
        // A tenth of the idle time, within 1 s to a minute: a session stops at most that late.
        let period = min(max(idleAfter / 10, 1), 60)
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(period))
                registry.stopIdleInvitedSessions(idleAfter: idleAfter, now: Date().timeIntervalSince1970)
            }
        }
    }
}
