import Foundation
import Glibc

/// A server under load in its own process: a fresh one per run, so that its peak RSS is that run's.
protocol ServerUnderTest {
    var port: UInt16 { get }
    var stats: ProcessStats { get }
    func stop()
}

/// The real muevald (release build) on a temporary data directory, with its default settings:
/// `synchronous = full` (an fsync per group commit), 8 MB of pending journal per session; its web
/// console (on by default) on a free port instead of 28080.
final class Daemon: ServerUnderTest {
    let port: UInt16
    let consolePort: UInt16
    let socket: String
    let directory: String
    private let process = Process()

    init(executable: String) throws {
        directory = NSTemporaryDirectory() + "muevalbench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try Sockets.freePort()
        consolePort = try Sockets.freePort()
        socket = directory + "/control.sock"
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--data-dir", directory + "/data", "--listen", "127.0.0.1:\(port)",
                             "--socket", socket, "--no-zeroconf", "--console-listen", "127.0.0.1:\(consolePort)"]
        // Defaults only: a MUEVAL_* setting left in the caller's shell must not change the figures.
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MUEVAL_") }
        _ = FileManager.default.createFile(atPath: directory + "/muevald.log", contents: nil)
        let log = FileHandle(forWritingAtPath: directory + "/muevald.log")
        process.standardOutput = log
        process.standardError = log
        try process.run()
        try waitUntil(seconds: 30, "muevald to listen (log: \(directory)/muevald.log)") {
            guard process.isRunning else { throw BenchError("muevald exited at start; see \(directory)/muevald.log") }
            guard let fd = try? Sockets.connectUnix(socket) else { return false }
            close(fd)
            return true
        }
    }

    var stats: ProcessStats { ProcessStats(pid: process.processIdentifier) }

    /// Starts a session for `device`, or that the next device claims; returns its id and file.
    func startSession(name: String, device: String? = nil) throws -> (id: Int64, path: String) {
        var request = ["command": "start", "name": name]
        request["device"] = device
        let result = try ControlRequest.send(socket, request) as? [String: Any]
        guard let id = (result?["id"] as? NSNumber)?.int64Value, let path = result?["path"] as? String else {
            throw BenchError("muevald's start reply has no id or path: \(String(describing: result))")
        }
        return (id, path)
    }

    /// `muevalctl stop SESSION`.
    func stopSession(_ id: Int64) throws {
        _ = try ControlRequest.send(socket, ["command": "stop", "session": String(id)])
    }

    /// A logged-in browser's cookie for the console, from a fresh login link.
    func consoleCookie() throws -> String {
        try waitUntil(seconds: 30, "the web console to listen") {
            guard let fd = try? Sockets.connect(port: consolePort) else { return false }
            close(fd)
            return true
        }
        return try ConsoleHTTP.login(link: try consoleLink(), port: consolePort)
    }

    /// A fresh single-use login link (`muevalctl console --json`'s `url`).
    func consoleLink() throws -> String {
        let link = try ControlRequest.send(socket, ["command": "console"]) as? [String: Any]
        guard let url = link?["url"] as? String else { throw BenchError("muevald's console reply has no url") }
        return url
    }

    /// The daemon's counters (`status`).
    func counters() throws -> [String: Int] {
        let status = try ControlRequest.send(socket, ["command": "status"]) as? [String: Any]
        return (status?["counters"] as? [String: Any] ?? [:]).compactMapValues { ($0 as? NSNumber)?.intValue }
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// The bound: `muevalbench sink`, which accepts connections and reads and discards everything.
final class Sink: ServerUnderTest {
    let port: UInt16
    private let process = Process()

    init() throws {
        port = try Sockets.freePort()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["sink", "--port", String(port)]
        try process.run()
        try waitUntil(seconds: 10, "the sink to listen") {
            guard let fd = try? Sockets.connect(port: port) else { return false }
            close(fd)
            return true
        }
    }

    var stats: ProcessStats { ProcessStats(pid: process.processIdentifier) }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

func waitUntil(seconds: Double, _ what: String, _ condition: () throws -> Bool) throws {
    let deadline = wallClock() + seconds
    while try !condition() {
        guard wallClock() < deadline else { throw BenchError("gave up after \(Int(seconds)) s waiting for \(what)") }
        usleep(20_000)
    }
}
