internal import MuEvalAsync

/// Wakes the replicator when events are committed, so that they reach PostgreSQL within a pass
/// rather than within `interval`. Any number of rings before the next wait count as one.
final class Doorbell: Sendable {
    private let rung = AsyncCondition(false)

    func ring() {
        rung.withState { $0 = true }
    }

    /// Returns at the next ring (at once if one came since the last wait), or after `seconds`; true
    /// when a ring ended it.
    @discardableResult
    func wait(upTo seconds: Double) async -> Bool {
        // The wait takes the ring, so that the next wait waits for a new one.
        await rung.wait(until: { rung in
            defer { rung = false }
            return rung
        }, timeout: .seconds(seconds))
    }
}
