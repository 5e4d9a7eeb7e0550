internal import MuEvalAsync

/// The one alarm of a loop that sets it anew each time it looks (`StudyCompletionService`: the nearest
/// deadline): setting it replaces the delay that runs, nil sets none, and it rings once per setting.
final class Alarm: Sendable {
    private struct Setting {
        var generation: UInt64 = 0
        /// Seconds from when it was set; nil: none.
        var delay: Double?
    }

    private let setting = AsyncCondition(Setting())

    func set(_ seconds: Double?) {
        setting.withState { setting in
            setting.generation += 1
            setting.delay = seconds
        }
    }

    /// Returns true when the alarm rang, false once the waiting task is cancelled.
    func rings() async -> Bool {
        while !Task.isCancelled {
            let current = setting.withState { $0 }
            let reset: Bool
            if let delay = current.delay {
                reset = await setting.wait(until: { $0.generation != current.generation }, timeout: .seconds(delay))
            } else {
                reset = await setting.wait(until: { $0.generation != current.generation })
            }
            guard !Task.isCancelled else { return false }
            if !reset {
                setting.withState { if $0.generation == current.generation { $0.delay = nil } }
                return true
            }
        }
        return false
    }
}
