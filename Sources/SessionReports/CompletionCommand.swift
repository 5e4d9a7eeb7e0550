internal import Foundation
internal import NIOConcurrencyHelpers

/// `studies.completion_command` and its time limit (config/muevald.toml).
package struct StudyCompletionSettings: Sendable, Equatable {
    /// Run by `/bin/sh -c` when a study completes; nil: none.
    package var command: String?
    /// Seconds the command may run before its process group is killed.
    package var timeout: Double = 60

    package init(command: String? = nil, timeout: Double = 60) {
        self.command = command
        self.timeout = timeout
    }
}

/// The lab's command run when a study completes (to send a mail, say): in its own process group, with
/// what completed in its environment, its output discarded, killed when it overruns. Nothing waits on a
/// thread for it: Foundation's termination handler says when it exited.
package struct CompletionCommand: Sendable {
    package enum Outcome: Sendable, Equatable {
        case exited(Int32)
        /// Still running after the timeout: SIGTERM to its process group, SIGKILL a second later.
        case killed(after: Double)
        case cannotStart(String)
    }

    package var command: String
    package var timeout: Double

    package init(command: String, timeout: Double) {
        self.command = command
        self.timeout = timeout
    }

    /// The variables the command gets besides muevald's own environment.
    package static func environment(_ completion: StudyCompletionEvent) -> [String: String] {
        ["MUEVAL_STUDY": completion.study, "MUEVAL_REASON": completion.reason.rawValue, "MUEVAL_REPORT": completion.report,
         "MUEVAL_DONE": String(completion.done), "MUEVAL_TARGET": String(completion.target)]
    }

    package func run(environment extra: [String: String]) async -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let state = NIOLockedValueBox(Watch())
        return await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            process.terminationHandler = { process in
                let overran = state.withLockedValue { state in
                    state.exited = true
                    state.watchdog?.cancel()
                    return state.overran
                }
                continuation.resume(returning: overran ? .killed(after: timeout) : .exited(process.terminationStatus))
            }
            do {
                try process.run()
            } catch {
                continuation.resume(returning: .cannotStart("\(error)"))
                return
            }
            // Foundation starts the child as the leader of its own process group: the group holds what the shell started.
            let group = -process.processIdentifier
            let watchdog = Task {
                guard (try? await Task.sleep(for: .seconds(timeout))) != nil else { return }
                // Never a signal once it exited: its process group's number may be another's by now.
                state.withLockedValue { state in
                    guard !state.exited else { return }
                    state.overran = true
                    kill(group, SIGTERM)
                }
                guard (try? await Task.sleep(for: .seconds(1))) != nil else { return }
                state.withLockedValue { state in
                    if !state.exited { kill(group, SIGKILL) }
                }
            }
            state.withLockedValue { state in
                if state.exited { watchdog.cancel() } else { state.watchdog = watchdog }
            }
        }
    }
}

/// What the watchdog and the termination handler share: no signal once the process exited.
private struct Watch {
    var exited = false
    var overran = false
    var watchdog: Task<Void, Never>?
}
