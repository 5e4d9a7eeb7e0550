public import ControlClient
public import ControlProtocol
public import Foundation
internal import JournalStorage
internal import NIOConcurrencyHelpers
public import SessionModel

/// A real muevald process on a temporary data directory, listening on a free loopback port,
/// for integration tests that read like a user's session:
///
///     let daemon = try await TestDaemon.start()
///     let session = try await daemon.ctl.call(ControlRequest.StartSession())
///     let device = try await daemon.connectDevice()
///
/// The directory is removed and the process killed when the test calls `cleanUp()` (or on deinit).
public final class TestDaemon: @unchecked Sendable {
    public let directory: String
    public let dataDirectory: String
    public let socketPath: String
    public private(set) var port = 0
    public private(set) var process: Process
    private let arguments: [String]
    private let launcher: [String]
    private let listenHost: String
    private let logPath: String

    /// Starts muevald and waits until it accepts control requests and device connections.
    ///
    /// - Parameters:
    ///   - launcher: a command prefix, e.g. `NetworkLab.launcher(on:)` to run it in a namespace.
    ///   - zeroconf: announce over Avahi. Off by default: outside a `NetworkLab` it would reach the real network.
    ///   - dataDirectoryCopy: a data directory to start from (copied), such as one an earlier release made.
    public static func start(arguments: [String] = [], launcher: [String] = [], listenHost: String = "127.0.0.1",
                             zeroconf: Bool = false, dataDirectoryCopy: String? = nil, timeout: Double = 30) async throws -> TestDaemon {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-test-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if let dataDirectoryCopy { try FileManager.default.copyItem(atPath: dataDirectoryCopy, toPath: directory + "/data") }
        // The console on a free port unless the test chooses: muevald's default, 28080, would clash between tests.
        let console = arguments.contains("--no-console") || arguments.contains("--console-listen") ? [] : ["--console-listen", "127.0.0.1:0"]
        let daemon = try TestDaemon(directory: directory, arguments: arguments + console + (zeroconf ? [] : ["--no-zeroconf"]),
                                    launcher: launcher, listenHost: listenHost)
        do {
            try await daemon.waitUntilReady(timeout: timeout)
        } catch {
            daemon.cleanUp()
            throw error
        }
        return daemon
    }

    private init(directory: String, arguments: [String], launcher: [String], listenHost: String) throws {
        self.directory = directory
        dataDirectory = directory + "/data"
        socketPath = directory + "/control.sock"
        logPath = directory + "/muevald.log"
        self.arguments = arguments
        self.launcher = launcher
        self.listenHost = listenHost
        process = try Self.launch(launcher: launcher, dataDirectory: dataDirectory, socketPath: socketPath,
                                  listen: "\(listenHost):0", arguments: arguments, logPath: logPath)
    }

    deinit {
        cleanUp()
    }

    /// The control client for this daemon.
    public var ctl: ControlClient { ControlClient(socketPath: socketPath) }

    /// Path of a sibling executable of the test bundle (`muevald`, `muevalctl`), or `$NAME_PATH`.
    public static func executable(_ name: String) -> String {
        if let override = ProcessInfo.processInfo.environment[name.uppercased() + "_PATH"] { return override }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // On Linux the tests run inside NAME.xctest; on macOS inside a bundle: walk up to the build folder.
        while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(name).path),
              directory.pathComponents.count > 1 {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name).path
    }

    private static func launch(launcher: [String], dataDirectory: String, socketPath: String, listen: String,
                               arguments: [String], logPath: String) throws -> Process {
        let process = Process()
        let command = launcher + [executable("muevald"), "--data-dir", dataDirectory, "--socket", socketPath, "--listen", listen] + arguments
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        var environment = ProcessInfo.processInfo.environment
        environment["JOURNAL_STREAM"] = nil
        process.environment = environment
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = FileHandle(forWritingAtPath: logPath)
        log?.seekToEndOfFile()
        process.standardError = log
        process.standardOutput = log
        try process.run()
        return process
    }

    private func waitUntilReady(timeout: Double) async throws {
        let status = try await eventually(timeout: timeout, "muevald to listen (log: \(log))") { () -> StatusReport? in
            guard self.process.isRunning else { throw TestDaemonError.exited(status: self.process.terminationStatus, log: self.log) }
            guard let status = try? await self.ctl.call(ControlRequest.Status()) else { return nil }
            return status.listen == nil ? nil : status
        }
        port = status.listen?.port ?? 0
    }

    /// A single-use login link to the web console (`muevalctl console`), once the console listens.
    public func consoleLink(timeout: Double = 30) async throws -> ConsoleLink {
        try await eventually(timeout: timeout, "the web console to listen (log: \(log))") {
            try? await self.ctl.call(ControlRequest.ConsoleLogin())
        }
    }

    /// What the daemon logged so far.
    public var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Opens a TCP connection to the daemon, as a device would; from the loopback address `source` when given.
    public func connectDevice(from source: String? = nil) async throws -> TestDevice {
        try await TestDevice.connect(port: port, source: source)
    }

    /// A browser's device at the console's `/capture` (the console must listen: `consoleLink` waits for it).
    public func connectWebDevice(origin: String?) async throws -> TestDevice {
        let url = try await consoleLink().url
        guard let port = URLComponents(string: url)?.port else { throw TestDaemonError.timedOut("a console port in \(url)") }
        return try await TestDevice.connectWebSocket(port: port, origin: origin)
    }

    /// SIGTERM, then waits for the exit; returns the exit status.
    @discardableResult
    public func stop(timeout: Double = 10) async throws -> Int32 {
        try await signal(SIGTERM, timeout: timeout)
    }

    /// SIGKILL: a crash, as far as the daemon's files are concerned.
    public func kill() async throws {
        _ = try await signal(SIGKILL, timeout: 10)
    }

    private func signal(_ signal: Int32, timeout: Double) async throws -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        Foundation.kill(process.processIdentifier, signal)
        let process = process
        try await eventually(timeout: timeout, "muevald to exit after signal \(signal)") { process.isRunning ? nil : true }
        return process.terminationStatus
    }

    /// Starts the daemon again on the same data directory, socket and port.
    public func restart(timeout: Double = 30) async throws {
        if process.isRunning { try await stop() }
        process = try Self.launch(launcher: launcher, dataDirectory: dataDirectory, socketPath: socketPath,
                                  listen: "\(listenHost):\(port)", arguments: arguments, logPath: logPath)
        try await waitUntilReady(timeout: timeout)
    }

    /// Runs muevalctl against this daemon; returns its exit status and output.
    public func muevalctl(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runProcess(Self.executable("muevalctl"), arguments + ["--socket", socketPath])
    }

    /// Kills the daemon if it still runs and removes the directory.
    public func cleanUp() {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

public enum TestDaemonError: Error, CustomStringConvertible {
    case exited(status: Int32, log: String)
    case timedOut(String)

    public var description: String {
        switch self {
        case .exited(let status, let log): "muevald exited with status \(status); its log:\n\(log)"
        case .timedOut(let what): "timed out waiting for \(what)"
        }
    }
}

/// Polls `condition` every 20 ms until it returns a value, or fails after `timeout` seconds.
@discardableResult
public func eventually<T>(timeout: Double = 10, _ what: @autoclosure () -> String,
                          _ condition: () async throws -> T?) async throws -> T {
    let deadline = Date().addingTimeInterval(timeout)
    // The condition is asked once more after each sleep, however late a busy machine ends it.
    while true {
        if let value = try await condition() { return value }
        guard Date() < deadline else { throw TestDaemonError.timedOut(what()) }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Runs a program to completion, capturing its output; kills it when it runs longer than `timeout` seconds
/// (then the status is that of the kill), so a stuck tool fails a test instead of hanging it.
public func runProcess(_ executable: String, _ arguments: [String], input: Data? = nil, environment: [String: String] = [:],
                       timeout: Double = 60) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new } }
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let inputPipe = Pipe()
    process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
    try process.run()
    if let input {
        inputPipe.fileHandleForWriting.write(input)
        try inputPipe.fileHandleForWriting.close()
    }
    let watchdog = DispatchWorkItem { [pid = process.processIdentifier] in kill(pid, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
    // Both pipes are drained at once, so a large output on either cannot block the child.
    let stderrData = LockedData()
    let drained = DispatchGroup()
    DispatchQueue.global().async(group: drained) { stderrData.set(err.fileHandleForReading.readDataToEndOfFile()) }
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    drained.wait()
    process.waitUntilExit()
    watchdog.cancel()
    return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderrData.get(), as: UTF8.self))
}

private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.withLock { data = value } }
    func get() -> Data { lock.withLock { data } }
}

/// A command that keeps running and printing (`muevalctl tail`), read line by line as it prints.
public final class FollowingProcess: @unchecked Sendable {
    public let process: Process
    private let output = NIOLockedValueBox(Data())
    private let errors = NIOLockedValueBox(Data())

    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        out.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            output.withLockedValue { $0.append(data) }
        }
        err.fileHandleForReading.readabilityHandler = { [errors] handle in
            let data = handle.availableData
            errors.withLockedValue { $0.append(data) }
        }
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Complete lines printed so far.
    public var lines: [String] {
        let text = String(decoding: output.withLockedValue { $0 }, as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()  // the part after the last newline is not a line yet
        return lines
    }

    public var stderr: String { String(decoding: errors.withLockedValue { $0 }, as: UTF8.self) }

    public func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the exit and returns the status.
    public func exitStatus(timeout: Double = 10) async throws -> Int32 {
        let process = process
        try await eventually(timeout: timeout, "\(process.arguments?.joined(separator: " ") ?? "") to exit") { process.isRunning ? nil : true }
        return process.terminationStatus
    }
}

extension TestDaemon {
    /// Starts `muevalctl ARGUMENTS` against this daemon without waiting for it to end.
    public func follow(_ arguments: [String], environment: [String: String] = [:]) throws -> FollowingProcess {
        try FollowingProcess(Self.executable("muevalctl"), arguments + ["--socket", socketPath], environment: environment)
    }
}

extension ControlClient {
    /// `events`' pages collected into one array (tests ask for small sessions).
    public func events(_ request: ControlRequest.Events) async throws -> [StoredEvent] {
        var events: [StoredEvent] = []
        _ = try await call(request, onEvents: { events += $0 })
        return events
    }
}
