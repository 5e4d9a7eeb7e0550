import ControlProtocol
import DaemonTestSupport
import DeviceSimulator
import Foundation
import SessionModel
import XCTest

/// The thesis's visionary scenario (2.3.2, issue 32) through the real chain, nobody in the room: twelve testers
/// enrol from their phones (consent, then a profile), the developer recruits eight by quotas (one of which the pool
/// cannot fill: the message says by how many), each invited phone (muevalsim) pairs by its invitation over TLS,
/// receives its tasks from muevald and does them (some fail, one gives up), fills SUS and SEQ on the phone; the
/// study completes by its target, its report is built and announced (hook and `study status`); a tester withdraws
/// and their data goes.
final class RemoteStudyEndToEndTests: XCTestCase {
    static let study = "wordpress-remote"
    static let tasks: [(name: String, success: String, instructions: String)] = [
        ("Open the blog", "event:BlogOpened", "Open your blog from the list"),
        ("Edit blog posting", "event:PostDrafted", "Change the title of the first post and save it as a draft"),
        ("Publish blog posting", "view:BlogsViewController", "Publish the draft, then go back to your blogs"),
    ]
    /// Twelve testers: ten with an iPhone, of whom only three are novices (the novice quota of five cannot be filled:
    /// 2 short); five women and five men among the iPhone owners.
    static let profiles: [[String: String]] = [
        ["gender": "female", "experience": "novice", "device": "iPhone", "age": "18-24"],
        ["gender": "male", "experience": "novice", "device": "iPhone", "age": "25-34"],
        ["gender": "female", "experience": "novice", "device": "iPhone", "age": "35-49"],
        ["gender": "female", "experience": "expert", "device": "iPhone", "age": "25-34"],
        ["gender": "male", "experience": "expert", "device": "iPhone", "age": "18-24"],
        ["gender": "female", "experience": "expert", "device": "iPhone", "age": "25-34"],
        ["gender": "male", "experience": "expert", "device": "iPhone", "age": "35-49"],
        ["gender": "female", "experience": "expert", "device": "iPhone", "age": "18-24"],
        ["gender": "male", "experience": "expert", "device": "iPhone", "age": "25-34"],
        ["gender": "male", "experience": "expert", "device": "iPhone", "age": "35-49"],
        ["gender": "female", "experience": "novice", "device": "Android", "age": "25-34"],
        ["gender": "male", "experience": "novice", "device": "Android", "age": "18-24"],
    ]
    /// How each of the first six invited testers does the tasks (muevalsim's participant options).
    static let behaviours: [[String]] = [
        [],
        ["--fail-task", "Edit blog posting"],
        ["--abandon-task", "Publish blog posting"],
        ["--wander", "0.3"],
        [],
        ["--misclick-rate", "0.3"],
    ]

    private var directory = ""
    private var certificates: TestCertificates!

    override func setUpWithError() throws {
        if let reason = TestCertificates.unavailableReason { throw XCTSkip("CANNOT RUN HERE: " + reason) }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("remote-\(UUID().uuidString.prefix(8))").path
        certificates = try TestCertificates(directory: directory)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// `pool link --json`'s object.
    private struct EnrolmentLink: Decodable {
        var url: String?
    }

    func testRecruitedTestersDoTheirTasksOnTheirPhonesAndTheStudyCompletesItself() async throws {
        let hookOutput = directory + "/completed.env"
        let config = directory + "/muevald.toml"
        try """
            [server]
            tls_certificate = "\(certificates.certificateFile)"
            tls_key = "\(certificates.keyFile)"
            [transcription]
            enabled = false
            [studies]
            completion_command = "env | grep ^MUEVAL_ | sort > \(hookOutput)"
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        defer { daemon.cleanUp() }
        let study = Self.study

        // The lab writes the consent text and the profile's fields; the enrolment link goes on a poster (QR code).
        let consent = directory + "/consent.txt"
        try "We record your touches, the screen, your voice and your face while you test the app. Recordings are kept for 6 months. Withdraw any time on the withdrawal page with your code and secret."
            .write(toFile: consent, atomically: true, encoding: .utf8)
        _ = try daemon.ok(["pool", "configure", "--consent-file", consent,
                            "--field", "gender=Gender:female,male,diverse", "--field", "experience=Smartphone experience:novice,expert",
                            "--field", "device=Phone:iPhone,Android", "--field", "age=Age:18-24,25-34,35-49,50+"])
        _ = try await daemon.consoleLink()  // the link names the console's address, known once it listens
        let link = try daemon.json(EnrolmentLink.self, ["pool", "link"])
        let enrolURL = try XCTUnwrap(link.url.flatMap(URL.init(string:)), "the console serves the enrolment page")
        let key = enrolURL.lastPathComponent
        let console = "\(try XCTUnwrap(enrolURL.scheme))://\(try XCTUnwrap(enrolURL.host)):\(try XCTUnwrap(enrolURL.port))"

        // Twelve testers enrol from their phones.
        var enrolled: [(code: String, secret: String, profile: [String: String])] = []
        for profile in Self.profiles {
            let phone = TesterPhone(console: console)
            let tester = try await phone.enrol(key: key, profile: profile)
            enrolled.append((tester.code, tester.secret, profile))
        }
        XCTAssertEqual(Set(enrolled.map(\.code)).count, 12, "every tester has a code of their own")
        let pool = try daemon.ok(["pool", "list"])
        for tester in enrolled { XCTAssertTrue(pool.contains(tester.code), pool) }

        // The study: one iteration, three tasks.
        _ = try daemon.ok(["study", "create", study, "--app-id", "org.wordpress", "--description", "Blogging on the go"])
        _ = try daemon.ok(["study", "iteration", "add", study, "--label", "2.7"])
        for task in Self.tasks {
            _ = try daemon.ok(["study", "task", "add", study, task.name, "--success", task.success, "--instructions", task.instructions,
                                "--time-limit", "600"])
        }

        // Recruit eight iPhone owners: four women, five novices (only three exist: 2 short). Done when six are done.
        let recruit = try daemon.muevalctl(["study", "recruit", study, "--count", "8", "--quota", "gender=female:4",
                                            "--quota", "experience=novice:5", "--require", "device=iPhone",
                                            "--target", "6", "--deadline", "+7d", "--seed", "7"])
        XCTAssertEqual(recruit.status, 0, recruit.stderr)
        XCTAssertTrue((recruit.stdout + recruit.stderr).contains("experience=novice: 3 of 5 (2 short)"), recruit.stdout + recruit.stderr)
        let status = try daemon.json(RecruitmentStatus.self, ["study", "status", study])
        let invitations = status.invitations
        XCTAssertEqual(invitations.count, 8)
        XCTAssertEqual(status.recruitment?.target, 6)
        let byCode = Dictionary(uniqueKeysWithValues: enrolled.map { ($0.code, $0) })
        let chosen = invitations.compactMap { byCode[$0.participant] }
        XCTAssertEqual(chosen.count, 8, "each invitation is a recruited tester: \(invitations)")
        XCTAssertEqual(Set(chosen.map(\.code)).count, 8, "never a tester twice")
        XCTAssertTrue(chosen.allSatisfy { $0.profile["device"] == "iPhone" }, "the requirement holds")
        XCTAssertEqual(chosen.filter { $0.profile["gender"] == "female" }.count, 4, "the gender quota is met exactly")
        XCTAssertEqual(chosen.filter { $0.profile["experience"] == "novice" }.count, 3, "every novice there is")
        XCTAssertTrue(invitations.allSatisfy { $0.status == .invited })

        // Six invited phones join over TLS by their invitation, get their tasks from muevald and do them.
        let listening = try await daemon.ctl.call(ControlRequest.Status()).listen
        let tlsPort = try XCTUnwrap(listening?.port)
        var sessionOf: [String: Int64] = [:]
        for (index, behaviour) in Self.behaviours.enumerated() {
            let code = invitations[index].code
            let participant = invitations[index].participant
            let run = try runProcess(TestDaemon.executable("muevalsim"), [
                "--connect", "127.0.0.1:\(tlsPort)", "--ca", certificates.caFile, "--invitation", code,
                "--scenario", "wordpress", "--seed", String(300 + index), "--speed", "40", "--ack-timeout", "20", "--json", "--shake", "--frame-timing",
            ] + behaviour, timeout: 180)
            XCTAssertEqual(run.status, 0, "muevalsim for \(participant): \(run.stderr)")
            let report = try JSONDecoder().decode(SimulationReport.self, from: Data(run.stdout.utf8))
            let device = try XCTUnwrap(report.devices.first)
            XCTAssertEqual(device.tasks?.map(\.name), Self.tasks.map(\.name), "the tasks came from muevald, in order")
            XCTAssertNotNil(device.questionnaire, "the welcome names the questionnaire page")

            // The session stopped by itself (the phone said goodbye); its invitation is done.
            let done = try await eventually(timeout: 30, "invitation \(code) done") { () -> Invitation? in
                try daemon.json(RecruitmentStatus.self, ["study", "status", study]).invitations.first { $0.code == code && $0.status == .done }
            }
            sessionOf[participant] = try XCTUnwrap(done.sessionId)

            // On the phone, at the end: SUS and SEQ through the invitation's page.
            let phone = TesterPhone(console: console)
            try await phone.fillQuestionnaire(invitation: code, sus: [4, 2, 4, 1, 5, 2, 5, 1, 4, 2].map { min(5, $0 + index % 2) },
                                              seq: Dictionary(uniqueKeysWithValues: Self.tasks.map { ($0.name, 4 + index % 3) }))
        }

        // The sixth done invitation met the target: the study completed, its report was built and announced.
        let completed = try await eventually(timeout: 120, "the study's completion") { () -> Recruitment? in
            let recruitment = try daemon.json(RecruitmentStatus.self, ["study", "status", study]).recruitment
            return recruitment?.completed != nil ? recruitment : nil
        }
        XCTAssertEqual(completed.completionReason, .target)
        let reportPath = try XCTUnwrap(completed.report)
        let report = try String(contentsOfFile: reportPath, encoding: .utf8)
        for task in Self.tasks { XCTAssertTrue(report.contains(task.name), "the study report shows \(task.name)") }
        let hook = try await eventually(timeout: 30, "the completion hook") { () -> String? in
            try? String(contentsOfFile: hookOutput, encoding: .utf8)
        }
        XCTAssertTrue(hook.contains("MUEVAL_STUDY=\(study)"), hook)
        XCTAssertTrue(hook.contains("MUEVAL_REASON=target"), hook)
        XCTAssertTrue(hook.contains("MUEVAL_REPORT=\(reportPath)"), hook)

        // Answers from the phones are the study's; the give-up is the tester's own mark.
        let data = try daemon.json(StudyData.self, ["study", "show", study])
        XCTAssertEqual(Set(data.responses.sus.map(\.participant)), Set(invitations.prefix(6).map(\.participant)), "SUS from every phone")
        let export = try daemon.ok(["study", "export", study, "--format", "csv"])
        let gaveUp = export.split(separator: "\n").filter { $0.contains("Publish blog posting") && $0.contains("gave up") }
        XCTAssertEqual(gaveUp.count, 1, export)
        XCTAssertTrue(gaveUp.first?.contains("tester") == true, "the give-up is marked by the tester: \(export)")

        // A tester withdraws from the phone, with their recordings.
        let leaving = try XCTUnwrap(byCode[invitations[0].participant])
        let lines = try await TesterPhone(console: console).withdraw(code: leaving.code, secret: leaving.secret, deleteRecordings: true)
        XCTAssertFalse(lines.isEmpty)
        let after = try daemon.ok(["pool", "list"])
        XCTAssertFalse(after.contains(leaving.code), "the profile is gone: \(after)")
        let withdrawn = try daemon.json(RecruitmentStatus.self, ["study", "status", study])
        XCTAssertEqual(withdrawn.invitations.first { $0.participant == leaving.code }?.status, .withdrawn)
        let session = try XCTUnwrap(sessionOf[leaving.code])
        let sessions = try daemon.json([SessionRecord].self, ["sessions"])
        XCTAssertFalse(sessions.contains { $0.id == session }, "their session \(session) is deleted")
    }
}
