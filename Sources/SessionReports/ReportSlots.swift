internal import NIOConcurrencyHelpers

/// `reports.max_concurrent` and `reports.max_queued` (config/muevald.toml).
package struct ReportLimits: Sendable, Equatable {
    /// Reports written at once (each may run a face scan); the rest wait their turn.
    package var maxConcurrent = 2
    /// Reports waiting for a turn; one more is refused (its state says why), never silently dropped.
    package var maxQueued = 64

    package init(maxConcurrent: Int = 2, maxQueued: Int = 64) {
        self.maxConcurrent = maxConcurrent
        self.maxQueued = maxQueued
    }
}

/// Why a report was not written: too many were waiting already.
package struct ReportQueueFull: Error, Equatable, CustomStringConvertible {
    package var limits: ReportLimits

    package var description: String {
        "\(limits.maxConcurrent) reports are being written and \(limits.maxQueued) more wait (reports.max_concurrent, reports.max_queued): "
            + "this one was refused; ask for it again once they are done"
    }
}

/// Who runs next, as a value: the turns taken, the waiters in order of arrival, and what each call
/// decides. `ReportSlots` does what it says.
package struct ReportTurns: Sendable, Equatable {
    package enum Arrival: Sendable, Equatable { case run, wait, refuse }

    package let limits: ReportLimits
    package private(set) var running = 0
    package private(set) var waiting: [UInt64] = []

    package init(limits: ReportLimits) {
        self.limits = limits
    }

    /// A report asks for a turn. `unbounded`: it waits however many wait already (a study's report at its
    /// completion, at most one per study), yet still takes its turn in order.
    package mutating func arrive(_ id: UInt64, unbounded: Bool = false) -> Arrival {
        if running < max(limits.maxConcurrent, 1), waiting.isEmpty {
            running += 1
            return .run
        }
        guard unbounded || waiting.count < limits.maxQueued else { return .refuse }
        waiting.append(id)
        return .wait
    }

    /// A report finished: the next waiter, which takes over its turn; nil when none waits.
    package mutating func leave() -> UInt64? {
        guard !waiting.isEmpty else {
            running -= 1
            return nil
        }
        return waiting.removeFirst()
    }
}

/// At most `reports.max_concurrent` reports (session reports, automatic or asked for, and a study's at
/// its completion) are written at once, the others wait in order of arrival, and beyond
/// `reports.max_queued` waiting one is refused with `ReportQueueFull`. A stranger who opens and closes
/// many sessions under the automatic report starts no more analyses, nor face scans, than that.
package final class ReportSlots: Sendable {
    private let state: NIOLockedValueBox<(turns: ReportTurns, next: UInt64, waiters: [UInt64: CheckedContinuation<Void, Never>])>

    package init(limits: ReportLimits) {
        state = NIOLockedValueBox((ReportTurns(limits: limits), 0, [:]))
    }

    /// Reports being written and waiting now.
    package var load: (running: Int, waiting: Int) {
        state.withLockedValue { ($0.turns.running, $0.turns.waiting.count) }
    }

    /// Runs `body` in a turn of its own, after those that arrived before it.
    package func run<T: Sendable>(unbounded: Bool = false, _ body: () async throws -> T) async throws -> T {
        try await take(unbounded: unbounded)
        defer { handOver() }
        return try await body()
    }

    private func take(unbounded: Bool) async throws {
        let (arrival, id, limits) = state.withLockedValue { state in
            defer { state.next += 1 }
            return (state.turns.arrive(state.next, unbounded: unbounded), state.next, state.turns.limits)
        }
        switch arrival {
        case .run:
            return
        case .refuse:
            throw ReportQueueFull(limits: limits)
        case .wait:
            // The continuation is stored under the lock before anyone can hand this id its turn: `handOver`
            // resumes it only once it is there.
            await withCheckedContinuation { continuation in
                let ready = state.withLockedValue { state in
                    if !state.turns.waiting.contains(id) { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    private func handOver() {
        let next = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard let id = state.turns.leave() else { return nil }
            guard let continuation = state.waiters.removeValue(forKey: id) else {
                // Its turn came before it stored its continuation: it finds itself off the list and runs.
                return nil
            }
            return continuation
        }
        next?.resume()
    }
}
