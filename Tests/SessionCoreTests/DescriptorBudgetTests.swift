@testable import SessionCore
import SessionModel
import Testing

/// The descriptor budget and its admission, without sockets: caps clamped, refusals at the caps,
/// the silent connection of longest standing named to make room near the budget, never twice.
@Suite struct DescriptorBudgetTests {
    @Test func capsAreClampedToWhatTheLimitLeavesAfterTheReserve() {
        let budget = DescriptorBudget(limit: 1024, reserve: 256, capture: 4096, console: 512)
        #expect(budget.connections == 768)
        #expect(budget.capture == 768)
        #expect(budget.console == 512)
        #expect(budget.clamped == ["server.max_connections 4096 → 768"])
        #expect(budget.evictFrom == 720)
        #expect(DescriptorBudget(limit: 100, reserve: 256, capture: 10, console: 10).connections == 0)
    }

    @Test func eachServerMeetsItsOwnCap() {
        var admission = ConnectionAdmission(budget: DescriptorBudget(limit: 1000, reserve: 0, capture: 2, console: 1))
        guard case .admit = admission.open(.capture), case .admit = admission.open(.capture), case .admit = admission.open(.console) else {
            Issue.record("the first connections are admitted")
            return
        }
        guard case .refuse(let reason, nil) = admission.open(.capture) else {
            Issue.record("a third device connection is refused")
            return
        }
        #expect(reason.message.contains("server.max_connections"))
        #expect(reason.reason == .deviceConnections)
        guard case .refuse(let console, nil) = admission.open(.console) else {
            Issue.record("a second console connection is refused")
            return
        }
        #expect(console.message.contains("console.max_connections"))
        #expect(console.reason == .consoleConnections)
        #expect(admission.refused == 2)
    }

    @Test func nearTheBudgetTheOldestSilentConnectionMakesRoomAndSpeakersStay() {
        // 32 connections, room made from the 31st on.
        var admission = ConnectionAdmission(budget: DescriptorBudget(limit: 32, reserve: 0, capture: 100, console: 100))
        var ids: [ConnectionAdmission.ID] = []
        for _ in 0..<30 {
            guard case .admit(let id, nil) = admission.open(.capture) else {
                Issue.record("admitted without eviction below the mark")
                return
            }
            ids.append(id)
        }
        // The first two spoke: the third is the oldest silent one.
        admission.became(ids[0], .captureDevice)
        admission.became(ids[1], .captureDevice)
        guard case .admit(_, let evict) = admission.open(.console) else {
            Issue.record("admitted near the budget")
            return
        }
        #expect(evict == ids[2])
        guard case .admit(_, let next) = admission.open(.capture) else {
            Issue.record("admitted near the budget")
            return
        }
        // Named once: the next eviction takes the next oldest, although the first has not closed yet.
        #expect(next == ids[3])
        #expect(admission.evicted == 2)
        admission.closed(ids[2])
        admission.closed(ids[3])
        #expect(admission.open == 30)
        #expect(admission.count(.captureDevice) == 2)
        #expect(admission.count(.capturePending) == 27)
        #expect(admission.count(.consolePending) == 1)
    }

    @Test func atTheBudgetWithOnlySpeakersLeftConnectionsAreRefused() {
        var admission = ConnectionAdmission(budget: DescriptorBudget(limit: 4, reserve: 0, capture: 100, console: 100))
        for _ in 0..<4 {
            guard case .admit(let id, nil) = admission.open(.capture) else {
                Issue.record("admitted: nobody is silent to make room for it")
                return
            }
            admission.became(id, .captureDevice)
        }
        guard case .refuse(let reason, nil) = admission.open(.console) else {
            Issue.record("refused at the budget")
            return
        }
        #expect(reason.message.contains("budget of 4 connections"))
        #expect(reason.reason == .descriptorBudget && reason.retryAfter == Refusal.capRetryAfter)
    }

    @Test func aNamedConnectionThatSpeaksAfterwardsStaysPendingUntilItCloses() {
        var admission = ConnectionAdmission(budget: DescriptorBudget(limit: 2, reserve: 0, capture: 100, console: 100))
        guard case .admit(let first, nil) = admission.open(.capture), case .admit(_, let evict) = admission.open(.capture) else {
            Issue.record("admitted")
            return
        }
        #expect(evict == first)
        admission.became(first, .captureDevice)
        #expect(admission.count(.captureDevice) == 0)
        admission.closed(first)
        #expect(admission.count(.capturePending) == 1)
    }

    @Test func upgradesStayWithinTheirServerAndTheBookkeepingStaysSmall() {
        var admission = ConnectionAdmission(budget: DescriptorBudget(limit: 100_000, reserve: 0, capture: 100_000, console: 100_000))
        guard case .admit(let console, nil) = admission.open(.console) else { return }
        admission.became(console, .consoleHTTP)
        admission.became(console, .consoleWebSocket)
        admission.became(console, .captureDevice)
        #expect(admission.count(.consoleWebSocket) == 1)
        #expect(admission.count(.captureDevice) == 0)
        // Many connections that spoke and closed leave no eviction order behind.
        for _ in 0..<10_000 {
            guard case .admit(let id, nil) = admission.open(.capture) else { return }
            admission.became(id, .captureDevice)
            admission.closed(id)
        }
        #expect(admission.open == 1)
        #expect(admission.count(.captureDevice) == 0)
    }
}
