import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// A recruited study completes itself in the real muevald (issue 32, docs/STUDIES.md "When a study completes"):
/// by its target once two invitations are done, by its deadline when that passed before muevald started; each
/// gets its report, its completion in the catalog and one run of `studies.completion_command`, also across a restart.
/// The invitations are set `done` here, in the catalog, as the invitation pairing does when their session ends.
final class StudyCompletionTests: XCTestCase {
    private func ok(_ daemon: TestDaemon, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let run = try daemon.muevalctl(arguments)
        XCTAssertEqual(run.status, 0, "muevalctl \(arguments.joined(separator: " ")): \(run.stderr)", file: file, line: line)
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A study of one iteration and one task, its testers recruited with invitations.
    private func recruit(_ catalog: Catalog, study: String, testers: [String], target: Int, deadline: Double?) throws {
        let now = Date().timeIntervalSince1970
        _ = try catalog.createStudy(name: study, appId: nil, description: nil, now: now)
        _ = try catalog.addIteration(to: study, number: 1, label: nil, now: now)
        try catalog.addTask(to: study, StudyTask(name: "Open the blog", success: try TaskSuccess("event:BlogOpened")))
        let invitations = testers.enumerated().map { index, tester in
            Invitation(code: Self.code(study, index), study: study, iteration: 1, participant: tester, created: now, expires: now + 3600)
        }
        try catalog.createInvitations(invitations, participants: testers.map { Participant(code: $0, created: now) },
                                      recruitment: Recruitment(study: study, iteration: 1, target: target, deadline: deadline, created: now, seed: 1))
    }

    private static func code(_ study: String, _ index: Int) -> String { "\(study.prefix(4))\(index)" }

    /// What the hook wrote: its MUEVAL_ variables, one a line.
    private func hookRun(_ file: String) -> [String: String]? {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8), text.hasSuffix("END\n") else { return nil }
        return Dictionary(text.split(separator: "\n").compactMap { line in
            line.split(separator: "=", maxSplits: 1).count == 2 ? (String(line.split(separator: "=")[0]), String(line.split(separator: "=", maxSplits: 1)[1])) : nil
        }, uniquingKeysWith: { $1 })
    }

    func testARecruitedStudyCompletesByItsTargetAndAnotherByItsDeadlineOnceEach() async throws {
        let seed = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-completion-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: seed) }
        let hooks = seed + "-hooks"
        try FileManager.default.createDirectory(atPath: hooks, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: hooks) }
        do {
            let catalog = try Catalog(directory: seed + "/data")
            try recruit(catalog, study: "remote", testers: ["TAAAAA", "TBBBBB", "TCCCCC"], target: 2, deadline: Date().timeIntervalSince1970 + 3600)
            try recruit(catalog, study: "overdue", testers: ["TDDDDD"], target: 1, deadline: Date().timeIntervalSince1970 - 60)
        }
        // The hook: its environment, then END, into a file named after the study (a second run would append).
        let config = seed + "/muevald.toml"
        try """
            [studies]
            completion_command = 'env | grep ^MUEVAL_ | sort >> "\(hooks)/$MUEVAL_STUDY"; echo END >> "\(hooks)/$MUEVAL_STUDY"'
            completion_command_timeout = 20
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try await TestDaemon.start(arguments: ["--config", config], dataDirectoryCopy: seed + "/data")
        defer { daemon.cleanUp() }

        // The deadline passed before muevald started: it completes at once, with nobody done.
        let overdue = try await eventually(timeout: 60, "the overdue study's hook (log: \(daemon.log))") { self.hookRun(hooks + "/overdue") }
        XCTAssertEqual(overdue["MUEVAL_REASON"], "deadline")
        XCTAssertEqual(overdue["MUEVAL_DONE"], "0")
        XCTAssertEqual(overdue["MUEVAL_TARGET"], "1")
        XCTAssertEqual(overdue["MUEVAL_REPORT"], daemon.dataDirectory + "/reports/studies/overdue/index.html")
        XCTAssertTrue(FileManager.default.fileExists(atPath: daemon.dataDirectory + "/reports/studies/overdue/index.html"))

        // Two testers record a session each; their invitations are done when the session ends.
        let catalog = try Catalog(directory: daemon.dataDirectory)
        for (index, tester) in ["TAAAAA", "TBBBBB"].enumerated() {
            XCTAssertNil(try catalog.recruitment(study: "remote")?.completed, "completed before \(tester)'s session")
            let id = try ok(daemon, ["start", "--study", "remote", "--iteration", "1", "--participant", tester])
            let run = try runProcess(TestDaemon.executable("muevalsim"), [
                "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "wordpress", "--seed", String(40 + index), "--speed", "40", "--ack-timeout", "20",
            ])
            XCTAssertEqual(run.status, 0, "muevalsim for \(tester): \(run.stderr)")
            try catalog.apply([InvitationTransition(code: Self.code("remote", index), from: [.invited], to: .done, session: Int64(id))])
            _ = try ok(daemon, ["stop", id])
        }
        let remote = try await eventually(timeout: 60, "the remote study's hook (log: \(daemon.log))") { self.hookRun(hooks + "/remote") }
        let report = daemon.dataDirectory + "/reports/studies/remote/index.html"
        XCTAssertEqual(remote, ["MUEVAL_STUDY": "remote", "MUEVAL_REASON": "target", "MUEVAL_REPORT": report,
                                "MUEVAL_DONE": "2", "MUEVAL_TARGET": "2"])
        let html = try String(contentsOfFile: report, encoding: .utf8)
        XCTAssertTrue(html.contains("Study report: remote"), "the study report")
        XCTAssertTrue(html.contains("TAAAAA") && html.contains("TBBBBB"), "both testers' sessions are in it")
        let recorded = try XCTUnwrap(try catalog.recruitment(study: "remote"))
        XCTAssertEqual(recorded.completionReason, .target)
        XCTAssertEqual(recorded.report, report)
        let completed = try XCTUnwrap(recorded.completed)
        XCTAssertTrue(daemon.log.contains("study remote completed by its target: 2 of 2 invitations done"), daemon.log)

        // Across a restart: a study overdue since is completed at the first look, and that look leaves the others be.
        try await daemon.stop()
        try recruit(catalog, study: "later", testers: ["TEEEEE"], target: 1, deadline: Date().timeIntervalSince1970 - 1)
        try await daemon.restart()
        _ = try await eventually(timeout: 60, "the later study's hook (log: \(daemon.log))") { self.hookRun(hooks + "/later") }
        XCTAssertEqual(try catalog.recruitment(study: "remote")?.completed, completed, "completed once")
        for study in ["remote", "overdue"] {
            let runs = try String(contentsOfFile: hooks + "/" + study, encoding: .utf8).components(separatedBy: "END\n").count - 1
            XCTAssertEqual(runs, 1, "the command ran once for \(study)")
        }
    }
}
