import Foundation
import ReportCritique
import SessionAnalysis
import SessionAnalysisTestSupport
import XCTest

/// The report directory, from simulated sessions (muevalsim's wordpress scenario, no daemon).
final class ReportTests: AnalysisTestCase {
    func simulated(_ deviceIndex: Int = 0) async throws -> String {
        let path = directory + "/wordpress-\(deviceIndex).sqlite"
        try await SimulatedSession.write(scenario: "wordpress", to: path, deviceIndex: deviceIndex)
        return path
    }

    func testReportIsASelfContainedDirectoryWithEachScreenshotOnce() async throws {
        let session = try await simulated()
        let output = directory + "/report"
        let index = try ReportGenerator.generate(sessionFiles: [session], configuration: ReportConfiguration(), output: output)
        XCTAssertEqual(index, output + "/index.html")
        let analysis = try AnalyzedSession(path: session)
        let shots = try FileManager.default.contentsOfDirectory(atPath: output + "/shots")
        XCTAssertEqual(shots.count, analysis.results.first(Screenshots.self)?.shots.count)
        XCTAssertGreaterThan(shots.count, 3)
        let html = try String(contentsOfFile: index, encoding: .utf8)
        for kind in SectionKind.allCases { XCTAssertTrue(html.contains("<section id=\"\(kind.rawValue)\""), "no \(kind) section") }
        for file in ["index.html", "report.css", "report.js"] {
            let text = try String(contentsOfFile: output + "/" + file, encoding: .utf8)
            XCTAssertNil(text.range(of: #"(src|href)="(https?:)?//"#, options: .regularExpression), "\(file) refers to the network")
            XCTAssertFalse(text.contains("@import") || text.contains("url(http"), "\(file) refers to the network")
        }
        XCTAssertTrue(html.contains("<canvas"), "heatmaps")
        XCTAssertTrue(html.contains("EditPostViewController"), "the navigation path names the views")
    }

    /// Screenshots are copied beside the page's writing, on a thread of their own: a missing one still fails the report.
    func testAScreenshotMissingFromTheSessionFileFailsTheReportWithItsName() async throws {
        let session = try await simulated()
        let analysis = try AnalyzedSession(path: session)
        let sha = try XCTUnwrap(analysis.results.first(Screenshots.self)?.shots.last?.blob.sha256)
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [session, "DELETE FROM blobs WHERE sha256 = '\(sha)'"]
        try sqlite.run()
        sqlite.waitUntilExit()
        XCTAssertEqual(sqlite.terminationStatus, 0)
        XCTAssertThrowsError(try ReportWriter(configuration: ReportConfiguration()).write([analysis], to: directory + "/report")) { error in
            XCTAssertTrue("\(error)".contains(sha), "\(error)")
        }
    }

    /// muevald offers the page before its screenshots are all in `shots/`: whoever asks hears once when they are,
    /// also after the fact, and of a failure with the image's name.
    func testThePageIsWrittenFirstAndTheScreenshotsCopySaysWhenItEnded() async throws {
        let session = try await simulated()
        let analysis = try AnalyzedSession(path: session)
        let shots = try XCTUnwrap(analysis.results.first(Screenshots.self)?.shots)
        let output = directory + "/report"
        let (index, screenshots) = try ReportWriter(configuration: ReportConfiguration()).writePage([analysis], to: output)
        XCTAssertTrue(FileManager.default.fileExists(atPath: index))
        let heard = Heard()
        screenshots.whenDone { heard.add($0) }
        try screenshots.finish()
        try screenshots.finish()
        screenshots.whenDone { heard.add($0) }
        XCTAssertEqual(heard.outcomes, ["done", "done"], "each listener once, without an error")
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: output + "/shots")), Set(shots.map { "\($0.blob.sha256).png" }))
        XCTAssertEqual(ScreenshotCopy.sha256(of: ["shots", Substring(shots[0].blob.sha256 + ".png")]), shots[0].blob.sha256)
        for parts: [Substring] in [["shots", "x.png"], ["shots", Substring(shots[0].blob.sha256)], ["index.html"],
                                   ["media", Substring(shots[0].blob.sha256 + ".png")]] {
            XCTAssertNil(ScreenshotCopy.sha256(of: parts), "\(parts)")
        }

        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [session, "DELETE FROM blobs WHERE sha256 = '\(shots[0].blob.sha256)'"]
        try sqlite.run()
        sqlite.waitUntilExit()
        let (_, failing) = try ReportWriter(configuration: ReportConfiguration()).writePage([analysis], to: directory + "/again")
        XCTAssertThrowsError(try failing.finish())
        let failed = Heard()
        failing.whenDone { failed.add($0) }
        XCTAssertEqual(failed.outcomes.count, 1)
        XCTAssertTrue(failed.outcomes[0].contains(shots[0].blob.sha256), failed.outcomes[0])
    }

    func testSectionsFollowTheConfigurationsOrderAndLeaveOutTheOthers() async throws {
        let session = try await simulated()
        let configuration = ReportConfiguration(sections: try SectionKind.list("problems, overview"))
        let index = try ReportGenerator.generate(sessionFiles: [session], configuration: configuration, output: directory + "/r")
        let html = try String(contentsOfFile: index, encoding: .utf8)
        let problems = try XCTUnwrap(html.range(of: "<section id=\"problems\""))
        let overview = try XCTUnwrap(html.range(of: "<section id=\"overview\""))
        XCTAssertLessThan(problems.lowerBound, overview.lowerBound)
        XCTAssertFalse(html.contains("<section id=\"timeline\""))
        XCTAssertThrowsError(try SectionKind.list("overview,charts")) { error in
            XCTAssertEqual(error as? ReportError, .unknownSection("charts"))
        }
    }

    func testSeveralSessionsAreComparedSideBySide() async throws {
        let sessions = try await [simulated(0), simulated(1), simulated(2)]
        let index = try ReportGenerator.generate(sessionFiles: sessions, configuration: ReportConfiguration(), output: directory + "/r")
        let html = try String(contentsOfFile: index, encoding: .utf8)
        for user in ["Jack", "Jill", "Jane"] { XCTAssertTrue(html.contains("<h3 class=\"user\">\(user)</h3>"), user) }
        XCTAssertTrue(html.contains("Time per view and user"))
        XCTAssertTrue(html.contains("Time on task (Jill)"))
        // Everyone saw the same screens: shared screenshots are written once.
        let shots = try FileManager.default.contentsOfDirectory(atPath: directory + "/r/shots")
        let distinct = Set(try sessions.flatMap { try AnalyzedSession(path: $0).results.first(Screenshots.self)!.shots.map(\.blob.sha256) })
        XCTAssertEqual(shots.count, distinct.count)
    }

    func testConfigurationsAreSavedListedAndLoadedByName() throws {
        let store = ReportConfigurationStore(directory: directory + "/config/mueval/reports")
        var configuration = ReportConfiguration(sections: [.overview, .problems], output: "/tmp/out")
        configuration.options.responseWindow = 1.5
        configuration.options.functionalities = ["TimetableViewController": "Timetable"]
        try store.save(configuration, as: "quick")
        try store.save(ReportConfiguration(), as: "all")
        XCTAssertEqual(store.names(), ["all", "quick"])
        XCTAssertEqual(try store.load("quick"), configuration)
        XCTAssertThrowsError(try store.load("missing")) { error in
            XCTAssertEqual(error as? ReportError, .noSuchConfiguration(name: "missing", directory: store.directory))
        }
        XCTAssertThrowsError(try store.save(configuration, as: "../evil"))
        // Loading is checked the same way (the console passes a browser's name): nothing outside the folder.
        try #"{"sections":["tasks"]}"#.write(toFile: directory + "/config/mueval/outside.json", atomically: true, encoding: .utf8)
        for name in ["../outside", ".hidden", "", "a/../../outside"] {
            XCTAssertThrowsError(try store.load(name), name) { error in
                XCTAssertEqual(error as? ReportError, .badConfigurationName(name))
            }
        }
        // A configuration names only what it changes.
        try #"{"sections":["tasks"],"options":{"freezeSeconds":5}}"#.write(toFile: store.path(of: "short"), atomically: true, encoding: .utf8)
        let short = try store.load("short")
        XCTAssertEqual(short.sections, [.tasks])
        XCTAssertEqual(short.options.freezeSeconds, 5)
        XCTAssertEqual(short.options.responseWindow, AnalysisOptions().responseWindow)
        XCTAssertEqual(ReportConfigurationStore.defaultDirectory(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]), "/x/mueval/reports")
        XCTAssertEqual(ReportConfigurationStore.defaultDirectory(environment: ["HOME": "/h"]), "/h/.config/mueval/reports")
    }
}

/// What `ScreenshotCopy.whenDone` said, in order ("done", or the error).
private final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var heard: [String] = []

    func add(_ failure: (any Error)?) {
        lock.withLock { heard.append(failure.map { "\($0)" } ?? "done") }
    }

    var outcomes: [String] { lock.withLock { heard } }
}
