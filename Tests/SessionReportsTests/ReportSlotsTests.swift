import Foundation
import NIOConcurrencyHelpers
@testable import SessionReports
import Testing

/// At most `reports.max_concurrent` reports at once, the rest in order, beyond `reports.max_queued` refused
/// (issue 38): the decisions as values, then the slots with real tasks (no sockets, no reports).
@Suite struct ReportSlotsTests {
    @Test func turnsRunWaitInOrderAndRefuseBeyondTheQueue() {
        var turns = ReportTurns(limits: ReportLimits(maxConcurrent: 2, maxQueued: 2))
        #expect(turns.arrive(0) == .run)
        #expect(turns.arrive(1) == .run)
        #expect(turns.arrive(2) == .wait)
        #expect(turns.arrive(3) == .wait)
        #expect(turns.arrive(4) == .refuse, "two wait already")
        #expect(turns.arrive(5, unbounded: true) == .wait, "a study's report waits however many wait")
        #expect(turns.leave() == 2, "the first to wait runs first, in the turn just freed")
        #expect(turns.running == 2 && turns.waiting == [3, 5])
        #expect(turns.leave() == 3)
        #expect(turns.leave() == 5)
        #expect(turns.leave() == nil && turns.running == 1)
        #expect(turns.arrive(6) == .run)
        #expect(turns.leave() == nil && turns.leave() == nil && turns.running == 0)
    }

    @Test func aNewcomerNeverOvertakesTheWaiting() {
        var turns = ReportTurns(limits: ReportLimits(maxConcurrent: 1, maxQueued: 4))
        #expect(turns.arrive(0) == .run)
        #expect(turns.arrive(1) == .wait)
        // The turn is handed to 1, not freed: a report arriving now waits behind it.
        #expect(turns.leave() == 1)
        #expect(turns.arrive(2) == .wait)
    }

    @Test func slotsRunAtMostTheLimitAtOnceAndRefuseTheOverflow() async throws {
        let limits = ReportLimits(maxConcurrent: 2, maxQueued: 3)
        let slots = ReportSlots(limits: limits)
        let gate = Gate()
        let busy = NIOLockedValueBox((now: 0, most: 0, order: [Int]()))
        var reports: [Task<Result<Int, any Error>, Never>] = []
        for index in 0..<6 {
            reports.append(Task {
                do {
                    return .success(try await slots.run {
                        busy.withLockedValue { $0.now += 1; $0.most = max($0.most, $0.now); $0.order.append(index) }
                        await gate.wait()
                        busy.withLockedValue { $0.now -= 1 }
                        return index
                    })
                } catch {
                    return .failure(error)
                }
            })
            // One at a time, so that the order of arrival is the order of the loop.
            #expect(try await eventually(10) { slots.load.running + slots.load.waiting == min(index + 1, 5) || index == 5 })
        }
        #expect(try await eventually(10) { busy.withLockedValue { $0.now } == 2 })
        #expect(slots.load.running == 2 && slots.load.waiting == 3)
        gate.open()
        var refused = 0
        for report in reports {
            if case .failure(let error) = await report.value {
                #expect(error as? ReportQueueFull == ReportQueueFull(limits: limits))
                refused += 1
            }
        }
        #expect(refused == 1)
        #expect(busy.withLockedValue { $0.most } == 2)
        #expect(Set(busy.withLockedValue { $0.order }) == [0, 1, 2, 3, 4], "the sixth is refused: two ran, three waited")
        #expect(slots.load.running == 0 && slots.load.waiting == 0)
        #expect(ReportQueueFull(limits: limits).description.contains("reports.max_queued"))
    }
}

/// Holds every report until opened.
private final class Gate: Sendable {
    private let state = NIOLockedValueBox((open: false, waiting: [CheckedContinuation<Void, Never>]()))

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLockedValue { state in
                if !state.open { state.waiting.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        for continuation in state.withLockedValue({ state in defer { state.waiting = [] }; state.open = true; return state.waiting }) {
            continuation.resume()
        }
    }
}
