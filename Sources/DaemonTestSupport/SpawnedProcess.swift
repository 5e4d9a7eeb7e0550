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
    /// The exit status once reaped: the exit code, or 128 + the signal that ended it (as a shell says).
    private(set) var status: Int32?
    private var exited: Bool { status != nil }

    /// Starts `arguments` (looked up in PATH) with stdin from /dev/null and stdout and stderr
    /// appended to `log` (or /dev/null); with `standardOutput`, stdout is that descriptor and only stderr goes to `log`.
    init(_ arguments: [String], log: String? = nil, standardOutput: Int32? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let standardOutput {
            posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
            posix_spawn_file_actions_addopen(&actions, 2, log ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, log ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
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
        if waitpid(pid, &status, WNOHANG) == pid { record(status) }
        return !exited
    }

    private func record(_ waitStatus: Int32) {
        // WIFEXITED and WEXITSTATUS are macros Swift does not import.
        let signal = waitStatus & 0x7F
        status = signal == 0 ? (waitStatus >> 8) & 0xFF : 128 + signal
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
        record(status)
    }
}

/// What a program did when its reader went away early (`runWithReaderClosingEarly`).
public struct EarlyClosedRun: Sendable {
    /// The exit status, 128 + the signal for a signal death (141 for SIGPIPE); nil when it was still running at the deadline (then killed).
    public let status: Int32?
    public let stderr: String
    /// What the reader read before it closed.
    public let read: [UInt8]
}

/// Runs a program with its standard output into a pipe whose read end is closed after `bytes` bytes were read
/// (0: at once, before the program can write), as `program | head -c N` does; waits up to `timeout` seconds for it to end.
public func runWithReaderClosingEarly(_ arguments: [String], reading bytes: Int, timeout: Double = 10) throws -> EarlyClosedRun {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { throw NetworkLabError.command("pipe", String(cString: strerror(errno))) }
    // Only the child's standard output holds the write end (pipe2 is hidden behind _GNU_SOURCE).
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("stderr-\(UUID().uuidString)").path
    defer { unlink(log) }
    let process: SpawnedProcess
    do {
        process = try SpawnedProcess(arguments, log: log, standardOutput: ends[1])
    } catch {
        close(ends[0])
        close(ends[1])
        throw error
    }
    close(ends[1])
    var read: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    let deadline = Date().addingTimeInterval(timeout)
    while read.count < bytes, Date() < deadline {
        var entry = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 100) > 0 else { continue }
        let count = Glibc.read(ends[0], &buffer, min(buffer.count, bytes - read.count))
        if count <= 0 { break }
        read += buffer[..<count]
    }
    close(ends[0])
    while process.isRunning, Date() < deadline { usleep(10_000) }
    let finished = process.status
    if finished == nil { process.stop(grace: 0) }
    return EarlyClosedRun(status: finished, stderr: (try? String(contentsOfFile: log, encoding: .utf8)) ?? "", read: read)
}
