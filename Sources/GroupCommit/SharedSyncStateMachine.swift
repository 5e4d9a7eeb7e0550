/// Which waiters a sync of the file system covers, without threads or disks (`SharedSync` runs it).
///
/// A waiter has written what it wants durable before it waits; a sync covers it only if the sync starts after it
/// asked, since a sync that was already running may have missed what it wrote. So at most one sync runs, the waiters
/// that ask meanwhile wait for the next one, and that one starts as soon as the running one ends: when idle, a
/// waiter's sync starts at once (the lowest latency); under load, every session that committed during a sync shares
/// the next one, so the number of syncs follows the disk's pace, not the number of sessions.
struct SharedSyncStateMachine<Waiter: Sendable>: Sendable {
    private enum State: Sendable {
        case idle
        /// A sync runs; `covered` learn its result; `next` asked after it started.
        case syncing(covered: [Waiter], next: [Waiter])
    }

    enum WaitAction {
        /// Start a sync now: nothing runs.
        case startSync
        /// The waiter is in the next sync's, which starts when the running one ends.
        case none
    }

    private var state = State.idle

    /// A waiter asks for a sync that covers what it has written.
    mutating func wait(_ waiter: Waiter) -> WaitAction {
        switch state {
        case .idle:
            state = .syncing(covered: [waiter], next: [])
            return .startSync
        case .syncing(let covered, var next):
            next.append(waiter)
            state = .syncing(covered: covered, next: next)
            return .none
        }
    }

    /// The running sync ended: the waiters it covered learn its result; `syncAgain` when others asked meanwhile, whom
    /// the next sync, starting now, covers.
    mutating func syncEnded() -> (covered: [Waiter], syncAgain: Bool) {
        guard case .syncing(let covered, let next) = state else {
            preconditionFailure("SharedSyncStateMachine: a sync ended that was never started")
        }
        state = next.isEmpty ? .idle : .syncing(covered: next, next: [])
        return (covered, !next.isEmpty)
    }

    /// Waiters that have not learnt a result yet.
    var waiting: Int {
        switch state {
        case .idle: 0
        case .syncing(let covered, let next): covered.count + next.count
        }
    }
}
