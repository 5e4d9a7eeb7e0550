import MuEvalAsync
import Testing

/// Polls `check` until it holds or `seconds` pass: for conditions a test cannot await directly.
private func eventually(within seconds: Double = 5, _ check: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if check() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return check()
}

/// A doorbell: rings before a wait count as one, and a wait takes the ring.
private func takeRing(_ rung: inout Bool) -> Bool {
    defer { rung = false }
    return rung
}

@Suite struct AsyncConditionTests {
    @Test func returnsAtOnceWhenTheConditionHolds() async {
        let condition = AsyncCondition(3)
        #expect(await condition.wait { $0 == 3 })
    }

    @Test func returnsAfterTheChangeThatMakesItHold() async {
        let gate = AsyncCondition(Set(["capture", "control"]))
        let waiter = Task { await gate.wait { $0.isEmpty } }
        gate.withState { _ = $0.remove("capture") }
        gate.withState { _ = $0.remove("control") }
        #expect(await waiter.value)
    }

    @Test func aLatchReleasesEveryWaiter() async {
        let fired = AsyncCondition(false)
        let waiters = (0..<5).map { _ in Task { await fired.wait { $0 } } }
        fired.withState { $0 = true }
        for waiter in waiters { #expect(await waiter.value) }
    }

    @Test func aConsumingConditionLetsOneWaiterThroughPerRing() async {
        let bell = AsyncCondition(false)
        let first = Task { await bell.wait(until: takeRing) }
        let second = Task { await bell.wait(until: takeRing) }
        // Both wait (neither can have taken a ring) before the first ring.
        bell.withState { $0 = true }
        let one = await eventually { bell.withState { !$0 } }
        #expect(one)
        bell.withState { $0 = true }
        #expect(await first.value)
        #expect(await second.value)
        #expect(bell.withState { $0 } == false)
    }

    @Test func ringsBeforeTheWaitCountAsOne() async {
        let bell = AsyncCondition(false)
        bell.withState { $0 = true }
        bell.withState { $0 = true }
        #expect(await bell.wait(until: takeRing))
        #expect(await bell.wait(until: takeRing, timeout: .milliseconds(20)) == false)
    }

    @Test func cancellingAWaitingTaskResumesItWithFalse() async {
        let never = AsyncCondition(false)
        let waiter = Task { await never.wait { $0 } }
        // Cancels it while it waits as well as, in some runs, before it registered: both end the wait.
        try? await Task.sleep(for: .milliseconds(10))
        waiter.cancel()
        #expect(await waiter.value == false)
    }

    @Test func aTaskCancelledBeforeItWaitsDoesNotWait() async {
        let never = AsyncCondition(false)
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await never.wait { $0 }
        }
        #expect(await waiter.value == false)
    }

    @Test func aCancelledWaiterIsRemoved() async {
        let state = AsyncCondition(0)
        let cancelled = Task { await state.wait { $0 == 1 } }
        try? await Task.sleep(for: .milliseconds(10))
        cancelled.cancel()
        #expect(await cancelled.value == false)
        // Its condition would take the next ring if it were still registered.
        let remaining = Task { await state.wait { value in defer { value = 0 }; return value == 1 } }
        state.withState { $0 = 1 }
        #expect(await remaining.value)
    }

    @Test func aTimeoutEndsTheWaitWithFalse() async {
        let never = AsyncCondition(false)
        let start = ContinuousClock.now
        #expect(await never.wait(until: { $0 }, timeout: .milliseconds(30)) == false)
        #expect(ContinuousClock.now - start >= .milliseconds(30))
    }

    @Test func aWaitWithATimeoutStillSeesTheChange() async {
        let bell = AsyncCondition(false)
        let waiter = Task { await bell.wait(until: takeRing, timeout: .seconds(30)) }
        bell.withState { $0 = true }
        #expect(await waiter.value)
    }

    @Test func withStateReturnsTheBodysResult() {
        let counter = AsyncCondition(41)
        #expect(counter.withState { value -> Int in value += 1; return value } == 42)
    }
}
