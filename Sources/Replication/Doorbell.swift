internal import NIOConcurrencyHelpers

/// Wakes the replicator when events are committed, so that they reach PostgreSQL within a pass
/// rather than within `interval`. Any number of rings before the next wait count as one.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = NIOLockedValueBox(State())

    func ring() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            defer { state.waiter = nil }
            if state.waiter == nil { state.rung = true }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Returns at the next ring (at once if one came since the last wait), or after `seconds`; true
    /// when a ring ended it.
    @discardableResult
    func wait(upTo seconds: Double) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return false
            }
            group.addTask {
                await self.nextRing()
                return true
            }
            let rung = await group.next() ?? false
            group.cancelAll()
            return rung
        }
    }

    private func nextRing() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLockedValue { state -> Bool in
                    if state.rung || Task.isCancelled {
                        state.rung = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
