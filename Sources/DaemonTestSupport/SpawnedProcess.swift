internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// A long-running child of the test process, started with posix_spawn and reaped with waitpid.
///
/// Not Foundation's `Process`: it watches each child through a socket the child inherits, and
/// when a daemon closes every inherited descriptor at startup (avahi-daemon does), Foundation's
/// one monitor thread blocks in waitpid on the live daemon and no other child's exit is ever
/// noticed again: every later `waitUntilExit()` in the test process hangs.
final class SpawnedProcess: @unchecked Sendable {
    let pid: pid_t
    private var exited = false

    /// Starts `arguments` (looked up in PATH) with stdin from /dev/null and stdout and stderr
    /// appended to `log` (or /dev/null).
    init(_ arguments: [String], log: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        guard status == 0 else {
            throw NetworkLabError.command(arguments.joined(separator: " "), String(cString: strerror(status)))
        }
        self.pid = pid
    }

    var isRunning: Bool {
        guard !exited else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exited = true }
        return !exited
    }

    /// SIGTERM, then SIGKILL when it is still running after `grace` seconds; returns once it is reaped.
    func stop(grace: Double = 3) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        while isRunning, Date() < deadline { usleep(20_000) }
        guard isRunning else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        exited = true
    }
}
