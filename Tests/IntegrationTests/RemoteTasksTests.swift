import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// Invited testers' phones doing the study's tasks the server sends, against the real muevald: `muevalsim
/// --invitation` plays them in the server's order with the tester's own marks (a task the scenario lacks given up,
/// `--abandon-task` a give-up), `plainnote --invitation` follows them from what the tester types and shows the
/// questionnaire; the study's export counts the marks (docs/STUDIES.md, "The tester's own marks").
final class RemoteTasksTests: XCTestCase {
    static let simulated = "3456ghjkmn", typed = "pqrstuvwxy"

    private func ok(_ daemon: TestDaemon, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let run = try daemon.muevalctl(arguments)
        XCTAssertEqual(run.status, 0, "muevalctl \(arguments.joined(separator: " ")): \(run.stderr)", file: file, line: line)
        return run.stdout
    }

    /// Until the invitation's session stopped (the phone's goodbye ends it).
    private func waitUntilDone(_ catalog: Catalog, _ code: String) async throws {
        try await eventually(timeout: 30, "invitation \(code) done") { try catalog.invitation(code: code)?.status == .done ? true : nil }
    }

    func testInvitedPhonesDoTheStudysTasksWithTheTestersOwnMarks() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        _ = try ok(daemon, ["study", "create", "remote"])
        _ = try ok(daemon, ["study", "iteration", "add", "remote"])
        _ = try ok(daemon, ["study", "task", "add", "remote", "Find a note", "--success", "event:NoteFound"])
        _ = try ok(daemon, ["study", "task", "add", "remote", "Share a note", "--instructions", "Send it to a friend."])
        _ = try ok(daemon, ["study", "task", "add", "remote", "Write a note", "--success", "event:NoteSaved", "--time-limit", "300"])
        let now = Date().timeIntervalSince1970
        let catalog = try Catalog(directory: daemon.dataDirectory)
        try catalog.createInvitations(
            [Invitation(code: Self.simulated, study: "remote", iteration: 1, participant: "TSIMUL", created: now, expires: now + 3600),
             Invitation(code: Self.typed, study: "remote", iteration: 1, participant: "TTYPED", created: now, expires: now + 3600)],
            participants: [Participant(code: "TSIMUL", created: now), Participant(code: "TTYPED", created: now)],
            recruitment: Recruitment(study: "remote", iteration: 1, target: 2, created: now, seed: 1))
        let server = "127.0.0.1:\(daemon.port)"

        // The simulated tester: the server's order, its task the scenario lacks given up, --abandon-task a give-up.
        let sim = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", server, "--invitation", Self.simulated, "--scenario", "plainnote", "--seed", "3", "--rate", "max",
            "--abandon-task", "Write a note",
        ], timeout: 120)
        XCTAssertEqual(sim.status, 0, sim.stdout + sim.stderr)
        XCTAssertTrue(sim.stdout.contains("""
              tasks from the server, in its order:
                1. "Find a note": completed
                2. "Share a note": given up: scenario "plainnote" has no task of that name to play
                3. "Write a note": given up (--abandon-task)
            """), sim.stdout)
        XCTAssertTrue(sim.stdout.contains("questionnaire: http"), sim.stdout)
        try await waitUntilDone(catalog, Self.simulated)

        // plainnote: Find a note begun and done (without finding it), Share a note given up, Write a note skipped.
        let note = try runProcess(TestDaemon.executable("plainnote"), ["--connect", server, "--device-id", "phone-typed",
                                                                      "--invitation", Self.typed],
                                  input: Data("b\ne\nb\nn\ng\ns\n".utf8), timeout: 60)
        XCTAssertEqual(note.status, 0, note.stdout + note.stderr)
        XCTAssertTrue(note.stdout.contains("Task 2 of 3: Share a note\n  Send it to a friend."), note.stdout)
        XCTAssertTrue(note.stdout.contains("Task 3 of 3: Write a note\n  Time limit: 5:00"), note.stdout)
        XCTAssertTrue(note.stdout.contains("Please answer a few questions about the app: http"), note.stdout)
        XCTAssertTrue(note.stdout.contains("/i/\(Self.typed)"), note.stdout)
        try await waitUntilDone(catalog, Self.typed)

        let csv = try ok(daemon, ["study", "export", "remote"])
        let rows = csv.split(separator: "\r\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let header = try XCTUnwrap(rows.first)
        func row(_ participant: String, _ task: String) throws -> [String: String] {
            let found = try XCTUnwrap(rows.first { $0.count == header.count && $0[3] == participant && $0[5] == task }, csv)
            return Dictionary(uniqueKeysWithValues: zip(header, found))
        }
        let found = try row("TSIMUL", "Find a note")
        XCTAssertEqual([found["outcome"], found["marked_by"]], ["success", "tester"], csv)
        for task in ["Share a note", "Write a note"] {
            let gaveUp = try row("TSIMUL", task)
            XCTAssertEqual([gaveUp["outcome"], gaveUp["reason"], gaveUp["marked_by"]], ["abandoned", "gave up", "tester"], "\(task): \(csv)")
        }
        XCTAssertEqual(try row("TTYPED", "Find a note")["reason"], "no custom event NoteFound", csv)
        XCTAssertEqual(try row("TTYPED", "Share a note")["reason"], "gave up", csv)
        XCTAssertEqual(try row("TTYPED", "Write a note")["outcome"], "not attempted", csv)
    }

    func testAWrongInvitationAndSeveralDevicesWithOneAreRefusedClearly() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let wrong = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--invitation", "2222222222", "--scenario", "plainnote", "--seed", "3",
        ], timeout: 60)
        XCTAssertEqual(wrong.status, 1, wrong.stdout + wrong.stderr)
        XCTAssertTrue(wrong.stdout.contains("  invitation: the server refused the invitation: "), wrong.stdout)

        let several = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--invitation", "2222222222", "--devices", "2",
        ], timeout: 60)
        XCTAssertNotEqual(several.status, 0)
        XCTAssertTrue(several.stderr.contains("--invitation is one tester's, single use: it pairs one phone, so leave out --devices 2"),
                      several.stderr)
    }
}
