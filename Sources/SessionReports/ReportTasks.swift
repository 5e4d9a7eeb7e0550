internal import MuEvalAsync
internal import NIOConcurrencyHelpers
package import ReportCritique

/// The reports being written, by key (a session's report, a study's): never two tasks writing one report's
/// folder at once. A task is the registry's, not its requester's: a page that asked and went away, or a
/// service that stopped waiting at shutdown, leaves it to finish (its analysis cannot be interrupted).
package final class ReportTasks<Key: Hashable & Sendable>: Sendable {
    private struct Running {
        var tasks: [Key: (id: UInt64, task: Task<ReportState, Never>)] = [:]
        var lastID: UInt64 = 0
    }

    private let running = AsyncCondition(Running())

    package init() {}

    package func isRunning(_ key: Key) -> Bool {
        running.withState { $0.tasks[key] != nil }
    }

    /// The task writing `key`: the one that runs, or else `body` in a new one. A task leaves the registry once
    /// `body` returned and then tells `done`, so that whoever hears of it finds it no longer running.
    package func join(_ key: Key, _ body: @escaping @Sendable () async -> ReportState,
                      done: @escaping @Sendable (ReportState) -> Void = { _ in }) -> Task<ReportState, Never> {
        running.withState { running in
            if let current = running.tasks[key] { return current.task }
            return start(key, in: &running, body, done: done).task
        }
    }

    /// Writes `key` anew: `body` in a new task once no other writes it (one that runs may have read what it
    /// writes before the caller's change), and its outcome; nil when the waiting task is cancelled first.
    package func next(_ key: Key, _ body: @escaping @Sendable () async -> ReportState,
                      done: @escaping @Sendable (ReportState) -> Void = { _ in }) async -> ReportState? {
        let mine = NIOLockedValueBox<(id: UInt64, task: Task<ReportState, Never>)?>(nil)
        // Started by the condition itself, under the lock, the moment the key is free: nobody slips in between.
        guard await running.wait(until: { [self] running in
            guard running.tasks[key] == nil else { return false }
            let started = start(key, in: &running, body, done: done)
            mine.withLockedValue { $0 = started }
            return true
        }), let (id, task) = mine.withLockedValue({ $0 }) else { return nil }
        // Its outcome is there once it left the registry; until then the wait can be cancelled.
        guard await running.wait(until: { $0.tasks[key]?.id != id }) else { return nil }
        return await task.value
    }

    private func start(_ key: Key, in running: inout Running, _ body: @escaping @Sendable () async -> ReportState,
                       done: @escaping @Sendable (ReportState) -> Void) -> (id: UInt64, task: Task<ReportState, Never>) {
        running.lastID += 1
        let id = running.lastID
        let task = Task { [self] in
            let result = await body()
            self.running.withState { running in
                if running.tasks[key]?.id == id { running.tasks[key] = nil }
            }
            done(result)
            return result
        }
        running.tasks[key] = (id, task)
        return (id, task)
    }
}
