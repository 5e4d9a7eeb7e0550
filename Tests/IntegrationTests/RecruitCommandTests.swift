import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// The tester pool and recruiting through the real daemon and muevalctl (issue 32): configure the pool,
/// enrol testers, recruit with quotas (one impossible: the message says by how many), recruit again
/// (nobody twice), invitations and status, errors in one line, and a withdrawal that deletes recordings.
final class RecruitCommandTests: XCTestCase {
    func testRecruitingFromThePoolByQuotasWithAShortfallAndAWithdrawal() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        XCTAssertTrue(try daemon.refused(["pool", "enrol", "gender=female"]).contains("the pool has no consent text yet"))
        let consent = daemon.directory + "/consent.txt"
        try "We record your touches, the screen, your voice and face for 6 months.\nWithdraw at /withdraw.".write(
            toFile: consent, atomically: true, encoding: .utf8)
        XCTAssertEqual(try daemon.ok(["pool", "configure", "--consent-file", consent, "--field", "gender=Gender:female,male,diverse",
                                       "--field", "experience=Smartphone experience:novice,expert", "--field", "device=Phone:iPhone,Android"]),
                       "pool configured: consent version 1, 3 profile fields (gender, experience, device)\n")
        XCTAssertTrue(try daemon.refused(["pool", "configure", "--field", "gender"]).contains("is not a profile field: give NAME=LABEL"))

        // Twelve testers: three women, nine others; four novices; one without a phone the study takes.
        let profiles: [(String, String, String)] = [
            ("female", "novice", "iPhone"), ("female", "expert", "Android"), ("female", "expert", "iPhone"),
            ("male", "novice", "iPhone"), ("male", "novice", "Android"), ("male", "expert", "iPhone"), ("male", "expert", "Android"),
            ("diverse", "expert", "iPhone"), ("male", "expert", "iPhone"), ("male", "novice", "Android"), ("male", "expert", "iPhone"),
            ("diverse", "expert", "iPhone"),
        ]
        var enrolled: [Enrolment] = []
        for (gender, experience, device) in profiles {
            enrolled.append(try daemon.json(Enrolment.self, ["pool", "enrol", "gender=\(gender)", "experience=\(experience)", "device=\(device)"]))
        }
        XCTAssertEqual(Set(enrolled.map(\.tester.code)).count, 12)
        XCTAssertTrue(try daemon.refused(["pool", "enrol", "gender=f", "experience=novice", "device=iPhone"])
            .contains("\"f\" is not a choice of gender: give one of female, male, diverse"))
        XCTAssertTrue(try daemon.refused(["pool", "enrol", "gender=male", "experience=novice", "device=iPhone", "age=30"])
            .contains("the pool has no profile field \"age\""))
        let list = try daemon.ok(["pool", "list"])
        XCTAssertEqual(list.split(separator: "\n").count, 13, list)
        XCTAssertTrue(try daemon.ok(["pool", "show"]).contains("testers: 12"))

        _ = try daemon.ok(["study", "create", "remote"])
        _ = try daemon.ok(["study", "task", "add", "remote", "Write a note", "--time-limit", "120"])
        XCTAssertTrue(try daemon.refused(["study", "recruit", "remote", "--count", "2", "--quota", "age=30:1"])
            .contains("the pool has no profile field \"age\" (fields: gender, experience, device)"))
        XCTAssertTrue(try daemon.refused(["study", "recruit", "remote", "--count", "2", "--quota", "gender=female:3"])
            .contains("quota gender=female:3 asks for more testers than the 2 recruited"))
        XCTAssertTrue(try daemon.refused(["study", "recruit", "remote", "--count", "2", "--deadline", "tomorrow"]).contains("is not a deadline"))
        XCTAssertTrue(try daemon.refused(["study", "recruit", "remote", "--count", "2", "--deadline", "2001-01-01"]).contains("the deadline has passed"))
        XCTAssertTrue(try daemon.refused(["study", "recruit", "nowhere", "--count", "2"]).contains("no study \"nowhere\""))
        XCTAssertEqual(try daemon.ok(["study", "status", "remote"]),
                       "study remote has recruited nobody: recruit with `muevalctl study recruit remote --count N`\n")

        // Eight with five women (the pool has three: 2 short) and three novices.
        let human = try daemon.ok(["study", "recruit", "remote", "--count", "8", "--quota", "gender=female:5", "--quota", "experience=novice:3",
                                    "--require", "device=iPhone|Android", "--seed", "7", "--deadline", "+7d"])
        XCTAssertTrue(human.contains("recruited 8 testers into remote (iteration 1, seed 7)"), human)
        XCTAssertTrue(human.contains("short: quota gender=female: 3 of 5 (2 short)\n"), human)
        var status = try daemon.json(RecruitmentStatus.self, ["study", "status", "remote"])
        XCTAssertEqual(status.count(.invited), 8)
        XCTAssertEqual(status.recruitment?.target, 8)
        XCTAssertEqual(status.recruitment?.seed, 7)
        let chosen = status.invitations.map(\.participant)
        let profileOf = Dictionary(uniqueKeysWithValues: enrolled.map { ($0.tester.code, $0.tester.profile) })
        XCTAssertEqual(chosen.filter { profileOf[$0]?["gender"] == "female" }.count, 3)
        XCTAssertEqual(chosen.filter { profileOf[$0]?["experience"] == "novice" }.count, 3)
        XCTAssertTrue(status.invitations.allSatisfy { Invitation.isCode($0.code) })

        // Again: only the four not yet in the study are left, and the count says so.
        let again = try daemon.json(RecruitmentResult.self, ["study", "recruit", "remote", "--count", "8"])
        XCTAssertEqual(again.shortfalls.map(\.description), ["count: 4 of 8 (4 short)"])
        XCTAssertEqual(again.recruitment.target, 12)
        XCTAssertTrue(Set(again.invitations.map(\.participant)).isDisjoint(with: chosen), "nobody twice")
        XCTAssertTrue(try daemon.refused(["study", "recruit", "remote", "--count", "1"]).contains("no tester in the pool qualifies: count: 0 of 1 (1 short)"))
        let invitations = try daemon.ok(["study", "invitations", "remote"])
        XCTAssertEqual(invitations.split(separator: "\n").count, 13, invitations)

        // A recruited tester records a session (started here by hand), then withdraws with their recordings.
        let leaving = chosen[0]
        _ = try daemon.ok(["start", "--study", "remote", "--iteration", "1", "--participant", leaving, "--name", "leaving-1"])
        _ = try daemon.ok(["start", "--study", "remote", "--iteration", "1", "--participant", chosen[1], "--name", "staying-1"])
        let withdrawal = try daemon.ok(["pool", "withdraw", leaving, "--delete-recordings"])
        XCTAssertTrue(withdrawal.contains("withdrew tester \(leaving)\n"), withdrawal)
        XCTAssertTrue(withdrawal.contains("sessions deleted: leaving-1\n"), withdrawal)
        XCTAssertTrue(withdrawal.contains("(study remote)"), withdrawal)
        let sessions = try daemon.ok(["sessions"])
        XCTAssertFalse(sessions.contains("leaving-1"), sessions)
        XCTAssertTrue(sessions.contains("staying-1"), sessions)
        XCTAssertFalse(try daemon.ok(["pool", "list"]).contains(leaving))
        // Without --delete-recordings the recordings stay, but nothing more is recorded.
        let keeping = try daemon.ok(["pool", "withdraw", chosen[1]])
        XCTAssertTrue(keeping.contains("sessions stopped: staying-1\n") && keeping.contains("sessions deleted: none\n"), keeping)
        XCTAssertTrue(try daemon.ok(["sessions"]).contains("staying-1"))
        XCTAssertTrue(try daemon.refused(["pool", "withdraw", leaving]).contains("no tester \"\(leaving)\" in the pool"))
        status = try daemon.json(RecruitmentStatus.self, ["study", "status", "remote"])
        XCTAssertEqual(status.count(.withdrawn), 2)
        XCTAssertEqual(status.invitations.first { $0.participant == leaving }?.status, .withdrawn)
        let shown = try daemon.json(StudyData.self, ["study", "show", "remote"])
        XCTAssertEqual(shown.study.participant(leaving)?.attributes, [:], "the profile answers recruiting copied are gone too")
        XCTAssertEqual(shown.study.participant(chosen[1])?.attributes.keys.sorted(), ["device", "experience", "gender"],
                       "kept without --delete-recordings: only the fields the quotas and requirements name")

        let human2 = try daemon.ok(["study", "status", "remote"])
        XCTAssertTrue(human2.contains("invited 10 · accepted 0 · recording 0 · done 0 · expired 0 · withdrawn 2"), human2)
        XCTAssertTrue(human2.contains("not completed: 0 of 12 done"), human2)
        XCTAssertTrue(try daemon.refused(["study", "recruit", "remote", "--count", "1", "--target", "13"])
            .contains("no tester in the pool qualifies"), "the pool is used up before the target is checked")
    }

    /// Issue 54: a study recruited into a second iteration shows the count that completes it, iteration 2's, and
    /// every iteration's apart (here written into the catalog as a first recruitment and its phones would leave it).
    func testAStudyRecruitedInTwoIterationsShowsTheCountThatCompletesIt() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        try Self.recruitInTwoIterations(daemon, study: "remote")
        let human = try daemon.ok(["study", "status", "remote"])
        XCTAssertTrue(human.hasPrefix("""
            study remote · iteration 2 · target 2 done
            invited 1 · accepted 0 · recording 0 · done 1 · expired 0 · withdrawn 0
            every iteration: invited 1 · accepted 0 · recording 0 · done 3 · expired 0 · withdrawn 0
            not completed: 1 of 2 done

            """), human)
        let status = try daemon.json(RecruitmentStatus.self, ["study", "status", "remote"])
        XCTAssertEqual(status.counts["done"], 1)
        XCTAssertEqual(status.allIterationCounts["done"], 3)
        XCTAssertEqual(status.statuses, InvitationStatus.allCases)
        XCTAssertEqual(status.invitations.map(\.iteration), [1, 1, 2, 2])
    }

    /// Study `study` as two recruitments leave it: iteration 1's two invitations done, then iteration 2's two
    /// recruited with a target of 2, one done and one invited (written into the catalog, with no phones).
    static func recruitInTwoIterations(_ daemon: TestDaemon, study: String) throws {
        _ = try daemon.ok(["study", "create", study])
        _ = try daemon.ok(["study", "iteration", "add", study])
        _ = try daemon.ok(["study", "iteration", "add", study])
        let now = Date().timeIntervalSince1970
        let invitations = [("2345abcdef", 1, InvitationStatus.done), ("3456abcdef", 1, .done), ("4567abcdef", 2, .done), ("5678abcdef", 2, .invited)]
            .map { Invitation(code: $0.0, study: study, iteration: $0.1, participant: "T\($0.0.prefix(5).uppercased())", status: $0.2,
                              created: now, expires: now + 3600) }
        try Catalog(directory: daemon.dataDirectory).createInvitations(
            invitations, participants: invitations.map { Participant(code: $0.participant, created: now) },
            recruitment: Recruitment(study: study, iteration: 2, target: 2, created: now, seed: 1))
    }

    func testTheEnrolmentLinkRotates() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        _ = try await daemon.consoleLink()  // the link names the console's address, known once it listens
        let first = try daemon.json(EnrolmentLinkReply.self, ["pool", "link"])
        XCTAssertTrue(first.path.hasPrefix("/enrol/"), first.path)
        XCTAssertEqual(try daemon.json(EnrolmentLinkReply.self, ["pool", "link"]), first)
        let rotated = try daemon.json(EnrolmentLinkReply.self, ["pool", "link", "--rotate"])
        XCTAssertNotEqual(rotated.path, first.path)
        let url = try XCTUnwrap(rotated.url, "the console is on in tests")
        XCTAssertTrue(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix(rotated.path), url)
        let qr = try daemon.ok(["pool", "link", "--qr"])
        XCTAssertTrue(qr.hasPrefix(url + "\n"), qr)
        XCTAssertGreaterThan(qr.split(separator: "\n").count, 10, "the QR code follows the link")

        let off = try await TestDaemon.start(arguments: ["--no-console"])
        defer { off.cleanUp() }
        XCTAssertTrue(try off.ok(["pool", "link"]).contains("(the web console, which serves it, is off"))
    }

    /// `pool link --json`'s object.
    private struct EnrolmentLinkReply: Decodable, Equatable {
        var path: String
        var url: String?
    }
}
