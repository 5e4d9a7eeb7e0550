import DaemonTestSupport
import Foundation
import XCTest

/// The tester's pages (issue 32) on a phone-sized Chromium in device mode (Tests/Browser/phone_browser.py),
/// against a real muevald: enrolment (consent, then the profile), the invitation page with the study's
/// tasks after a real phone (muevalsim) joined with its code, the SUS and SEQ filled on the phone and
/// stored as that participant's, the pool page in the console, and the withdrawal listing what went.
/// Between the steps this side recruits through the console's API, as the study page does, and uses
/// `TesterPhone` (the end-to-end test's HTTP phone) for a second tester and for what must be refused. A study's web
/// app is linked from the invitation page, with the code, and only while the study names one.
final class PhoneBrowserTests: XCTestCase {
    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Browser/phone_browser.py").path

    private func object(_ reply: ConsoleClient.Reply) throws -> [String: Any] {
        try XCTUnwrap(try reply.json() as? [String: Any], reply.text)
    }

    /// One step of the script; its RESULT line.
    private func phone(_ arguments: [String], _ daemon: TestDaemon) throws -> [String: Any] {
        // Screenshots into docs/console/ (docs/CONSOLE.md shows them) with MUEVAL_CONSOLE_SCREENSHOTS=1.
        let screenshots = ProcessInfo.processInfo.environment["MUEVAL_CONSOLE_SCREENSHOTS"] == "1"
            ? URL(fileURLWithPath: Self.script).deletingLastPathComponent().appendingPathComponent("../../docs/console").standardized.path
            : daemon.directory
        let run = try runProcess(BrowserRequirement.python, [Self.script] + arguments,
                                 environment: ["SCREENSHOT_DIR": screenshots], timeout: 180)
        let output = "\(arguments[0]): status \(run.status)\n\(run.stdout)\n\(run.stderr)\nmuevald log:\n\(daemon.log)"
        XCTAssertEqual(run.status, 0, output)
        let line = try XCTUnwrap(run.stdout.split(separator: "\n").last { $0.hasPrefix("RESULT ") }, output)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.dropFirst("RESULT ".count).utf8)) as? [String: Any])
    }

    func testEnrolmentInvitationQuestionnaireAndWithdrawalOnAPhone() async throws {
        if let missing = try BrowserRequirement.missing() { throw XCTSkip(missing) }
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let link = try await daemon.consoleLink()
        let console = ConsoleClient(link: link.url)
        try await console.login(link.url)
        let base = console.base

        // The lab's pool and study, as the console's pages set them up.
        let configured = try await console.request("POST", "/api/pool/settings", json: [
            "consent": "We record your touches, the screen, your voice and your face for 6 months. Withdraw any time.",
            "fields": [["name": "gender", "label": "Gender", "choices": ["female", "male", "diverse"]],
                       ["name": "device", "label": "Your phone", "choices": [String]()]],
        ])
        XCTAssertEqual(configured.status, 200, configured.text)
        let enrolLink = try XCTUnwrap(try object(configured)["link"] as? String)
        XCTAssertTrue(enrolLink.hasPrefix(base + "/enrol/"), enrolLink)
        let wrongKey = try await console.request("GET", "/enrol/notthekey", authenticated: false)
        XCTAssertEqual(wrongKey.status, 404)
        let created = try await console.request("POST", "/api/studies", json: ["name": "momentree", "description": "Posting <b>moments</b>"])
        XCTAssertEqual(created.status, 201, created.text)
        for (name, instructions) in [("Post a moment", "Share a <i>photo</i>"), ("Find a friend", "Search for Ana")] {
            let task = try await console.request("POST", "/api/studies/momentree/tasks", json: ["name": name, "instructions": instructions])
            XCTAssertEqual(task.status, 201, task.text)
        }

        // A tester enrols on the phone; another over HTTP (the end-to-end test's way).
        let enrolled = try phone(["enrol", enrolLink], daemon)
        let code = try XCTUnwrap(enrolled["code"] as? String)
        let secret = try XCTUnwrap(enrolled["secret"] as? String)
        let key = String(enrolLink.split(separator: "/").last ?? "")
        let other = try await TesterPhone(console: base).enrol(key: key, profile: ["gender": "male", "device": "iPhone 15"])
        let noConsent = try await console.request("POST", "/api/public/enrol/\(key)", json: ["consentVersion": 1, "profile": ["gender": "male", "device": "x"]],
                                                  authenticated: false, csrf: false)
        XCTAssertEqual(noConsent.status, 403, "no visitor token: \(noConsent.text)")

        // Recruiting two with a quota the pool cannot fill: the message says by how many.
        let recruited = try await console.request("POST", "/api/studies/momentree/recruit", json: ["count": 2, "quotas": ["gender=female:2"]])
        XCTAssertEqual(recruited.status, 201, recruited.text)
        let recruitment = try object(recruited)
        XCTAssertEqual(recruitment["shortfalls"] as? [String], ["quota gender=female: 1 of 2 (1 short)"], recruited.text)
        let invitations = try XCTUnwrap(recruitment["invitations"] as? [[String: Any]])
        let invitation = try XCTUnwrap(invitations.first { $0["participant"] as? String == code }?["code"] as? String, recruited.text)
        let otherInvitation = try XCTUnwrap(invitations.first { $0["participant"] as? String == other.code }?["code"] as? String)

        // The study's web app (issue 40): the invitation page links it with the code, the app's query and fragment kept,
        // and the link leads there (the console's own withdrawal page stands in for the app); no web app, no link.
        let webApp = try daemon.muevalctl(["study", "set", "momentree", "--web-app", "\(base)/withdraw?lang=en#start"])
        XCTAssertEqual(webApp.status, 0, webApp.stderr)
        let opened = try phone(["app", "\(base)/i/\(otherInvitation)", "\(base)/withdraw?lang=en&mueval=\(otherInvitation)#start"], daemon)
        XCTAssertEqual(opened["link"] as? String, "\(base)/withdraw?lang=en&mueval=\(otherInvitation)#start")
        let removed = try daemon.muevalctl(["study", "set", "momentree", "--no-web-app"])
        XCTAssertEqual(removed.status, 0, removed.stderr)
        _ = try phone(["app", "\(base)/i/\(otherInvitation)", "none"], daemon)

        // Before the phone has joined, the questionnaire is closed.
        do {
            try await TesterPhone(console: base).fillQuestionnaire(invitation: otherInvitation, sus: Array(repeating: 3, count: 10), seq: [:])
            XCTFail("a questionnaire before the session was taken")
        } catch let refused as TesterPhone.Refused {
            XCTAssertEqual(refused.status, 409, refused.description)
        }

        // The tester's phone joins the study with the invitation; its session is the study's.
        let simulator = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--invitation", invitation, "--duration", "2"], timeout: 120)
        XCTAssertEqual(simulator.status, 0, "\(simulator.stdout)\n\(simulator.stderr)\n\(daemon.log)")
        let joined = try await eventually(timeout: 30, "the invitation to be used; \(daemon.log)") { () -> String? in
            let status = try self.object(try await console.request("GET", "/api/studies/momentree/recruitment"))
            let mine = (status["invitations"] as? [[String: Any]])?.first { $0["code"] as? String == invitation }
            return (mine?["status"] as? String).flatMap { $0 == "invited" ? nil : $0 }
        }
        XCTAssertTrue(["accepted", "recording", "done"].contains(joined), joined)

        // The invitation page on the phone: the tasks in order, then SUS and SEQ.
        let answered = try phone(["invitation", "\(base)/i/\(invitation)", #"["Post a moment", "Find a friend"]"#], daemon)
        let study = try object(try await console.request("GET", "/api/studies/momentree"))
        let responses = try XCTUnwrap(study["responses"] as? [String: [[String: Any]]])
        let sus = try XCTUnwrap(responses["sus"]?.first { $0["participant"] as? String == code }, "\(responses)")
        XCTAssertEqual(sus["items"] as? [Int], answered["sus"] as? [Int])
        XCTAssertEqual(responses["seq"]?.filter { $0["participant"] as? String == code }.count, 2)
        XCTAssertEqual(responses["sus"]?.count, 1, "only this participant answered")

        // The other tester's phone joins too, and answers over HTTP as the end-to-end test does.
        let secondPhone = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--invitation", otherInvitation, "--duration", "2"], timeout: 120)
        XCTAssertEqual(secondPhone.status, 0, "\(secondPhone.stdout)\n\(secondPhone.stderr)")
        try await TesterPhone(console: base).fillQuestionnaire(invitation: otherInvitation, sus: [3, 3, 3, 3, 3, 3, 3, 3, 3, 3],
                                                               seq: ["Post a moment": 5, "Find a friend": 6])
        let both = try object(try await console.request("GET", "/api/studies/momentree"))
        let stored = try XCTUnwrap((both["responses"] as? [String: [[String: Any]]])?["sus"])
        XCTAssertEqual(Set(stored.compactMap { $0["participant"] as? String }), [code, other.code])

        // The pool page shows the tester's answer (markup) as text and the link's QR code.
        let poolLink = try await daemon.consoleLink()
        _ = try phone(["pool", poolLink.url, code], daemon)

        // Withdrawal on the phone: profile and invitation gone, the recording deleted on request.
        let withdrawn = try phone(["withdraw", "\(base)/withdraw", code, secret], daemon)
        let deleted = try XCTUnwrap(withdrawn["deleted"] as? [String])
        XCTAssertTrue(deleted.contains { $0.contains("your profile as tester \(code)") }, "\(deleted)")
        XCTAssertTrue(deleted.contains("your invitation to study momentree: now withdrawn"), "\(deleted)")
        XCTAssertTrue(deleted.contains { $0.hasPrefix("the recording ") }, "\(deleted)")
        let pool = try object(try await console.request("GET", "/api/pool"))
        XCTAssertEqual((pool["testers"] as? [[String: Any]])?.compactMap { $0["code"] as? String }, [other.code])
        let after = try object(try await console.request("GET", "/api/studies/momentree/recruitment"))
        let statuses = (after["invitations"] as? [[String: Any]])?.compactMap { $0["status"] as? String } ?? []
        XCTAssertTrue(statuses.contains("withdrawn"), "\(after)")

        // Guessed invitation codes count against the address as wrong pairing codes do: soon it waits.
        var refusals: [Int] = []
        for guess in ["2222222222", "3333333333", "4444444444", "5555555555"] {
            let reply = try await console.request("GET", "/i/\(guess)", authenticated: false)
            refusals.append(reply.status)
        }
        XCTAssertEqual(refusals, [404, 404, 404, 429])
    }
}
