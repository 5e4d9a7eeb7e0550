internal import NIOConcurrencyHelpers

/// A value under a lock that tasks can wait on: `withState` changes it, `wait(until:)` returns once a
/// condition on it holds. The one waiter primitive of muEval (a doorbell, a shutdown latch, a readiness
/// gate, a tail's "lines are buffered", a queue's "there is room" are each a condition on a state).
///
/// Every waiter is resumed exactly once: when its condition holds, when its task is cancelled, or when
/// its timeout passes; none is left behind. Conditions run under the lock, at the wait and after each
/// change, in the order the waiters came; a condition may change the state (take a ring), so that only
/// the waiter it holds for proceeds.
public final class AsyncCondition<State: Sendable>: Sendable {
    /// A condition on the state; true ends the wait. It runs under the lock: keep it short.
    public typealias Condition = @Sendable (inout State) -> Bool

    private struct Waiter {
        let id: UInt64
        let condition: Condition
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct Guarded {
        var state: State
        var waiters: [Waiter] = []
        var lastID: UInt64 = 0

        /// Removes the waiters whose condition holds now, first come first.
        mutating func takeSatisfied() -> [Waiter] {
            guard !waiters.isEmpty else { return [] }
            var satisfied: [Waiter] = []
            waiters.removeAll { waiter in
                guard waiter.condition(&state) else { return false }
                satisfied.append(waiter)
                return true
            }
            return satisfied
        }
    }

    private let guarded: NIOLockedValueBox<Guarded>

    public init(_ state: State) {
        guarded = NIOLockedValueBox(Guarded(state: state))
    }

    /// Runs `body` on the state under the lock, then resumes the waiters whose condition now holds.
    @discardableResult
    public func withState<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        let (result, satisfied) = try guarded.withLockedValue { guarded in
            let result = try body(&guarded.state)
            return (result, guarded.takeSatisfied())
        }
        for waiter in satisfied { waiter.continuation.resume(returning: true) }
        return result
    }

    /// Returns once `condition` holds (at once when it does now): true then, false when the task
    /// was cancelled first.
    @discardableResult
    public func wait(until condition: @escaping Condition) async -> Bool {
        let id = guarded.withLockedValue { guarded in
            guarded.lastID += 1
            return guarded.lastID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now = guarded.withLockedValue { guarded -> Bool? in
                    if condition(&guarded.state) { return true }
                    // The handler ran before the waiter was registered: it found nothing to resume.
                    if Task.isCancelled { return false }
                    guarded.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter = guarded.withLockedValue { guarded -> Waiter? in
                guard let index = guarded.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return guarded.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: false)
        }
    }

    /// Like `wait(until:)`, but returns false also once `timeout` has passed.
    @discardableResult
    public func wait(until condition: @escaping Condition, timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.wait(until: condition) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            var held = await group.next() ?? false
            group.cancelAll()
            // The condition may have held (and taken what it waited for) just as the timer ran.
            for await other in group { held = held || other }
            return held
        }
    }
}
