import ControlProtocol
import DaemonTestSupport
import Foundation
import SessionModel
import XCTest

/// Studies through the console's API against a real muevald: the same changes and refusals as
/// `muevalctl study …`, `task` and `questionnaire` (the pages are tested in Chromium by ConsoleBrowserTests).
extension ConsoleTests {
    private func object(_ reply: ConsoleClient.Reply) throws -> [String: Any] {
        try XCTUnwrap(try reply.json() as? [String: Any], reply.text)
    }

    private func error(_ reply: ConsoleClient.Reply) -> String {
        ((try? reply.json()) as? [String: Any])?["error"] as? String ?? reply.text
    }

    func testAStudyThroughTheConsoleFromCreationToQuestionnaire() async throws {
        let client = try await loggedIn()
        let forged = try await client.request("POST", "/api/studies", json: ["name": "forged"], csrf: false)
        XCTAssertEqual(forged.status, 403, forged.text)
        let none = try await client.request("GET", "/api/studies")
        XCTAssertEqual((try none.json() as? [Any])?.count, 0, "a refused request created a study: \(none.text)")

        let created = try await client.request("POST", "/api/studies", json: ["name": "momentree", "appId": "com.example.momentree",
                                                                               "description": "Posting <b>moments</b>"])
        XCTAssertEqual(created.status, 201, created.text)
        XCTAssertEqual(try object(created)["description"] as? String, "Posting <b>moments</b>")
        let again = try await client.request("POST", "/api/studies", json: ["name": "momentree"])
        XCTAssertEqual(again.status, 409, again.text)
        let badName = try await client.request("POST", "/api/studies", json: ["name": "a b/c"])
        XCTAssertEqual(badName.status, 400)
        XCTAssertTrue(error(badName).contains("cannot be a study name"), badName.text)
        let unknown = try await client.request("GET", "/api/studies/nothing")
        XCTAssertEqual(unknown.status, 404)
        XCTAssertTrue(error(unknown).contains("no study \"nothing\""), unknown.text)

        let iteration = try await client.request("POST", "/api/studies/momentree/iterations", json: ["label": "1.0 beta"])
        XCTAssertEqual(iteration.status, 201, iteration.text)
        XCTAssertEqual(try object(iteration)["number"] as? Int, 1)
        let task = try await client.request("POST", "/api/studies/momentree/tasks", json: [
            "name": "Post a moment", "instructions": "Share a photo", "timeLimit": 120, "success": "event:momentPosted",
            "expectedPath": ["Timeline", "Compose"]])
        XCTAssertEqual(task.status, 201, task.text)
        let badTask = try await client.request("POST", "/api/studies/momentree/tasks", json: ["name": "x", "success": "click:Save"])
        XCTAssertEqual(badTask.status, 400)
        XCTAssertTrue(error(badTask).contains("is not a success criterion"), badTask.text)
        let participant = try await client.request("POST", "/api/studies/momentree/participants",
                                                   json: ["code": "P1", "attributes": ["experience": "novice"]])
        XCTAssertEqual(participant.status, 201, participant.text)
        let question = try await client.request("POST", "/api/studies/momentree/questions", json: ["id": "q1", "text": "What surprised you?"])
        XCTAssertEqual(question.status, 201, question.text)

        // A session in the study: all three or none.
        let partial = try await client.request("POST", "/api/sessions", json: ["study": "momentree", "participant": "P1"])
        XCTAssertEqual(partial.status, 400, partial.text)
        let noParticipant = try await client.request("POST", "/api/sessions", json: ["study": "momentree", "iteration": 1, "participant": "P9"])
        XCTAssertEqual(noParticipant.status, 400)
        XCTAssertTrue(error(noParticipant).contains("has no participant \"P9\""), noParticipant.text)
        let started = try await client.request("POST", "/api/sessions", json: ["study": "momentree", "iteration": 1, "participant": "P1"])
        XCTAssertEqual(started.status, 201, started.text)
        let session = try object(started)
        XCTAssertEqual(session["study"] as? String, "momentree")
        XCTAssertEqual(session["participant"] as? String, "P1")
        let id = try XCTUnwrap(session["id"] as? Int)

        // Task marks, as `muevalctl task`.
        let begin = try await client.request("POST", "/api/sessions/\(id)/tasks", json: ["action": "begin", "task": "Post a moment"])
        XCTAssertEqual(begin.status, 201, begin.text)
        let beginEvent = try object(begin)
        XCTAssertEqual(beginEvent["class"] as? String, "ObserverNote")
        let payload = try XCTUnwrap(beginEvent["payload"] as? [String: Any])
        XCTAssertEqual(payload["kind"] as? String, "task-begin")
        XCTAssertEqual(payload["task"] as? String, "Post a moment")
        XCTAssertEqual(payload["source"] as? String, "console")
        let verdict = try await client.request("POST", "/api/sessions/\(id)/tasks",
                                               json: ["action": "outcome", "task": "Post a moment", "outcome": "assisted", "comment": "needed a hint"])
        XCTAssertEqual(verdict.status, 201, verdict.text)
        XCTAssertEqual((try object(verdict)["payload"] as? [String: Any])?["outcome"] as? String, "assisted")
        let unknownTask = try await client.request("POST", "/api/sessions/\(id)/tasks", json: ["action": "begin", "task": "Delete account"])
        XCTAssertEqual(unknownTask.status, 400)
        XCTAssertTrue(error(unknownTask).contains("has no task \"Delete account\""), unknownTask.text)
        let badOutcome = try await client.request("POST", "/api/sessions/\(id)/tasks", json: ["action": "outcome", "task": "Post a moment", "outcome": "won"])
        XCTAssertEqual(badOutcome.status, 400, badOutcome.text)
        let markWithoutToken = try await client.request("POST", "/api/sessions/\(id)/tasks", json: ["action": "end", "task": "Post a moment"], csrf: false)
        XCTAssertEqual(markWithoutToken.status, 403)
        let marks = try daemon.muevalctl(["events", String(id), "--class", "ObserverNote", "--limit", "0", "--json"])
        XCTAssertEqual(marks.status, 0, marks.stderr)
        XCTAssertEqual(marks.stdout.split(separator: "\n").count, 2, "two marks stored, the refused ones not: \(marks.stdout)")

        // The questionnaire: all or nothing, a refusal names the item.
        func responses(sus: [Int], seq: Int, answer: String) -> [String: Any] {
            ["responses": ["sus": [["iteration": 1, "participant": "P1", "items": sus]],
                           "seq": [["iteration": 1, "participant": "P1", "task": "Post a moment", "rating": seq]],
                           "answers": [["iteration": 1, "participant": "P1", "question": "q1", "text": answer]]]]
        }
        let outOfRange = try await client.request("POST", "/api/studies/momentree/questionnaire",
                                                  json: responses(sus: [4, 2, 4, 2, 4, 2, 6, 2, 4, 2], seq: 6, answer: "The <i>map</i>"))
        XCTAssertEqual(outOfRange.status, 400)
        XCTAssertEqual(error(outOfRange), "SUS item 7 is 6: answers go from 1 to 5")
        let seqOutOfRange = try await client.request("POST", "/api/studies/momentree/questionnaire",
                                                     json: responses(sus: [4, 2, 4, 2, 4, 2, 4, 2, 4, 2], seq: 8, answer: "The <i>map</i>"))
        XCTAssertEqual(seqOutOfRange.status, 400)
        XCTAssertTrue(error(seqOutOfRange).contains("task \"Post a moment\""), seqOutOfRange.text)
        let incomplete = try await client.request("POST", "/api/studies/momentree/questionnaire",
                                                  json: responses(sus: [4, 2, 4], seq: 6, answer: "The <i>map</i>"))
        XCTAssertEqual(incomplete.status, 400)
        XCTAssertTrue(error(incomplete).contains("item 4 has no answer"), incomplete.text)
        let refused = try object(try await client.request("GET", "/api/studies/momentree"))
        let nothing = try XCTUnwrap(refused["responses"] as? [String: [Any]])
        XCTAssertTrue(nothing.values.allSatisfy(\.isEmpty), "a refused questionnaire stored answers: \(nothing)")
        let questionnaireWithoutToken = try await client.request("POST", "/api/studies/momentree/questionnaire",
                                                                 json: responses(sus: [4, 2, 4, 2, 4, 2, 4, 2, 4, 2], seq: 6, answer: "x"), csrf: false)
        XCTAssertEqual(questionnaireWithoutToken.status, 403)
        let saved = try await client.request("POST", "/api/studies/momentree/questionnaire",
                                             json: responses(sus: [4, 2, 4, 2, 4, 2, 4, 2, 4, 2], seq: 6, answer: "The <i>map</i>"))
        XCTAssertEqual(saved.status, 201, saved.text)

        let data = try object(try await client.request("GET", "/api/studies/momentree"))
        let study = try XCTUnwrap(data["study"] as? [String: Any])
        XCTAssertEqual((study["tasks"] as? [[String: Any]])?.first?["success"] as? String, "event:momentPosted")
        XCTAssertEqual((study["tasks"] as? [[String: Any]])?.first?["expectedPath"] as? [String], ["Timeline", "Compose"])
        XCTAssertEqual((study["participants"] as? [[String: Any]])?.first?["attributes"] as? [String: String], ["experience": "novice"])
        XCTAssertEqual((data["sessions"] as? [[String: Any]])?.map { $0["id"] as? Int }, [id])
        let stored = try XCTUnwrap(data["responses"] as? [String: [[String: Any]]])
        XCTAssertEqual(stored["sus"]?.first?["items"] as? [Int], [4, 2, 4, 2, 4, 2, 4, 2, 4, 2])
        XCTAssertEqual(stored["seq"]?.first?["rating"] as? Int, 6)
        XCTAssertEqual(stored["answers"]?.first?["text"] as? String, "The <i>map</i>")
        // The CLI sees the same study.
        let shown = try await daemon.ctl.call(ControlRequest.ShowStudy(study: "momentree"))
        XCTAssertEqual(shown.responses.sus.first?.items, [4, 2, 4, 2, 4, 2, 4, 2, 4, 2])

        let items = try object(try await client.request("GET", "/api/questionnaire"))
        XCTAssertEqual(items["susStatements"] as? [String], SUSResponse.statements)
    }

    /// The study report and CSV, made by StudyReportGenerator and StudyAnalyzer from a recorded session;
    /// the routes and what they refuse before either runs.
    func testStudyReportAndExportAndWhatTheyRefuse() async throws {
        let client = try await loggedIn()
        func status(_ method: String, _ path: String, json: Any? = nil, authenticated: Bool = true) async throws -> Int {
            try await client.request(method, path, json: json, authenticated: authenticated).status
        }
        let created = try await status("POST", "/api/studies", json: ["name": "s1"])
        XCTAssertEqual(created, 201)
        let noIteration = try await client.request("POST", "/api/studies/s1/report", json: ["iteration": 3])
        XCTAssertEqual(noIteration.status, 400)
        XCTAssertTrue(error(noIteration).contains("has no iteration 3"), noIteration.text)
        let withoutToken = try await client.request("POST", "/api/studies/s1/report", json: [String: Any](), csrf: false)
        XCTAssertEqual(withoutToken.status, 403)
        let state = try object(try await client.request("GET", "/api/studies/s1/report"))
        XCTAssertEqual(state["state"] as? String, "none")
        let refusals: [(String, String, Int)] = [
            ("GET", "/api/studies/nothing/report", 404), ("POST", "/api/studies/nothing/report", 404),
            ("GET", "/api/studies/nothing/export.csv", 404), ("GET", "/studies/s1/report/index.html", 404),
            ("GET", "/studies/s1/report/..%2F..%2Fcatalog.sqlite", 404), ("GET", "/studies/..%2F1/report/index.html", 404),
        ]
        for (method, path, expected) in refusals {
            let got = try await status(method, path, json: method == "POST" ? [String: Any]() : nil)
            XCTAssertEqual(got, expected, "\(method) \(path)")
        }
        let loggedOut = try await status("GET", "/studies/s1/report/index.html", authenticated: false)
        XCTAssertEqual(loggedOut, 401)
        for page in ["/studies", "/study?name=s1", "/questionnaire?study=s1&iteration=1&participant=P1"] {
            let reply = try await client.request("GET", page)
            XCTAssertEqual(reply.status, 200, page)
            XCTAssertTrue(reply.text.contains("nav-studies"), page)
        }

        // One participant records a pass of the WordPress scenario; then the CSV and the report.
        for (path, body) in [("iterations", ["label": "2.6.4"]), ("tasks", ["name": "Open the blog", "success": "event:BlogOpened"]),
                             ("participants", ["code": "P1"])] {
            let added = try await client.request("POST", "/api/studies/s1/\(path)", json: body)
            XCTAssertEqual(added.status, 201, added.text)
        }
        let started = try object(try await client.request("POST", "/api/sessions", json: ["study": "s1", "iteration": 1, "participant": "P1"]))
        let session = try XCTUnwrap(started["id"] as? Int)
        let simulator = try runProcess(TestDaemon.executable("muevalsim"), ["--connect", "127.0.0.1:\(daemon.port)", "--scenario", "wordpress",
                                                                           "--seed", "5", "--speed", "40"])
        XCTAssertEqual(simulator.status, 0, simulator.stderr)
        let stopped = try await client.request("POST", "/api/sessions/\(session)/stop", json: [String: Any]())
        XCTAssertEqual(stopped.status, 200, stopped.text)

        let csv = try await client.request("GET", "/api/studies/s1/export.csv")
        XCTAssertEqual(csv.status, 200, csv.text)
        XCTAssertTrue(csv.text.hasPrefix("study,iteration,iteration_label,participant,"), csv.text)
        XCTAssertTrue(csv.text.contains("s1,1,2.6.4,P1,,Open the blog,\(session),1,success,"), csv.text)

        let building = try await client.request("POST", "/api/studies/s1/report", json: [String: Any]())
        XCTAssertEqual(building.status, 202, building.text)
        let url = try await eventually(timeout: 60, "the study report to be ready") { () -> String? in
            let state = try? self.object(try await client.request("GET", "/api/studies/s1/report"))
            XCTAssertNotEqual(state?["state"] as? String, "failed", "\(state ?? [:])")
            return state?["state"] as? String == "ready" ? state?["url"] as? String : nil
        }
        let report = try await client.request("GET", url)
        XCTAssertEqual(report.status, 200, url)
        XCTAssertTrue(report.text.contains("Open the blog"), report.text.prefix(500).description)
        // The completion's old address: the same file, in the study's one folder.
        let moved = try await client.request("GET", "/studies/s1/completed/index.html")
        XCTAssertEqual(moved.status, 301, moved.text)
        XCTAssertEqual(moved.header("Location"), url)
    }
}
