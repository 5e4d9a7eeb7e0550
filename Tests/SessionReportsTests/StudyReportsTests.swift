import Foundation
import Logging
import ReportCritique
import SessionCore
@testable import SessionReports
import Testing

/// One folder of study reports (issue 39): the old `reports/study-NAME` folders move into `reports/studies/NAME`
/// at start, the newer report kept where both hold one; and the fan-out and task registry the runners share.
@Suite struct StudyReportsTests {
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-study-reports-\(UUID().uuidString.prefix(8))").path

    /// Writes a report's index.html saying `text`, written at `time` (seconds since 1970).
    private func report(_ folder: String, _ text: String, at time: Double) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try text.write(toFile: folder + "/index.html", atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: time)], ofItemAtPath: folder + "/index.html")
    }

    private func text(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    @Test func oldFoldersMoveInAndTheNewerReportOfEachIsKept() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let old = directory + "/reports/study-"
        let new = directory + "/reports/studies/"
        // Only the console's: moved as it is.
        try report(old + "alone", "alone", at: 1_000)
        try report(old + "alone/iteration-1", "alone 1", at: 1_000)
        // Both: the study's report newer in the old folder, iteration 1's newer in the new one, iteration 2 only in the old.
        try report(old + "both", "both old, newer", at: 3_000)
        try "css".write(toFile: old + "both/report.css", atomically: false, encoding: .utf8)
        try report(old + "both/iteration-1", "both 1 old", at: 1_000)
        try report(old + "both/iteration-2", "both 2 old", at: 1_000)
        try report(new + "both", "both new, older", at: 2_000)
        try report(new + "both/iteration-1", "both 1 new", at: 2_000)
        // Not a study's name: not the console's, left alone.
        try FileManager.default.createDirectory(atPath: old + "not a name", withIntermediateDirectories: true)

        let steps = StudyReportFolders(dataDirectory: directory).upgrade(logger: Logger(label: "test"))

        #expect(text(new + "alone/index.html") == "alone")
        #expect(text(new + "alone/iteration-1/index.html") == "alone 1")
        #expect(text(new + "both/index.html") == "both old, newer")
        #expect(text(new + "both/report.css") == "css", "the newer report's files came with it")
        #expect(text(new + "both/iteration-1/index.html") == "both 1 new")
        #expect(text(new + "both/iteration-2/index.html") == "both 2 old")
        #expect(!FileManager.default.fileExists(atPath: old + "alone"))
        #expect(!FileManager.default.fileExists(atPath: old + "both"))
        #expect(FileManager.default.fileExists(atPath: old + "not a name"))
        // Every report removed is named in the log.
        #expect(steps.contains(.keptNewer(kept: old + "both/index.html", removed: new + "both/index.html")), "\(steps)")
        #expect(steps.contains(.keptNewer(kept: new + "both/iteration-1/index.html", removed: old + "both/iteration-1/index.html")), "\(steps)")
        #expect(steps.filter { if case .keptNewer = $0 { true } else { false } }.count == 2, "\(steps)")
        #expect(StudyReportFolders(dataDirectory: directory).upgrade(logger: Logger(label: "test")).isEmpty, "done once")
    }

    @Test func theConsoleAndTheCompletionWriteOneFolderServedAtOneURL() {
        let locations = ReportLocations(dataDirectory: "/data")
        #expect(locations.study("s") == "/data/reports/studies/s")
        #expect(locations.study("s", iteration: 2) == "/data/reports/studies/s/iteration-2")
        #expect(ReportLocations.url(study: "s") == "/studies/s/report/index.html")
        #expect(ReportLocations.url(study: "s", iteration: 2) == "/studies/s/report/iteration-2/index.html")
        let reports = StudyReports(dataDirectory: "/data", logger: Logger(label: "test"), slots: ReportSlots(limits: ReportLimits()))
        #expect(reports.index(of: "s") == "/data/reports/studies/s/index.html")
        #expect(reports.state(of: "s", iteration: nil) == .none)
    }

    @Test func aFollowerThatFallsBehindHearsWhatItMissed() async {
        let finished = FinishedReports()
        let follower = finished.follow()
        defer { follower.cancel() }
        for session in 1...Int64(FinishedReports.capacity + 6) {
            finished.publish(FinishedReport(session: session, name: ReportLocations.defaultName, state: .none))
        }
        let news = await follower.next() ?? []
        #expect(news.count == FinishedReports.capacity + 1)
        #expect(news.last == .missed(6), "dropped, and said so where")
    }

    @Test func oneTaskPerReportAndARewriteWaitsForTheOneRunning() async {
        let tasks = ReportTasks<String>()
        let gate = AsyncStream.makeStream(of: Void.self)
        let first = tasks.join("s") {
            for await _ in gate.stream { break }
            return .running
        }
        #expect(tasks.isRunning("s"))
        let joined = tasks.join("s") { .none }
        #expect(joined == first, "a second request joins the task that runs")

        // A rewrite cancelled while it waits for the running task returns nil and starts nothing.
        let cancelled = Task { await tasks.next("s") { .none } }
        cancelled.cancel()
        #expect(await cancelled.value == nil)

        let rewrite = Task { await tasks.next("s") { .ready(url: "u", generated: 1) } }
        gate.continuation.yield()
        #expect(await first.value == .running)
        #expect(await rewrite.value == .ready(url: "u", generated: 1), "its own outcome, once the first ended")
        #expect(!tasks.isRunning("s"))
    }
}
