import ControlProtocol
import DaemonTestSupport
import Foundation
import SessionModel
import XCTest

/// Names of `data` values (screenshots) read from files become file names and URLs: only a SHA-256 in
/// 64 lower-case hex digits is one (docs/SECURITY.md). A crafted session file whose screenshots are
/// named `../../x`, or 64 characters that climb out of the report, writes nothing outside the report
/// folder; an export that names one is not imported.
final class BlobNameTests: XCTestCase {
    private var scratch = ""

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("blobname-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: scratch + "/out", withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// Names that climb from `out/report/shots/` to `out/`: short, and as long as a SHA-256.
    private static let crafted = ["../../x", "../../" + String(repeating: "y", count: 58)]

    private func sqlite(_ path: String, _ sql: String) throws -> String {
        let run = try runProcess("/usr/bin/sqlite3", [path, sql])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testCraftedScreenshotNamesWriteNothingOutsideTheReportAndAreNotImported() async throws {
        let daemon = try await TestDaemon.start(arguments: ["--no-console"])
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "shots"))
        let sim = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "wordpress", "--seed", "5", "--events", "60", "--rate", "max",
        ], timeout: 120)
        XCTAssertEqual(sim.status, 0, sim.stdout + sim.stderr)
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
        let export = scratch + "/shots.jsonl"
        XCTAssertEqual(try daemon.muevalctl(["export", String(session.id), "--format", "jsonl", "-o", export]).status, 0)

        // The session file, with two screenshots renamed in their blob rows and in the payloads naming them.
        let file = scratch + "/crafted.sqlite"
        try FileManager.default.copyItem(atPath: session.path, toPath: file)
        let names = try sqlite(file, "SELECT sha256 FROM blobs ORDER BY sha256 LIMIT 2").split(separator: "\n").map(String.init)
        XCTAssertEqual(names.count, 2, "the simulated session has screenshots")
        for (name, crafted) in zip(names, Self.crafted) {
            _ = try sqlite(file, "UPDATE blobs SET sha256 = '\(crafted)' WHERE sha256 = '\(name)'; UPDATE events SET payload = replace(payload, '\(name)', '\(crafted)')")
        }
        let report = try daemon.muevalctl(["report", file, "--out", scratch + "/out/report"])
        let outside = try FileManager.default.contentsOfDirectory(atPath: scratch + "/out").filter { $0 != "report" }
        XCTAssertEqual(outside, [], "files written beside the report folder")
        XCTAssertEqual(report.status, 1, report.stdout)
        XCTAssertTrue(report.stderr.contains("$data must name a blob by its SHA-256 in 64 lower-case hex digits"), report.stderr)

        // The export with a payload naming such a blob: refused, with where.
        var lines = try String(contentsOfFile: export, encoding: .utf8).components(separatedBy: "\n")
        let index = try XCTUnwrap(lines.firstIndex { $0.contains(names[0]) && $0.contains("\"class\"") })
        lines[index] = lines[index].replacingOccurrences(of: names[0], with: Self.crafted[0])
        try lines.joined(separator: "\n").write(toFile: export, atomically: true, encoding: .utf8)
        let imported = try daemon.muevalctl(["import", export])
        XCTAssertEqual(imported.status, 1, imported.stdout)
        XCTAssertTrue(imported.stderr.contains("shots.jsonl:\(index + 1):") && imported.stderr.contains("$data must name a blob by its SHA-256"), imported.stderr)
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(sessions.map(\.id), [session.id], "the refused import left nothing")
    }
}
