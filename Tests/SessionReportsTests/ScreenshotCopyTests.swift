import Foundation
import Logging
import SessionAnalysisTestSupport
import SessionModel
import SessionReports
import Testing

/// A session report is offered once its page is written, and its screenshots follow into its folder
/// (docs/REPORTS.md, "When a report is ready"): the console is told while they are being written.
@Suite struct ScreenshotCopyTests {
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-shots-\(UUID().uuidString.prefix(8))").path
    private let start = 1_300_000_000.0
    private let images = (0..<40).map { Array("PNG \($0)".utf8) }

    private func session() async throws -> SessionRecord {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let builder = try JournalBuilder(path: directory + "/session-1.sqlite")
        for (index, image) in images.enumerated() {
            builder.viewDidAppear(at: start + Double(index), view: "View\(index)", transition: "push", stack: ["View\(index)"], screenshot: image)
        }
        try await builder.finish()
        return SessionRecord(id: 1, uuid: "u1", name: "s1", state: .stopped, created: 0, path: builder.path)
    }

    private func shots() -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: directory + "/reports/1/default/shots")) ?? [])
    }

    @Test func theScreenshotsFollowThePageAndAFailedCopyLeavesThePage() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = try await session()
        let reports = SessionReports(dataDirectory: directory, logger: Logger(label: "test"))
        #expect(await reports.write(record).value.state == .ready)
        #expect(try await eventually(10) { !reports.copyingScreenshots(of: 1, name: "default") })
        #expect(shots().count == images.count)

        // One image gone from the file: the page is offered all the same, the copy fails after it and ends.
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [record.path, "DELETE FROM blobs WHERE rowid = (SELECT min(rowid) FROM blobs)"]
        try sqlite.run()
        sqlite.waitUntilExit()
        try FileManager.default.removeItem(atPath: directory + "/reports/1/default/shots")
        #expect(await reports.write(record).value.state == .ready)
        #expect(try await eventually(10) { !reports.copyingScreenshots(of: 1, name: "default") })
        #expect(shots().count < images.count)
        #expect(FileManager.default.fileExists(atPath: directory + "/reports/1/default/index.html"))
        // Written again, the report waits for no copy that is over.
        #expect(await reports.write(record).value.state == .ready)
    }
}
