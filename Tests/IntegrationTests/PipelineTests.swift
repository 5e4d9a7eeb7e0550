import ControlClient
import ControlProtocol
import MuEvalWire
import SessionModel
import DaemonTestSupport
import Foundation
import JournalStorage
import OrderedCollections
import WireProtocol
import XCTest

/// muevalctl in shell pipelines: when its reader goes away (`muevalctl export demo | head -c 100`), every
/// command ends at once and quietly, as a Unix tool does, and the daemon lets go of the request.
final class PipelineTests: XCTestCase {
    private var daemon: TestDaemon!

    override func setUp() async throws {
        daemon = try await TestDaemon.start()
    }

    override func tearDown() {
        daemon?.cleanUp()
    }

    private var muevalctl: String { TestDaemon.executable("muevalctl") }

    /// A session "demo" whose device sent `count` events, in a few large writes.
    private func recordDemo(events count: Int) async throws -> TestDevice {
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "demo", user: "Jill"))
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "iphone-demo", device: DeviceDescription(name: "Jill's iPhone")))
        var bytes: [UInt8] = []
        for seq in 1...count {
            bytes += WireEncoder.event(["class": .string("UserInputEvent"), "seq": .integer(Int64(seq)),
                                        "timestamp": .real(1_700_000_000 + Double(seq) / 100), "x": .integer(Int64(seq % 320)),
                                        "y": .integer(Int64(seq % 480)), "view": .string("PostsViewController")])
        }
        try await device.send(bytes)
        try await device.waitForAck(Int64(count), timeout: 30)
        return device
    }

    /// Runs `muevalctl ARGUMENTS --socket …` into a pipe closed after `bytes` bytes; asserts that it ended
    /// at once with status 0 or 141 and nothing on stderr.
    private func assertEndsQuietly(_ arguments: [String], reading bytes: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let command = "muevalctl " + arguments.joined(separator: " ")
        let run = try runWithReaderClosingEarly([muevalctl] + arguments + ["--socket", daemon.socketPath], reading: bytes)
        XCTAssertEqual(run.read.count, bytes, "\(command) wrote less than the reader read", file: file, line: line)
        guard let status = run.status else {
            return XCTFail("\(command) still ran 10 s after its reader went away", file: file, line: line)
        }
        XCTAssertTrue(status == 0 || status == 141, "\(command) ended with status \(status): \(run.stderr)", file: file, line: line)
        XCTAssertEqual(run.stderr, "", "\(command) must end quietly", file: file, line: line)
    }

    private func tails() async throws -> Int {
        try await daemon.ctl.call(ControlRequest.Status()).tails
    }

    func testEveryWritingCommandEndsQuietlyWhenItsReaderGoesAway() async throws {
        let device = try await recordDemo(events: 3000)

        // Long outputs: the reader takes a little and leaves while the command is writing.
        for arguments in [["export", "demo", "--format", "jsonl"], ["export", "demo"], ["export", "demo", "--format", "plist"],
                          ["events", "demo", "--limit", "0", "--json"], ["events", "demo", "--limit", "0"],
                          ["tail", "demo", "--since", "3000"], ["tail", "demo", "--since", "3000", "--json"]] {
            try assertEndsQuietly(arguments, reading: 100)
        }
        // Short outputs: the reader is gone before the command writes its first byte.
        let report = daemon.directory + "/report"
        for arguments in [["status"], ["status", "--json"], ["sessions"], ["sessions", "--json"], ["devices"], ["devices", "--json"],
                          ["events", "demo", "--limit", "3"], ["start", "--name", "other"], ["stop", "other"], ["delete", "other"],
                          ["report", "demo", "--out", report], ["report", "demo", "--out", report, "--json"], ["--help"], ["tail", "--help"]] {
            try assertEndsQuietly(arguments, reading: 0)
        }
        // What the closed pipe cut short was carried out all the same.
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(sessions.map(\.name), ["demo"], "start, stop and delete ran")
        XCTAssertTrue(FileManager.default.fileExists(atPath: report + "/index.html"))
        let followers = try await tails()
        XCTAssertEqual(followers, 0)
        await device.close()
    }

    func testReportConfigCommandsEndQuietlyWhenTheirReaderGoesAway() throws {
        let env = ["/usr/bin/env", "XDG_CONFIG_HOME=\(daemon.directory)/config", muevalctl]
        for (arguments, bytes) in [(["report-config", "save", "lab", "--sections", "overview,timeline"], 0), (["report-config", "list"], 0),
                                   (["report-config", "show", "lab"], 5), (["report-config", "list", "--json"], 0)] {
            let run = try runWithReaderClosingEarly(env + arguments, reading: bytes)
            XCTAssertTrue(run.status == 0 || run.status == 141, "\(arguments) ended with \(String(describing: run.status)): \(run.stderr)")
            XCTAssertEqual(run.stderr, "", "\(arguments)")
        }
        let list = try runProcess("/usr/bin/env", Array(env.dropFirst()) + ["report-config", "list"])
        XCTAssertEqual(list.stdout, "lab\n", "save ran though nobody read what it said")
    }

    /// `tail demo | head -1` with nothing more to show: the tail still ends as soon as head does, and the
    /// daemon's side of the request is released.
    func testAFollowingTailWithNothingToShowEndsWhenItsReaderGoesAway() async throws {
        let device = try await recordDemo(events: 5)
        for arguments in [["tail", "demo", "--since", "1"], ["tail", "--all", "--json"], ["top"], ["status", "--watch", "--json"]] {
            let started = Date()
            try assertEndsQuietly(arguments, reading: arguments.contains("--all") ? 0 : 10)
            XCTAssertLessThan(Date().timeIntervalSince(started), 5, "\(arguments) took long to notice")
            try await eventually(timeout: 5, "the daemon to release \(arguments)") { try await self.tails() == 0 ? true : nil }
        }
        // The same through a real shell pipeline, which ends only when the tail does (its stderr goes to a
        // file: a tail that never ended would otherwise hold the pipe this test reads stderr from).
        let errors = daemon.directory + "/tail.err"
        let shell = try runProcess("/bin/sh", ["-c", "'\(muevalctl)' tail demo --since 1 --socket '\(daemon.socketPath)' 2>'\(errors)' | head -1"],
                                   timeout: 10)
        XCTAssertEqual(shell.status, 0, "the pipeline did not end by itself: \(shell.stderr)")
        XCTAssertTrue(shell.stdout.contains("UserInputEvent"), shell.stdout)
        XCTAssertEqual(try String(contentsOfFile: errors, encoding: .utf8), "")
        try await eventually(timeout: 5, "the daemon to release the shell's tail") { try await self.tails() == 0 ? true : nil }
        await device.close()
    }

    /// A pipe whose reader stays while events flow is not cut short: the tail delivers them.
    func testATailWhoseReaderStaysGoesOn() async throws {
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "demo"))
        let tail = try daemon.follow(["tail", "demo", "--json"])
        try await eventually("the tail to follow") { try await self.tails() == 1 ? true : nil }
        let device = try await daemon.connectDevice()
        try await device.event(["class": .string("CustomEvent"), "seq": .integer(1), "name": .string("after a pause")])
        try await eventually("the event in the tail") { tail.lines.contains { $0.contains("after a pause") } ? true : nil }
        XCTAssertTrue(tail.process.isRunning)
        tail.signal(SIGINT)
        let status = try await tail.exitStatus()
        XCTAssertEqual(status, 0)
        await device.close()
    }
}
