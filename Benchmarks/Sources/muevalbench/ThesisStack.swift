import Foundation
import Glibc

/// The thesis-style stack (`Benchmarks/thesis_stack_bench.py` under Debian's /usr/bin/python3: the
/// XML messages read into Python dicts, one SQLite commit per socket read, `synchronous = FULL`),
/// fed by the same sender as muevald, so that the two are measured the same way (issue 41).
final class ThesisStack: ServerUnderTest {
    let port: UInt16
    private let directory: String
    private let process = Process()
    private let output = Pipe()

    init(script: String) throws {
        directory = NSTemporaryDirectory() + "muevalbench-thesis-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try Sockets.freePort()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, "--port", String(port), "--db", directory + "/thesis.sqlite"]
        process.standardOutput = output
        try process.run()
        try waitUntil(seconds: 30, "the thesis stack to listen") {
            guard process.isRunning else { throw BenchError("\(script) exited at start") }
            guard let fd = try? Sockets.connect(port: port) else { return false }
            close(fd)
            return true
        }
    }

    var stats: ProcessStats { ProcessStats(pid: process.processIdentifier) }

    /// Stops the server; its own summary line ("thesis stack: N events stored, …").
    func finish() -> String {
        guard process.isRunning else { return "" }
        process.terminate()
        let summary = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
        return summary.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func stop() { _ = finish() }
}
