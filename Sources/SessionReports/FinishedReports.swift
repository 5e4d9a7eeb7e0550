package import ReportCritique
package import SessionCore

/// Tells each follower of the session reports when one was written or failed, through the core's
/// `Broadcast`: a follower that falls behind is never waited for, and hears `.missed(count)` where it
/// missed news (the console then reads the reports' states again).
package final class FinishedReports: Sendable {
    /// News a follower may leave unread before it misses some.
    package static let capacity = 64

    private let broadcast = Broadcast<ReportNews>()

    package init() {}

    /// Each report written or failed from now on, until the subscription is cancelled.
    package func follow() -> BroadcastSubscription<ReportNews> {
        broadcast.subscribe(capacity: Self.capacity) { count, _ in .missed(count) }
    }

    package func publish(_ report: FinishedReport) {
        broadcast.publish([.finished(report)])
    }
}
