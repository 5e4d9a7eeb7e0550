import SessionCore
import SessionModel
import Testing

/// Every transition of an invitation and a recruitment (docs/SESSION-CORE.md "Invitations and recruitments"),
/// without a catalog, a clock or a phone.
@Suite struct InvitationLifecycleTests {
    private let lifecycle = InvitationLifecycle()

    private func invitation(_ status: InvitationStatus = .invited, expires: Double = 1_000, session: Int64? = nil,
                            device: String? = nil, iteration: Int = 1, code: String = "k7m2qh9xpt") -> Invitation {
        Invitation(code: code, study: "momentree", iteration: iteration, participant: "T7K2QM", status: status, created: 0,
                   expires: expires, sessionId: session, deviceId: device)
    }

    @Test func invitedForItsLifetimeWithTheCodesGiven() {
        let invited = lifecycle.invite([Participant(code: "TA", created: 5), Participant(code: "TB", created: 5)], codes: ["aaaa", "bbbb"],
                                       study: "s", iteration: 2, lifetime: 100, now: 5)
        #expect(invited.map(\.code) == ["aaaa", "bbbb"])
        #expect(invited.map(\.participant) == ["TA", "TB"])
        #expect(invited.allSatisfy { $0.status == .invited && $0.created == 5 && $0.expires == 105 && $0.iteration == 2 })
    }

    @Test func onlyAnInvitationNoPhonePresentedExpiresAndOnlyOnceItsTimeIsUp() {
        #expect(!lifecycle.isExpired(invitation(expires: 1_000), now: 999))
        #expect(lifecycle.isExpired(invitation(expires: 1_000), now: 1_000), "its expiry itself is past")
        for status in InvitationStatus.allCases where status != .invited {
            #expect(!lifecycle.isExpired(invitation(status, expires: 1_000), now: 5_000), "\(status) does not expire")
        }
        #expect(!lifecycle.isExpired(invitation(expires: .nan), now: 5_000), "no time at all is never past")
        #expect(lifecycle.status(of: invitation(expires: 10), now: 20) == .expired, "expired before the catalog says so")
        #expect(lifecycle.status(of: invitation(.recording, expires: 10), now: 20) == .recording)
        #expect(lifecycle.expiries(of: [invitation(expires: 10, code: "a"), invitation(expires: 30, code: "b"),
                                        invitation(.accepted, expires: 10, code: "c")], now: 20)
                == [InvitationTransition(code: "a", from: [.invited], to: .expired)])
    }

    @Test func aPresentedInvitationOpensItsSessionOrIsRefusedWithAReason() {
        #expect(lifecycle.presented(nil, by: "phone", now: 10) == .unknown(expiry: nil))
        #expect(lifecycle.presented(invitation(.expired), by: "phone", now: 10) == .unknown(expiry: nil))
        #expect(lifecycle.presented(invitation(expires: 10), by: "phone", now: 10)
                == .unknown(expiry: InvitationTransition(code: "k7m2qh9xpt", from: [.invited], to: .expired)), "expired now: stored")
        #expect(lifecycle.presented(invitation(), by: "phone", now: 10) == .openSession(invitation()))
        #expect(lifecycle.presented(invitation(.accepted, device: "other"), by: "phone", now: 10) == .boundToAnotherDevice)
        #expect(lifecycle.presented(invitation(.withdrawn), by: "phone", now: 10) == .withdrawn)
        #expect(lifecycle.presented(invitation(.done, session: 4, device: "phone"), by: "phone", now: 10) == .used)
        #expect(lifecycle.presented(invitation(.recording, session: 4, device: "phone"), by: "phone", now: 10) == .sessionEnded,
                "its session was stopped or deleted while the catalog still says recording")
        #expect(InvitationLifecycle.Presentation.used.refusal == "this invitation was used: its session has ended; ask the study's organiser for a new one")
        #expect(InvitationLifecycle.Presentation.openSession(invitation()).refusal == nil)
    }

    @Test func acceptedThenRecordingThenDoneEachFromWhereItStands() {
        #expect(lifecycle.accepted(invitation(), session: 4, device: "phone")
                == InvitationTransition(code: "k7m2qh9xpt", from: [.invited], to: .accepted, session: 4, device: "phone"),
                "accepted only from the status it was read with")
        #expect(lifecycle.recording("k7m2qh9xpt") == InvitationTransition(code: "k7m2qh9xpt", from: [.accepted], to: .recording))
        #expect(lifecycle.sessionStopped("k7m2qh9xpt") == InvitationTransition(code: "k7m2qh9xpt", from: [.accepted, .recording], to: .done),
                "a withdrawn invitation whose session the withdrawal stops stays withdrawn")
    }

    @Test func theQuestionnaireOpensOnceThePhoneJoined() {
        for status in [InvitationStatus.accepted, .recording, .done] { #expect(lifecycle.questionnaire(status) == .open) }
        #expect(lifecycle.questionnaire(.invited) == .closed("the questionnaire opens once your phone has joined the study with this invitation"))
        #expect(lifecycle.questionnaire(.expired) == .closed("this invitation has expired"))
        #expect(lifecycle.questionnaire(.withdrawn) == .closed("this invitation was withdrawn"))
    }

    @Test func theStudysWebAppIsLinkedWithTheCodeOnlyWhileTheInvitationCanBeUsed() {
        let app = "https://lab.example.org/notes/?lang=en&q=a%20b#start"
        let linked = "https://lab.example.org/notes/?lang=en&q=a%20b&mueval=k7m2qh9xpt#start"
        for status in [InvitationStatus.invited, .accepted, .recording] {
            #expect(lifecycle.appLink(app, for: invitation(status), now: 10) == linked, "\(status): the query and fragment kept, the code added")
        }
        for status in [InvitationStatus.done, .expired, .withdrawn] {
            #expect(lifecycle.appLink(app, for: invitation(status), now: 10) == nil, "\(status): no link")
        }
        #expect(lifecycle.appLink(app, for: invitation(expires: 10), now: 10) == nil, "expired now, though the catalog still says invited")
        #expect(lifecycle.appLink(nil, for: invitation(), now: 10) == nil, "no web app, no link")
        #expect(lifecycle.appLink("http://192.168.1.20:8000", for: invitation(), now: 10) == "http://192.168.1.20:8000?mueval=k7m2qh9xpt")
        #expect(lifecycle.appLink("https://lab.example.org/?mueval=old&x=1", for: invitation(), now: 10)
                == "https://lab.example.org/?x=1&mueval=k7m2qh9xpt", "a code already in the URL is replaced, not doubled")
    }

    @Test func aWithdrawalIsOneDecisionOverTheTestersInvitationsAndSessions() {
        let invitations = [invitation(.recording, session: 4, device: "phone", code: "a"), invitation(.withdrawn, code: "b")]
        let sessions = [
            SessionRecord(id: 4, uuid: "u4", name: "momentree-T7K2QM", sensors: [], state: .recording, created: 0, path: "/4", events: 0),
            SessionRecord(id: 5, uuid: "u5", name: "lab", sensors: [], state: .stopped, created: 0, path: "/5", events: 0,
                          assignment: StudyAssignment(study: "momentree", iteration: 1, participant: "T7K2QM")),
            SessionRecord(id: 6, uuid: "u6", name: "other", sensors: [], state: .stopped, created: 0, path: "/6", events: 0,
                          assignment: StudyAssignment(study: "other", iteration: 1, participant: "T7K2QM")),
        ]
        let keep = lifecycle.withdrawal(of: "T7K2QM", invitations: invitations, sessions: sessions, open: [4], deleteRecordings: false)
        #expect(keep.invitations.map(\.code) == ["a"], "one already withdrawn is left as it is")
        #expect(keep.invitations.first?.to == .withdrawn && keep.invitations.first?.from.contains(.withdrawn) == false)
        #expect(keep.sessions.map(\.id) == [4, 5], "the invitation's session and the tester's others in that study, not in another")
        #expect(keep.stop == [4] && keep.delete.isEmpty && !keep.forgetAttributes)
        let delete = lifecycle.withdrawal(of: "T7K2QM", invitations: invitations, sessions: sessions, open: [], deleteRecordings: true)
        #expect(delete.stop.isEmpty && delete.delete == [4, 5] && delete.forgetAttributes)
        let again = lifecycle.withdrawal(of: "T7K2QM", invitations: invitations.map { var done = $0; done.status = .withdrawn; return done },
                                         sessions: [], open: [], deleteRecordings: true)
        #expect(again.invitations.isEmpty && again.delete.isEmpty, "carried out again, nothing is left to do")
    }

    @Test func recruitingMakesRaisesAndReopensARecruitment() throws {
        let existing = [invitation(.done, code: "a"), invitation(.withdrawn, code: "b"), invitation(.expired, code: "c"), invitation(code: "d")]
        let made = try lifecycle.recruit("momentree", earlier: nil, invitations: [], recruited: 3, iteration: 1, target: nil,
                                         deadline: 500, seed: 7, now: 10)
        let first = made.recruitment
        #expect(made.change == .recruited && made.event == .recruitmentChanged(study: "momentree"))
        #expect(first == Recruitment(study: "momentree", iteration: 1, target: 3, deadline: 500, created: 10, seed: 7))
        let more = try lifecycle.recruit("momentree", earlier: first, invitations: existing, recruited: 2, iteration: 1,
                                         target: nil, deadline: nil, seed: 8, now: 20)
        let raised = more.recruitment
        #expect(more.change == .recruited)
        #expect(raised.target == 4, "withdrawn and expired places are taken by the new testers: 2 live + 2 new")
        #expect(raised.created == 10 && raised.deadline == 500, "the first recruitment's creation and deadline stay")
        var completed = first
        completed.completed = 30
        completed.completionReason = .target
        let again = try lifecycle.recruit("momentree", earlier: completed, invitations: existing, recruited: 1, iteration: 1,
                                          target: 3, deadline: nil, seed: 9, now: 40)
        let reopened = again.recruitment
        #expect(again.change == .reopened && again.event == .recruitmentChanged(study: "momentree"))
        #expect(reopened.completed == nil && reopened.completionReason == nil && reopened.target == 3)
        #expect(throws: RecruitmentError.targetAboveInvited(target: 9, invited: 3)) {
            try lifecycle.recruit("momentree", earlier: nil, invitations: existing, recruited: 1, iteration: 1, target: 9,
                                  deadline: nil, seed: 1, now: 10)
        }
    }

    @Test func aRecruitmentCompletesByTargetByDeadlineOrWaits() {
        func verdict(done: Int, target: Int = 3, deadline: Double? = 1_000, completed: Double? = nil, now: Double) -> InvitationLifecycle.Verdict {
            let recruitment = Recruitment(study: "s", iteration: 1, target: target, deadline: deadline, created: 0, seed: 1, completed: completed)
            return lifecycle.verdict(recruitment, invitations: (0..<done).map { invitation(.done, code: "c\($0)") }, now: now)
        }
        #expect(verdict(done: 3, now: 500) == .complete(.target))
        #expect(verdict(done: 4, now: 500) == .complete(.target), "more done than the target")
        #expect(verdict(done: 2, now: 1_000) == .complete(.deadline), "the deadline itself has passed")
        #expect(verdict(done: 2, now: 999) == .wait(deadline: 1_000))
        #expect(verdict(done: 0, deadline: nil, now: 1e12) == .wait(deadline: nil), "no deadline: only the target completes it")
        #expect(verdict(done: 3, now: 2_000) == .complete(.target), "met before the deadline was looked at: the target counts")
        #expect(verdict(done: 3, completed: 60, now: 2_000) == .alreadyCompleted)
        #expect(verdict(done: 0, deadline: .nan, now: 2_000) == .wait(deadline: nil), "a deadline that is no time is none")
    }

    @Test func countsOnlyDoneInvitationsOfTheRecruitedIteration() {
        let recruitment = Recruitment(study: "s", iteration: 2, target: 2, deadline: 50, created: 0, seed: 1)
        let invitations = [(InvitationStatus.done, 2), (.done, 1), (.recording, 2), (.expired, 2), (.done, 2)].enumerated().map { index, item in
            invitation(item.0, iteration: item.1, code: "c\(index)")
        }
        #expect(lifecycle.done(recruitment, invitations) == 2)
        #expect(lifecycle.verdict(recruitment, invitations: invitations, now: 10) == .complete(.target))
    }

    /// Issue 54: the recruitment's invitations are its iteration's, for the target's default and its limit as for
    /// the count done and the status shown.
    @Test func aRecruitmentCountsItsIterationsInvitationsOnly() throws {
        let earlier = [invitation(.done, iteration: 1, code: "a"), invitation(.done, iteration: 1, code: "b"),
                       invitation(.invited, iteration: 2, code: "c"), invitation(.withdrawn, iteration: 2, code: "d")]
        let moved = try lifecycle.recruit("momentree", earlier: nil, invitations: earlier, recruited: 1, iteration: 2, target: nil,
                                          deadline: nil, seed: 1, now: 10).recruitment
        #expect(moved.target == 2, "c and the new one: iteration 1's are not this recruitment's")
        #expect(throws: RecruitmentError.targetAboveInvited(target: 3, invited: 2)) {
            try lifecycle.recruit("momentree", earlier: nil, invitations: earlier, recruited: 1, iteration: 2, target: 3,
                                  deadline: nil, seed: 1, now: 10)
        }
        let status = lifecycle.status(of: "momentree", recruitment: moved, invitations: earlier)
        #expect(status.count(.done) == lifecycle.done(moved, earlier) && status.count(.done) == 0)
        #expect(status.count(.invited) == 1 && status.count(.withdrawn) == 1)
        #expect(status.allIterationCounts == ["invited": 1, "accepted": 0, "recording": 0, "done": 2, "expired": 0, "withdrawn": 1])
        #expect(status.statuses == [.invited, .accepted, .recording, .done, .expired, .withdrawn])
        let nobody = lifecycle.status(of: "momentree", recruitment: nil, invitations: [])
        #expect(nobody.counts.values.allSatisfy { $0 == 0 } && nobody.counts.count == 6)
    }

    @Test func aCompletedRecruitmentSaysWhenWhyAndWhere() {
        let recruitment = Recruitment(study: "s", iteration: 1, target: 2, created: 0, seed: 1)
        let transition = lifecycle.completed(recruitment, reason: .deadline, report: nil, now: 60)
        let completed = transition.recruitment
        #expect(completed.completed == 60 && completed.completionReason == .deadline && completed.report == nil)
        #expect(transition.change == .completed(.deadline))
        #expect(transition.event == .studyCompleted(study: "s", reason: .deadline, report: ""), "no report: an empty path on the stream")
        #expect(lifecycle.verdict(completed, invitations: [], now: 70) == .alreadyCompleted)
    }
}
