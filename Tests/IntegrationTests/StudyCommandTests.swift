import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import WireProtocol
import XCTest

/// Studies through the real daemon and muevalctl (issue 16): the catalog of an earlier release
/// upgraded in place, a newer one refused, and every study command with its errors.
final class StudyCommandTests: XCTestCase {
    /// A data directory muevald 0.1.0 (commit 478f186) made: one stopped session with 61 events and a
    /// note, one session still waiting when it was stopped. Its catalog has no schema version.
    static let release010 = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/datadir-0.1.0").path

    private func ok(_ daemon: TestDaemon, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let run = try daemon.muevalctl(arguments)
        XCTAssertEqual(run.status, 0, "muevalctl \(arguments.joined(separator: " ")): \(run.stderr)", file: file, line: line)
        return run.stdout
    }

    /// The error, one line, non-zero status.
    private func refused(_ daemon: TestDaemon, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let run = try daemon.muevalctl(arguments)
        XCTAssertNotEqual(run.status, 0, "muevalctl \(arguments.joined(separator: " ")) should fail: \(run.stdout)", file: file, line: line)
        XCTAssertEqual(run.stdout, "", file: file, line: line)
        return run.stderr
    }

    private func userVersion(_ path: String) throws -> Int64 {
        let database = try SQLiteDatabase(path: path, readOnly: true)
        let statement = try database.prepare("PRAGMA user_version")
        _ = try statement.step()
        return statement.int64(0)
    }

    func testACatalogOfRelease010UpgradesInPlaceAndANewerOneIsRefusedUntouched() async throws {
        let daemon = try await TestDaemon.start(dataDirectoryCopy: Self.release010)
        defer { daemon.cleanUp() }
        let catalog = daemon.dataDirectory + "/catalog.sqlite"
        XCTAssertTrue(daemon.log.contains("catalog migrated to version 2"), daemon.log)
        XCTAssertTrue(daemon.log.contains("catalog migrated to version 3: imported sessions' source files"), daemon.log)
        XCTAssertTrue(daemon.log.contains("catalog migrated to version 4: studies' recruitment and invitations"), daemon.log)
        XCTAssertTrue(daemon.log.contains("catalog migrated to version 5: studies' web apps"), daemon.log)
        XCTAssertEqual(try userVersion(catalog), 5)
        XCTAssertEqual(try userVersion(daemon.dataDirectory + "/catalog.sqlite.v0.bak"), 0, "the catalog as it was, kept aside")

        // Everything 0.1.0 recorded is still there, in the moved directory: the stopped session with its
        // events and note, and the session that was waiting, open again.
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(sessions.map(\.name), ["release-0.1.0", "still-open"])
        XCTAssertEqual(sessions.map(\.state), [.stopped, .waiting])
        XCTAssertEqual(sessions[0].events, 61)
        XCTAssertEqual(sessions[0].path, daemon.dataDirectory + "/sessions/session-1.sqlite")
        XCTAssertTrue(try ok(daemon, ["events", "release-0.1.0", "--class", "ObserverNote"]).contains("first note"))
        XCTAssertNil(sessions[0].study)

        // The upgraded catalog takes studies; a new session goes on from id 3.
        _ = try ok(daemon, ["stop", "still-open"])
        _ = try ok(daemon, ["study", "create", "momentree"])
        _ = try ok(daemon, ["study", "iteration", "add", "momentree"])
        _ = try ok(daemon, ["study", "participant", "add", "momentree", "P01"])
        XCTAssertEqual(try ok(daemon, ["start", "--study", "momentree", "--iteration", "1", "--participant", "P01"]), "3\n")

        // A second start migrates nothing.
        try await daemon.restart()
        XCTAssertFalse(daemon.log.contains("catalog migrated"), daemon.log)
        let code = try await daemon.stop()
        XCTAssertEqual(code, 0)

        // A catalog from a newer muEval: refused before anything is written, with what to do.
        try SQLiteDatabase(path: catalog).execute("PRAGMA user_version = 99")
        let before = try Data(contentsOf: URL(fileURLWithPath: catalog))
        let run = try runProcess(TestDaemon.executable("muevald"), [
            "--data-dir", daemon.dataDirectory, "--socket", daemon.directory + "/other.sock", "--listen", "127.0.0.1:0",
            "--no-console", "--no-zeroconf",
        ])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("schema version 99, written by a newer muEval"), run.stderr)
        XCTAssertTrue(run.stderr.contains("knows versions up to 5"), run.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: catalog)), before, "the newer catalog is left as it was")
        XCTAssertEqual(try userVersion(catalog), 99)
    }

    func testStudyCommandsCheckWhatTheyAreGivenAndASessionFileKnowsItsStudy() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        XCTAssertEqual(try ok(daemon, ["study", "list"]), "no study yet: create one with `muevalctl study create NAME`\n")
        XCTAssertEqual(try ok(daemon, ["study", "create", "wordpress-2011", "--app-id", "org.wordpress", "--description", "Posting on the go"]),
                       "created study wordpress-2011\n")
        XCTAssertTrue(try refused(daemon, ["study", "create", "wordpress-2011"]).contains("there is already a study \"wordpress-2011\""))
        XCTAssertTrue(try refused(daemon, ["study", "create", "no spaces"]).contains("cannot be a study name"))
        XCTAssertEqual(try ok(daemon, ["study", "iteration", "add", "wordpress-2011", "--label", "2.6.4"]), "added iteration 1 to wordpress-2011\n")
        XCTAssertEqual(try ok(daemon, ["study", "iteration", "add", "wordpress-2011", "--label", "2.7 beta"]), "added iteration 2 to wordpress-2011\n")
        XCTAssertTrue(try refused(daemon, ["study", "iteration", "add", "wordpress-2011", "--number", "2"]).contains("already has iteration 2"))
        _ = try ok(daemon, ["study", "task", "add", "wordpress-2011", "Edit blog posting", "--success", "event:PostPublished",
                            "--time-limit", "120", "--expected-path", "BlogsViewController, PostsViewController,EditPostViewController",
                            "--instructions", "Write a post about your weekend"])
        _ = try ok(daemon, ["study", "task", "add", "wordpress-2011", "Open the blog", "--success", "view:PostsViewController"])
        XCTAssertTrue(try refused(daemon, ["study", "task", "add", "wordpress-2011", "Rate", "--success", "click:publish"])
            .contains("is not a success criterion: give event:NAME"))
        XCTAssertTrue(try refused(daemon, ["study", "task", "add", "wordpress-2011", "Rate", "--time-limit=-3"]).contains("cannot be a time limit"))
        _ = try ok(daemon, ["study", "participant", "add", "wordpress-2011", "P01", "--attribute", "experience=novice", "--attribute", "age=30s"])
        _ = try ok(daemon, ["study", "participant", "add", "wordpress-2011", "P02"])
        XCTAssertTrue(try refused(daemon, ["study", "participant", "add", "wordpress-2011", "P03", "--attribute", "novice"]).contains("KEY=VALUE"))
        _ = try ok(daemon, ["study", "question", "add", "wordpress-2011", "expectations", "What did you expect the Publish button to do?"])
        XCTAssertTrue(try refused(daemon, ["study", "show", "wordpress-2012"]).contains("no study \"wordpress-2012\""))

        // Sessions of the study: all three options or none; the study, iteration and participant must exist.
        XCTAssertTrue(try refused(daemon, ["start", "--study", "wordpress-2011", "--iteration", "1"])
            .contains("needs --study, --iteration and --participant together"))
        XCTAssertTrue(try refused(daemon, ["start", "--study", "wordpress-2011", "--iteration", "3", "--participant", "P01"])
            .contains("has no iteration 3"))
        XCTAssertTrue(try refused(daemon, ["start", "--study", "wordpress-2011", "--iteration", "1", "--participant", "P09"])
            .contains("has no participant \"P09\""))
        let id = try ok(daemon, ["start", "--study", "wordpress-2011", "--iteration", "1", "--participant", "P01", "--name", "p01-i1"])
        XCTAssertEqual(id, "1\n")

        // The observer's task marks and verdicts; unknown tasks and verdicts are refused.
        XCTAssertTrue(try ok(daemon, ["task", "p01-i1", "begin", "Edit blog posting"]).contains("task-begin \"Edit blog posting begins\""))
        XCTAssertTrue(try refused(daemon, ["task", "p01-i1", "begin", "Fly"]).contains("has no task \"Fly\""))
        XCTAssertTrue(try refused(daemon, ["task", "p01-i1", "outcome", "Edit blog posting"]).contains("give the verdict"))
        XCTAssertTrue(try refused(daemon, ["task", "p01-i1", "outcome", "Edit blog posting", "great"]).contains("great"))
        _ = try ok(daemon, ["task", "p01-i1", "end", "Edit blog posting"])
        let verdict = try ok(daemon, ["--json", "task", "p01-i1", "outcome", "Edit blog posting", "assisted", "--comment", "I showed the button"])
        let payload = try XCTUnwrap((JSONSerialization.jsonObject(with: Data(verdict.utf8)) as? [String: Any])?["payload"] as? [String: Any])
        XCTAssertEqual(payload["kind"] as? String, "task-outcome")
        XCTAssertEqual(payload["task"] as? String, "Edit blog posting")
        XCTAssertEqual(payload["outcome"] as? String, "assisted")
        XCTAssertEqual(payload["text"] as? String, "I showed the button")

        // Questionnaires: an answer out of range or missing is refused with its item named, and nothing is stored.
        XCTAssertTrue(try refused(daemon, ["questionnaire", "sus", "wordpress-2011", "--iteration", "1", "--participant", "P01",
                                           "--answers", "4,2,4,1,6,2,5,1,4,2"]).contains("SUS item 5 is 6: answers go from 1 to 5"))
        XCTAssertTrue(try refused(daemon, ["questionnaire", "sus", "wordpress-2011", "--iteration", "1", "--participant", "P01",
                                           "--answers", "4,2,4,1,5,2,5,1,4"]).contains("item 10 has no answer"))
        XCTAssertTrue(try refused(daemon, ["questionnaire", "seq", "wordpress-2011", "--iteration", "1", "--participant", "P01",
                                           "--task", "Open the blog", "--rating", "8"]).contains("answers go from 1 to 7"))
        XCTAssertTrue(try refused(daemon, ["questionnaire", "seq", "wordpress-2011", "--iteration", "1", "--participant", "P07",
                                           "--task", "Open the blog", "--rating", "5"]).contains("has no participant \"P07\""))
        XCTAssertEqual(try ok(daemon, ["questionnaire", "sus", "wordpress-2011", "--iteration", "1", "--participant", "P01", "--answers", "4,2,4,1,5,2,5,1,4,2"]),
                       "recorded the SUS answers of P01 in iteration 1: score 85 (grade A+)\n")
        _ = try ok(daemon, ["questionnaire", "seq", "wordpress-2011", "--iteration", "1", "--participant", "P01", "--task", "Open the blog", "--rating", "6"])
        _ = try ok(daemon, ["questionnaire", "answer", "wordpress-2011", "--iteration", "1", "--participant", "P01", "--question", "expectations",
                            "To publish, <b>obviously</b>"])

        let show = try ok(daemon, ["study", "show", "wordpress-2011"])
        for expected in ["study wordpress-2011 · app org.wordpress", "Posting on the go", "  1  2.6.4", "event:PostPublished", "120 s",
                         "BlogsViewController → PostsViewController → EditPostViewController", "P01  age=30s experience=novice",
                         "expectations  What did you expect", "iteration 1: SUS from P01; 1 SEQ answer; 1 free-text answer",
                         "iteration 2: SUS from nobody yet"] {
            XCTAssertTrue(show.contains(expected), "\(expected) in\n\(show)")
        }
        let data = try JSONDecoder().decode(StudyData.self, from: Data(try ok(daemon, ["study", "show", "wordpress-2011", "--json"]).utf8))
        XCTAssertEqual(data.sessions.map(\.id), [1])
        XCTAssertEqual(data.sessions.first?.assignment, StudyAssignment(study: "wordpress-2011", iteration: 1, participant: "P01"))
        XCTAssertEqual(data.sessions.first?.testUser, "P01", "the participant is the test user")
        XCTAssertEqual(data.responses.sus.first?.items, [4, 2, 4, 1, 5, 2, 5, 1, 4, 2])
        XCTAssertEqual(data.responses.answers.first?.text, "To publish, <b>obviously</b>")
        XCTAssertEqual(data.study.tasks.map(\.success), [.event("PostPublished"), .view("PostsViewController")])

        // The stopped session's file, copied away from the daemon, still says what it is part of.
        let stopped = try ok(daemon, ["stop", "p01-i1"])
        XCTAssertTrue(stopped.hasPrefix("stopped session 1"), stopped)
        // Copied as docs/STORAGE.md says a file is copied with `cp`: once the writes that follow the stop are done.
        // The default report stores the study digest in the file before its page (a copy taken meanwhile was torn:
        // "database disk image is malformed", CI of 2026-11-29).
        let report = daemon.dataDirectory + "/reports/1/default/problems.json"
        try await eventually(timeout: 30, "the default report") { FileManager.default.fileExists(atPath: report) ? true : nil }
        let copy = daemon.directory + "/copy.sqlite"
        try FileManager.default.copyItem(atPath: data.sessions[0].path, toPath: copy)
        let reader = try SessionReader(path: copy)
        let context = try XCTUnwrap(try reader.studyContext())
        XCTAssertEqual(context.study, "wordpress-2011")
        XCTAssertEqual(context.appId, "org.wordpress")
        XCTAssertEqual(context.iteration.label, "2.6.4")
        XCTAssertEqual(context.participant.attributes, ["experience": "novice", "age": "30s"])
        XCTAssertEqual(context.tasks.map(\.name), ["Edit blog posting", "Open the blog"])
        XCTAssertEqual(try reader.session()?.assignment, context.assignment)

        let list = try JSONDecoder().decode([Study].self, from: Data(try ok(daemon, ["study", "list", "--json"]).utf8))
        XCTAssertEqual(list.map(\.name), ["wordpress-2011"])
        XCTAssertEqual(list.first?.participants.map(\.code), ["P01", "P02"])
    }

    /// A study's web app (issue 40): named at creation or later, removed, shown by `show` and `list` (text and
    /// `webApp` in JSON), and anything but an absolute http(s) URL refused on one line, changing nothing.
    func testAStudysWebAppIsNamedShownAndRemovedAndABadURLRefused() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let app = "https://lab.example.org/notes/?lang=en#start"
        XCTAssertEqual(try ok(daemon, ["study", "create", "webnotes", "--app-id", "org.example.notes", "--web-app", app]), "created study webnotes\n")
        XCTAssertTrue(try ok(daemon, ["study", "show", "webnotes"]).contains("web app \(app) (invitation pages link it with mueval=CODE)\n"))
        let listed = try ok(daemon, ["study", "list"])
        XCTAssertTrue(listed.contains("WEB APP") && listed.contains(app), listed)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try ok(daemon, ["study", "list", "--json"]).utf8)) as? [[String: Any]])
        XCTAssertEqual(json.first?["webApp"] as? String, app)
        let shown = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try ok(daemon, ["study", "show", "webnotes", "--json"]).utf8)) as? [String: Any])
        XCTAssertEqual((shown["study"] as? [String: Any])?["webApp"] as? String, app)

        for (bad, expected) in [("notes.example.org", #""notes.example.org" cannot be a study's web app: give an absolute http:// or https:// URL"#),
                                ("javascript:alert(1)", #""javascript:alert(1)" cannot be a study's web app"#),
                                ("https://lab.example.org/my notes", #""https://lab.example.org/my notes" cannot be a study's web app"#),
                                ("https://" + String(repeating: "a", count: 2050) + ".org/", "a study's web app URL is too long: at most 2048 bytes")] {
            let message = try refused(daemon, ["study", "set", "webnotes", "--web-app", bad])
            XCTAssertTrue(message.contains(expected), message)
            XCTAssertEqual(message.trimmingCharacters(in: .newlines).split(separator: "\n").count, 1, "one line: \(message)")
            XCTAssertTrue(try refused(daemon, ["study", "create", "other", "--web-app", bad]).contains(expected))
        }
        XCTAssertTrue(try refused(daemon, ["study", "show", "other"]).contains("no study \"other\""), "a refused create stores nothing")
        XCTAssertTrue(try refused(daemon, ["study", "set", "webnotes"]).contains("give either --web-app URL or --no-web-app"))
        XCTAssertTrue(try refused(daemon, ["study", "set", "webnotes", "--web-app", app, "--no-web-app"]).contains("give either"))
        XCTAssertTrue(try refused(daemon, ["study", "set", "nowhere", "--no-web-app"]).contains("no study \"nowhere\""))

        XCTAssertEqual(try ok(daemon, ["study", "set", "webnotes", "--web-app", "http://192.168.1.20:8000/"]),
                       "study webnotes: web app http://192.168.1.20:8000/\n")
        XCTAssertEqual(try ok(daemon, ["study", "set", "webnotes", "--no-web-app"]), "study webnotes: no web app\n")
        XCTAssertFalse(try ok(daemon, ["study", "show", "webnotes"]).contains("web app"))
        let cleared = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try ok(daemon, ["study", "list", "--json"]).utf8)) as? [[String: Any]])
        XCTAssertNil(cleared.first?["webApp"], "no key once removed")
        XCTAssertEqual(cleared.first?["appId"] as? String, "org.example.notes", "the rest of the study as it was")
    }
}
