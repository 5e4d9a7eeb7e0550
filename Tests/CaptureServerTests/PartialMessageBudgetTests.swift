@testable import CaptureServer
import NIOConcurrencyHelpers
import Testing

/// The global budget for bytes in partial messages: within it nothing waits; beyond it one
/// connection at a time keeps reading, the others take turns in arrival order.
@Suite struct PartialMessageBudgetTests {
    /// Records which connections were woken, in order.
    private final class Wakes: Sendable {
        private let woken = NIOLockedValueBox<[UInt64]>([])
        func waker(_ connection: UInt64) -> @Sendable () -> Void { { self.woken.withLockedValue { $0.append(connection) } } }
        func take() -> [UInt64] {
            woken.withLockedValue { woken in
                defer { woken = [] }
                return woken
            }
        }
    }

    @Test func withinTheBudgetEveryoneProceeds() {
        let budget = PartialMessageBudget(limit: 1000)
        let wakes = Wakes()
        #expect(budget.update(1, from: 0, to: 600, completedMessage: false, wake: wakes.waker(1)) == .proceed)
        #expect(budget.update(2, from: 0, to: 400, completedMessage: false, wake: wakes.waker(2)) == .proceed)
        #expect(budget.heldBytes == 1000)
        #expect(budget.update(1, from: 600, to: 0, completedMessage: true, wake: wakes.waker(1)) == .proceed)
        #expect(budget.heldBytes == 400)
        #expect(wakes.take().isEmpty)
    }

    @Test func beyondTheBudgetOneRunsAndTheOthersWaitInOrder() {
        let budget = PartialMessageBudget(limit: 1000)
        let wakes = Wakes()
        #expect(budget.update(1, from: 0, to: 900, completedMessage: false, wake: wakes.waker(1)) == .proceed)
        // Over the budget: the first connection there becomes the runner, so that someone completes.
        #expect(budget.update(2, from: 0, to: 300, completedMessage: false, wake: wakes.waker(2)) == .proceed)
        #expect(budget.update(3, from: 0, to: 300, completedMessage: false, wake: wakes.waker(3)) == .pause)
        #expect(budget.update(1, from: 900, to: 950, completedMessage: false, wake: wakes.waker(1)) == .pause)
        #expect(budget.waitingCount == 2)
        // The runner keeps reading until it completes its message.
        #expect(budget.update(2, from: 300, to: 500, completedMessage: false, wake: wakes.waker(2)) == .proceed)
        // It completed one and started the next: its turn passes to the first waiter (3), it queues behind 1.
        #expect(budget.update(2, from: 500, to: 100, completedMessage: true, wake: wakes.waker(2)) == .pause)
        #expect(wakes.take() == [3])
        // 3 completes and holds nothing: the turn passes to 1.
        #expect(budget.update(3, from: 300, to: 0, completedMessage: true, wake: wakes.waker(3)) == .proceed)
        #expect(wakes.take() == [1])
        // 1 completes: 1,050 → 100 bytes, within the budget: everyone waiting resumes.
        #expect(budget.update(1, from: 950, to: 0, completedMessage: true, wake: wakes.waker(1)) == .proceed)
        #expect(wakes.take() == [2])
        #expect(budget.waitingCount == 0)
        #expect(budget.heldBytes == 100)
        #expect(budget.update(2, from: 100, to: 200, completedMessage: false, wake: wakes.waker(2)) == .proceed)
    }

    @Test func aRunnerThatLeavesHandsItsTurnOn() {
        let budget = PartialMessageBudget(limit: 100)
        let wakes = Wakes()
        #expect(budget.update(1, from: 0, to: 150, completedMessage: false, wake: wakes.waker(1)) == .proceed)
        #expect(budget.update(2, from: 0, to: 50, completedMessage: false, wake: wakes.waker(2)) == .pause)
        #expect(budget.update(3, from: 0, to: 50, completedMessage: false, wake: wakes.waker(3)) == .pause)
        budget.leave(1, holding: 150)
        #expect(wakes.take() == [2, 3], "back within the budget: both resume")
        #expect(budget.heldBytes == 100)
        // A waiter that leaves is forgotten: it is never woken.
        #expect(budget.update(4, from: 0, to: 10, completedMessage: false, wake: wakes.waker(4)) == .proceed)
        #expect(budget.update(5, from: 0, to: 10, completedMessage: false, wake: wakes.waker(5)) == .pause)
        budget.leave(5, holding: 10)
        budget.leave(4, holding: 10)
        #expect(wakes.take().isEmpty)
        #expect(budget.waitingCount == 0)
    }

    @Test func aConnectionHoldingNothingNeverWaits() {
        let budget = PartialMessageBudget(limit: 10)
        let wakes = Wakes()
        #expect(budget.update(1, from: 0, to: 50, completedMessage: false, wake: wakes.waker(1)) == .proceed)
        #expect(budget.update(2, from: 0, to: 0, completedMessage: true, wake: wakes.waker(2)) == .proceed)
    }

    /// Many threads, each holding part of a message, feed the budget concurrently: every one
    /// completes its messages (no deadlock, no lost wake-up) and the budget ends empty.
    @Test(.timeLimit(.minutes(1))) func concurrentConnectionsAllCompleteAndGiveEverythingBack() async {
        let budget = PartialMessageBudget(limit: 4096)
        await withTaskGroup(of: Void.self) { group in
            for connection in UInt64(1)...16 {
                group.addTask {
                    var held = 0
                    var gate = AsyncStream<Void>.makeStream()
                    for _ in 0..<50 {
                        for step in 1...4 {
                            // Three quarters of a 2 KiB message, then it completes.
                            let next = step < 4 ? step * 512 : 0
                            let verdict = budget.update(connection, from: held, to: next, completedMessage: step == 4,
                                                        wake: { [continuation = gate.continuation] in continuation.yield() })
                            held = next
                            if verdict == .pause {
                                var iterator = gate.stream.makeAsyncIterator()
                                _ = await iterator.next()
                                gate = AsyncStream<Void>.makeStream()
                            }
                        }
                    }
                    budget.leave(connection, holding: held)
                }
            }
        }
        #expect(budget.heldBytes == 0)
        #expect(budget.waitingCount == 0)
    }
}
