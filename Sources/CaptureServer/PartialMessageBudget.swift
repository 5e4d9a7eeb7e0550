internal import DequeModule
internal import NIOConcurrencyHelpers
internal import Synchronization

/// One budget for the bytes that all device connections hold in partially received messages
/// (`server.max_partial_bytes`). Without it, 4,096 connections could each hold a 16 MiB message
/// half-sent.
///
/// Beyond the budget, a connection that holds part of a message stops reading. Pausing them all
/// would deadlock: none could complete its message and give its bytes back. So one of them at a
/// time, the *runner*, keeps reading; the others wait in arrival order (FIFO) and take the
/// runner's turn when it completes a message, or all resume when the total falls within the
/// budget. Memory held is thus at most the budget, plus the runner's message (`limits.max_message_bytes`),
/// plus one socket read (64 KiB) per connection that was reading when the budget ran out.
///
/// The hot path is one atomic add per socket read and one load; the lock is taken only while
/// the budget is exceeded or connections wait.
final class PartialMessageBudget: Sendable {
    /// Whether a connection may go on reading its socket.
    enum Verdict: Equatable {
        case proceed
        /// Hold reads until `wake` is called.
        case pause
    }

    let limit: Int
    private let held = Atomic<Int>(0)
    /// Set while a runner or waiters exist: then every update takes the lock, so none is missed.
    private let contended = Atomic<Bool>(false)
    private let waiting = NIOLockedValueBox(Waiting())

    private struct Waiting {
        var runner: UInt64?
        var queue: Deque<(connection: UInt64, wake: @Sendable () -> Void)> = []
    }

    init(limit: Int) {
        self.limit = limit
    }

    /// Bytes held in partial messages across all connections now.
    var heldBytes: Int { held.load(ordering: .relaxed) }

    /// Connections waiting for the budget.
    var waitingCount: Int { waiting.withLockedValue { $0.queue.count } }

    /// A connection's partial bytes changed from `old` to `new` (after a read was decoded);
    /// `completedMessage` when the read completed at least one message. On `.pause`, `wake` is
    /// called (from any thread) when the connection may read again.
    func update(_ connection: UInt64, from old: Int, to new: Int, completedMessage: Bool,
                wake: @escaping @Sendable () -> Void) -> Verdict {
        // Sequentially consistent with the slow path's store of `contended` and load of `held`:
        // either this add is seen there, or the flag is seen here (no lost wake-up).
        let total = held.wrappingAdd(new - old, ordering: .sequentiallyConsistent).newValue
        if total <= limit, !contended.load(ordering: .sequentiallyConsistent) { return .proceed }
        return settle(connection, holding: new, completedMessage: completedMessage, wake: wake)
    }

    /// The connection closed: its bytes are given back and it waits no more.
    func leave(_ connection: UInt64, holding bytes: Int) {
        held.wrappingAdd(-bytes, ordering: .sequentiallyConsistent)
        _ = settle(connection, holding: 0, completedMessage: false, wake: {})
    }

    private func settle(_ connection: UInt64, holding bytes: Int, completedMessage: Bool,
                        wake: @escaping @Sendable () -> Void) -> Verdict {
        let (verdict, wakes) = waiting.withLockedValue { waiting -> (Verdict, [@Sendable () -> Void]) in
            contended.store(true, ordering: .sequentiallyConsistent)
            let total = held.load(ordering: .sequentiallyConsistent)
            var verdict = Verdict.proceed
            // Holding nothing, it needs no turn.
            if bytes == 0 {
                waiting.queue.removeAll { $0.connection == connection }
            }
            let isRunner = waiting.runner == connection
            if isRunner { waiting.runner = nil }
            if bytes > 0, total > limit {
                if waiting.queue.contains(where: { $0.connection == connection }) {
                    verdict = .pause
                } else if isRunner ? !(completedMessage && !waiting.queue.isEmpty) : (waiting.runner == nil && waiting.queue.isEmpty) {
                    waiting.runner = connection
                } else {
                    // Behind the others; a runner that completed a message yields its turn.
                    waiting.queue.append((connection, wake))
                    verdict = .pause
                }
            }
            var wakes: [@Sendable () -> Void] = []
            if total <= limit {
                wakes = waiting.queue.map(\.wake)
                waiting.queue.removeAll()
                waiting.runner = nil
            } else if waiting.runner == nil, let next = waiting.queue.popFirst() {
                waiting.runner = next.connection
                wakes = [next.wake]
            }
            contended.store(waiting.runner != nil || !waiting.queue.isEmpty, ordering: .sequentiallyConsistent)
            return (verdict, wakes)
        }
        // Outside the lock: a wake may run the woken connection's code on this thread.
        for wake in wakes { wake() }
        return verdict
    }
}
