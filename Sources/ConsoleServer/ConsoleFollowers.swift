internal import Foundation
internal import SessionCore

/// What the console does beside serving requests while it runs: `serve` starts these with the server and
/// cancels them once it has stopped.
extension ConsoleServer {
    /// Pushes "sessions changed" to the pages at the sessions' lifecycle events (one push for what
    /// arrived together). The automatic report is not the console's: the daemon's AutomaticReports writes it.
    func followLifecycle(_ events: SessionEventSubscription) async {
        while let batch = await events.next() {
            var sessionsChanged = false
            for event in batch {
                switch event {
                case .studyCompleted(let study, let reason, _):
                    updates.send(ConsoleUpdates.studyCompleted(study, reason: reason.rawValue))
                case .recruitmentChanged(let study):
                    updates.send(ConsoleUpdates.recruitmentChanged(study))
                default:
                    sessionsChanged = true
                }
            }
            if sessionsChanged { updates.send(ConsoleUpdates.sessionsChanged) }
        }
    }

    /// Once a second: every open session's rate, pushed to the pages that follow.
    func sampleRates() async {
        while !Task.isCancelled {
            let sessions = environment.registry.openSessions().map(\.snapshot)
            let current = rates.sample(sessions, now: Date().timeIntervalSince1970)
            if updates.isFollowed, let message = try? ConsoleUpdates.rates(current, events: sessions, counters: environment.counters.snapshot()) {
                updates.send(message)
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
