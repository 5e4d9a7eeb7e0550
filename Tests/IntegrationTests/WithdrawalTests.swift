import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// A tester's withdrawal in the real muevald finishes (issue 38, docs/STUDIES.md "Withdrawal"): recorded
/// first, a step that fails leaves it pending with the profile and the secret kept, and the next start
/// carries out what is left. The failure is real: the catalog is held locked by another connection, as a
/// long write elsewhere would, so that muevald's writes time out.
final class WithdrawalTests: XCTestCase {
    func testAWithdrawalThatFailsMidwayIsPendingAndTheNextStartFinishesIt() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let consent = daemon.directory + "/consent.txt"
        try "We record your touches and the screen. Withdraw at /withdraw.".write(toFile: consent, atomically: true, encoding: .utf8)
        _ = try daemon.ok(["pool", "configure", "--consent-file", consent, "--field", "language=First language"])
        let leaving = try daemon.json(Enrolment.self, ["pool", "enrol", "language=Esperanto"]).tester.code
        _ = try daemon.ok(["study", "create", "remote"])
        _ = try daemon.ok(["study", "recruit", "remote", "--count", "1"])
        _ = try daemon.ok(["start", "--study", "remote", "--iteration", "1", "--participant", leaving, "--name", "leaving-1"])

        // Another connection holds the catalog's write lock: muevald's first write of the withdrawal times out.
        let holder = try SQLiteDatabase(path: daemon.dataDirectory + "/" + Catalog.fileName)
        try holder.execute("BEGIN IMMEDIATE")
        let run = try daemon.muevalctl(["pool", "withdraw", leaving, "--delete-recordings"])
        XCTAssertEqual(run.status, 1, "pending: exit status 1 (\(run.stdout) \(run.stderr))")
        XCTAssertTrue(run.stdout.contains("withdrawal of tester \(leaving) recorded, not finished"), run.stdout)
        XCTAssertTrue(run.stdout.contains("  pending: withdraw the invitations: "), run.stdout)
        XCTAssertTrue(run.stdout.contains("  profile kept until the rest is done: language=Esperanto"), run.stdout)
        let json = try daemon.muevalctl(["--json", "pool", "withdraw", leaving, "--delete-recordings"])
        let pending = try JSONDecoder().decode(Withdrawal.self, from: Data(json.stdout.utf8))
        XCTAssertFalse(pending.withdrawn)
        XCTAssertEqual(pending.pending.map(\.step), ["withdraw the invitations"])
        XCTAssertEqual(pending.tester.profile, ["language": "Esperanto"], "the profile stays until the rest is done")

        // muevald stops before anyone retries (a crash); the lock goes with the other connection.
        try await daemon.kill()
        try holder.execute("ROLLBACK")
        try await daemon.restart()
        _ = try await eventually(timeout: 60, "the pending withdrawal to finish at start (log: \(daemon.log))") {
            daemon.log.contains("pool: the pending withdrawal of tester \(leaving) finished (1 sessions deleted)") ? true : nil
        }
        XCTAssertTrue(try daemon.refused(["pool", "withdraw", leaving]).contains("no tester \"\(leaving)\" in the pool"))
        let sessions = try daemon.ok(["sessions"])
        XCTAssertFalse(sessions.contains("leaving-1"), sessions)
        let status = try daemon.json(RecruitmentStatus.self, ["study", "status", "remote"])
        XCTAssertEqual(status.invitations.map(\.status), [.withdrawn])
        for name in ["testers.sqlite", "testers.sqlite-wal"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: daemon.dataDirectory + "/" + name))) ?? Data()
            XCTAssertNil(bytes.range(of: Data("Esperanto".utf8)), "\(name) keeps no trace of the withdrawn profile")
        }
    }
}
