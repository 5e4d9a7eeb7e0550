import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// `studies.completion_command` in the real muevald keeps nothing of muevald (issue 38, docs/SECURITY.md
/// "The completion command"): its environment is the documented MUEVAL_ variables, PATH and LANG, though
/// muevald's has its device token and a secret of the lab's; it runs in `/`; and what it leaves running in
/// the background is killed once it exits.
final class CompletionHookTests: XCTestCase {
    func testTheHookGetsAMinimalEnvironmentAndLeavesNothingRunning() async throws {
        let seed = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-hook-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: seed) }
        let output = seed + "/hook"
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        do {
            // A study whose deadline passed: it completes as soon as muevald starts.
            let catalog = try Catalog(directory: seed + "/data")
            let now = Date().timeIntervalSince1970
            _ = try catalog.createStudy(name: "overdue", appId: nil, description: nil, now: now)
            _ = try catalog.addIteration(to: "overdue", number: 1, label: nil, now: now)
            try catalog.createInvitations([Invitation(code: "over0", study: "overdue", iteration: 1, participant: "TDDDDD", created: now, expires: now + 3600)],
                                          participants: [Participant(code: "TDDDDD", created: now)],
                                          recruitment: Recruitment(study: "overdue", iteration: 1, target: 1, deadline: now - 60, created: now, seed: 1))
        }
        let config = seed + "/muevald.toml"
        try """
            [studies]
            completion_command = 'env > "\(output)/env"; pwd > "\(output)/pwd"; sleep 1000 & echo $! > "\(output)/sleep"; echo END > "\(output)/done"'
            completion_command_timeout = 300
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try await TestDaemon.start(arguments: ["--config", config],
                                                launcher: ["MUEVAL_SERVER_DEVICE_TOKEN=device-token-of-the-lab", "LAB_SECRET=not-for-the-hook"],
                                                dataDirectoryCopy: seed + "/data")
        defer { daemon.cleanUp() }
        _ = try await eventually(timeout: 60, "the hook to run (log: \(daemon.log))") {
            FileManager.default.fileExists(atPath: output + "/done") ? true : nil
        }
        let environment = try String(contentsOfFile: output + "/env", encoding: .utf8)
        XCTAssertFalse(environment.contains("device-token-of-the-lab"), environment)
        XCTAssertFalse(environment.contains("LAB_SECRET"), environment)
        let names = Set(environment.split(separator: "\n").compactMap { $0.split(separator: "=").first.map(String.init) })
        // dash adds PWD (and nothing else) of its own.
        XCTAssertEqual(names.subtracting(["PWD"]), ["PATH", "LANG", "MUEVAL_STUDY", "MUEVAL_REASON", "MUEVAL_REPORT", "MUEVAL_DONE", "MUEVAL_TARGET"])
        XCTAssertTrue(environment.contains("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"), environment)
        XCTAssertEqual(try String(contentsOfFile: output + "/pwd", encoding: .utf8), "/\n")

        // The background sleep went with the hook's process group: gone, or a zombie waiting for init.
        let child = try String(contentsOfFile: output + "/sleep", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try await eventually(timeout: 30, "the hook's background sleep \(child) to be killed") { () -> Bool? in
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8) else { return true }
            return stat.contains(") Z ") ? true : nil
        }
        _ = try await eventually(timeout: 30, "the hook's outcome in the log (log: \(daemon.log))") {
            daemon.log.contains("studies.completion_command for study overdue done") ? true : nil
        }
    }
}
