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

/// The lab's command run when a study completes (to send a mail, say): in its own process group, in `/`,
/// with only a fixed PATH, LANG and what completed in its environment (never muevald's own, which may
/// hold the device token or the PostgreSQL URL), its output discarded, and its whole process group killed
/// once it exits or overruns, so that nothing it left in the background outlives it. Nothing waits on a
/// thread for it: Foundation's termination handler says when it ended.
package struct CompletionCommand: Sendable {
    package enum Outcome: Sendable, Equatable {
        case exited(Int32)
        /// Still running after the timeout: SIGTERM to its process group, SIGKILL a second later.
        case killed(after: Double)
        /// Still running when the waiting task was cancelled (muevald stops): killed the same way.
        case stopped
        case cannotStart(String)
    }

    package var command: String
    package var timeout: Double

    package init(command: String, timeout: Double) {
        self.command = command
        self.timeout = timeout
    }

    /// The PATH the command gets: the system's programs, nothing from muevald's environment.
    package static let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    /// Where it runs: nothing there is the lab's or a tester's.
    package static let workingDirectory = "/"

    /// The variables that say what completed. MUEVAL_REPORT is absolute, since the command runs in `/`.
    package static func environment(_ completion: StudyCompletionEvent) -> [String: String] {
        let report = completion.report.isEmpty || completion.report.hasPrefix("/")
            ? completion.report : FileManager.default.currentDirectoryPath + "/" + completion.report
        return ["MUEVAL_STUDY": completion.study, "MUEVAL_REASON": completion.reason.rawValue, "MUEVAL_REPORT": report,
                "MUEVAL_DONE": String(completion.done), "MUEVAL_TARGET": String(completion.target)]
    }

    /// The whole environment of the command: `variables` (`environment(_:)`), PATH, and muevald's LANG.
    package static func minimalEnvironment(_ variables: [String: String],
                                           inherited: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        variables.merging(["PATH": path, "LANG": inherited["LANG"] ?? "C.UTF-8"]) { $1 }
    }

    /// The shell that leads the process group: it runs the lab's command (`$1`) as a child, prints its
    /// exit status on its standard output (muevald's pipe), then kills its own group, itself included.
    /// While the leader lives the group's number is certainly this group's, so that kill never reaches
    /// another; and it names the group by its own pid, so that were it no group's leader the kill would
    /// find no such group rather than muevald's. SIGTERM (the timeout) makes it kill the group at once.
    static let leader = """
        trap 'kill -s KILL -- -$$' TERM
        /bin/sh -c "$1" </dev/null >/dev/null 2>&1
        echo "$?"
        kill -s KILL -- -$$
        """

    /// Runs the command until it exits, overruns, or the calling task is cancelled.
    package func run(environment variables: [String: String]) async -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", Self.leader, "mueval-completion", command]
        process.environment = Self.minimalEnvironment(variables)
        process.currentDirectoryURL = URL(fileURLWithPath: Self.workingDirectory)
        let status = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = status
        process.standardError = FileHandle.nullDevice
        let state = NIOLockedValueBox(Watch())
        return await withTaskCancellationHandler {
            await run(process, status: status, state: state)
        } onCancel: {
            // The watchdog kills at once; one not yet made is cancelled as it is stored.
            state.withLockedValue { state in
                state.cancelled = true
                return state.watchdog
            }?.cancel()
        }
    }

    private func run(_ process: Process, status: Pipe, state: NIOLockedValueBox<Watch>) async -> Outcome {
        await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            process.terminationHandler = { _ in
                let (overran, stopped) = state.withLockedValue { state in
                    state.exited = true
                    state.watchdog?.cancel()
                    return (state.overran, state.stopped)
                }
                // Every writer of the pipe is gone with the group: this read ends at once.
                let printed = String(decoding: status.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                try? status.fileHandleForReading.close()
                if stopped {
                    continuation.resume(returning: .stopped)
                } else if overran {
                    continuation.resume(returning: .killed(after: timeout))
                } else if let code = Int32(printed.trimmingCharacters(in: .whitespacesAndNewlines), radix: 10) {
                    continuation.resume(returning: .exited(code))
                } else {
                    // The leader died before printing (killed from outside): as a shell reports a signal.
                    continuation.resume(returning: .exited(128 + SIGKILL))
                }
            }
            do {
                try process.run()
            } catch {
                continuation.resume(returning: .cannotStart("\(error)"))
                return
            }
            // Foundation closed muevald's end for writing once the child had it: only the group can write now.
            // Foundation starts the child as the leader of its own process group: the group holds what the shell started.
            let group = -process.processIdentifier
            // Cancelled when the command exits, or when the caller is (then it kills at once).
            let watchdog = Task {
                let overran = (try? await Task.sleep(for: .seconds(timeout))) != nil
                // Never a signal once it exited: its process group's number may be another's by now.
                let exited = state.withLockedValue { state in
                    guard !state.exited else { return true }
                    if overran { state.overran = true } else { state.stopped = true }
                    kill(group, SIGTERM)
                    return false
                }
                guard !exited else { return }
                // A second to end on SIGTERM; none when muevald stops.
                if overran { try? await Task.sleep(for: .seconds(1)) }
                state.withLockedValue { state in
                    if !state.exited { kill(group, SIGKILL) }
                }
            }
            state.withLockedValue { state in
                if state.exited || state.cancelled { watchdog.cancel() }
                if !state.exited { state.watchdog = watchdog }
            }
        }
    }
}

/// What the watchdog and the termination handler share: no signal once the process exited.
private struct Watch {
    var exited = false
    var overran = false
    /// The caller was cancelled, and the command killed for it.
    var cancelled = false
    var stopped = false
    var watchdog: Task<Void, Never>?
}
