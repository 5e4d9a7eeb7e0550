internal import Foundation
package import SessionModel

/// Every status a study invitation and a study's recruitment take (issue 39; docs/SESSION-CORE.md
/// "Invitations and recruitments"), decided in one place: inputs in, decisions out, no clock, no randomness
/// and no I/O (`now` and new codes come in), so that every transition is unit-tested (InvitationLifecycleTests).
///
/// An invitation's status lives in the catalog, which only stores what is decided here
/// (`InvitationTransition`, applied only while the invitation still has a status it starts from). Who asks:
/// the sessions' state machine (a phone presents a code, its session opens, records and stops), `Studies`
/// (recruiting, reading invitations, a tester's withdrawal), the console (the invitation page and its
/// questionnaire) and the study completion service (when a study completes).
///
///     invited ──presented──▶ accepted ──records──▶ recording ──stops──▶ done
///        └──past its expiry──▶ expired        (every status) ──tester withdraws──▶ withdrawn
///     recruitment: recruited ──target met or deadline passed──▶ completed ──recruit again──▶ reopened
package struct InvitationLifecycle: Sendable {
    package init() {}

    // MARK: Invitations

    /// One invitation per participant, with the codes given (fresh, unused), usable for `lifetime` seconds.
    package func invite(_ participants: [Participant], codes: [String], study: String, iteration: Int, lifetime: Double,
                        now: Double) -> [Invitation] {
        zip(participants, codes).map { participant, code in
            Invitation(code: code, study: study, iteration: iteration, participant: participant.code, created: now, expires: now + lifetime)
        }
    }

    /// Whether the invitation is past its expiry: only one no phone presented expires, since a tester who
    /// presented theirs is taking part.
    package func isExpired(_ invitation: Invitation, now: Double) -> Bool {
        invitation.status == .invited && invitation.expires <= now
    }

    /// The invitation's status at `now`: expired once its time is up, whether or not the catalog stored it yet.
    package func status(of invitation: Invitation, now: Double) -> InvitationStatus {
        isExpired(invitation, now: now) ? .expired : invitation.status
    }

    /// The expiries due among `invitations`, for the catalog to store.
    package func expiries(of invitations: [Invitation], now: Double) -> [InvitationTransition] {
        invitations.filter { isExpired($0, now: now) }.map { InvitationTransition(code: $0.code, from: [.invited], to: .expired) }
    }

    /// What a phone presenting an invitation's code comes to.
    package enum Presentation: Equatable, Sendable {
        /// No invitation has the code, or it expired: a wrong code, counted as one. `expiry`: to store.
        case unknown(expiry: InvitationTransition?)
        /// Bound to the phone that presented it first.
        case boundToAnotherDevice
        case withdrawn
        /// Its session ended.
        case used
        /// Bound to this phone, whose session is no longer open (stopped or deleted).
        case sessionEnded
        /// The phone's: open its study session.
        case openSession(Invitation)

        /// What the phone is told when it is refused for another reason than a wrong code.
        package var refusal: String? {
            switch self {
            case .withdrawn: "this invitation was withdrawn: its tester left the study's pool"
            case .used: "this invitation was used: its session has ended; ask the study's organiser for a new one"
            case .sessionEnded: "this invitation's session has ended; ask the study's organiser for a new one"
            case .boundToAnotherDevice: "this invitation is in use by another phone"
            case .unknown, .openSession: nil
            }
        }
    }

    /// Device `device` presents the catalog's invitation (nil: no invitation has the code) at `now`.
    package func presented(_ invitation: Invitation?, by device: String, now: Double) -> Presentation {
        guard let invitation, invitation.status != .expired else { return .unknown(expiry: nil) }
        if isExpired(invitation, now: now) { return .unknown(expiry: expiries(of: [invitation], now: now).first) }
        if let bound = invitation.deviceId, bound != device { return .boundToAnotherDevice }
        switch invitation.status {
        case .withdrawn: return .withdrawn
        case .done: return .used
        case .invited, .accepted, .recording, .expired:  // (expired ones are unknown, above)
            return invitation.sessionId == nil ? .openSession(invitation) : .sessionEnded
        }
    }

    /// The invitation's study session was made for `device`: the invitation is bound to both, last, so that a
    /// phone whose session could not be made may try again.
    package func accepted(_ invitation: Invitation, session: Int64, device: String) -> InvitationTransition {
        InvitationTransition(code: invitation.code, from: [invitation.status], to: .accepted, session: session, device: device)
    }

    /// Its session records (the phone's first connection into it).
    package func recording(_ code: String) -> InvitationTransition {
        InvitationTransition(code: code, from: [.accepted], to: .recording)
    }

    /// Its session stopped: the invitation is done (unless its tester withdrew meanwhile: withdrawn stays).
    package func sessionStopped(_ code: String) -> InvitationTransition {
        InvitationTransition(code: code, from: [.accepted, .recording], to: .done)
    }

    /// Whether the questionnaire (`/i/CODE`) takes answers: once the phone has joined the study with the
    /// invitation; not before, nor once it expired or was withdrawn. `.closed` says why, to the tester.
    package enum Questionnaire: Equatable, Sendable {
        case open
        case closed(String)
    }

    package func questionnaire(_ status: InvitationStatus) -> Questionnaire {
        switch status {
        case .accepted, .recording, .done: .open
        case .invited: .closed("the questionnaire opens once your phone has joined the study with this invitation")
        case .expired: .closed("this invitation has expired")
        case .withdrawn: .closed("this invitation was withdrawn")
        }
    }

    /// The study's web app as the invitation page (`/i/CODE`) links it: `mueval=CODE` in its query, where the web
    /// capture library looks for an invitation (CaptureLibrary/Web/capture.js), the rest of the query and the fragment
    /// kept. Only while the invitation can still be used; not once done, expired or withdrawn. nil: no link.
    package func appLink(_ webApp: String?, for invitation: Invitation, now: Double) -> String? {
        switch status(of: invitation, now: now) {
        case .invited, .accepted, .recording: break
        case .done, .expired, .withdrawn: return nil
        }
        guard let webApp, var components = URLComponents(string: webApp, encodingInvalidCharacters: false) else { return nil }
        components.percentEncodedQueryItems = (components.percentEncodedQueryItems ?? []).filter { $0.name != "mueval" }
            + [URLQueryItem(name: "mueval", value: invitation.code)]
        return components.string
    }

    // MARK: A tester's withdrawal

    /// What a tester's withdrawal does, decided at once and carried out step by step by `Studies`, each step
    /// safe to repeat (a pending withdrawal is carried out again, from the start).
    package struct Withdrawal: Equatable, Sendable {
        /// Every invitation of the tester's that is not withdrawn yet becomes so.
        package var invitations: [InvitationTransition]
        /// The tester's sessions in those studies: open ones are stopped, and with `deleteRecordings` all are deleted.
        package var sessions: [SessionRecord]
        package var stop: [Int64]
        package var delete: [Int64]
        /// The participant entries' profile answers are emptied (with `deleteRecordings`).
        package var forgetAttributes: Bool
    }

    /// Tester `code` withdraws, holding `invitations`; `sessions`: the catalog's, `open`: those open now.
    package func withdrawal(of code: String, invitations: [Invitation], sessions: [SessionRecord], open: Set<Int64>,
                            deleteRecordings: Bool) -> Withdrawal {
        let studies = Set(invitations.map(\.study))
        let opened = Set(invitations.compactMap(\.sessionId))
        // The sessions the invitations opened, and the tester's other sessions in those studies (recorded in the lab).
        let theirs = sessions.filter { opened.contains($0.id) || ($0.participant == code && $0.study.map(studies.contains) == true) }
        return Withdrawal(
            invitations: invitations.filter { $0.status != .withdrawn }.map {
                InvitationTransition(code: $0.code, from: Set(InvitationStatus.allCases).subtracting([.withdrawn]), to: .withdrawn)
            },
            sessions: theirs, stop: theirs.map(\.id).filter(open.contains), delete: deleteRecordings ? theirs.map(\.id) : [],
            forgetAttributes: deleteRecordings)
    }

    // MARK: Recruitments

    /// How a recruitment changed, and what the lifecycle stream says of it (what tracks recruitments, the
    /// completion service and the console, follows it).
    package struct RecruitmentTransition: Equatable, Sendable {
        package enum Change: Equatable, Sendable {
            /// Made, or raised while it runs.
            case recruited
            /// Made to run again after it completed.
            case reopened
            case completed(Recruitment.CompletionReason)
        }

        package var recruitment: Recruitment
        package var change: Change
        package var event: SessionEvent
    }

    /// Whether an invitation still counts towards a target: a withdrawn or expired tester's place is taken
    /// by one recruited later.
    package func canStillBeDone(_ invitation: Invitation) -> Bool {
        invitation.status != .withdrawn && invitation.status != .expired
    }

    /// A recruitment's invitations, among the study's: those of its iteration. What its target counts, what
    /// completes the study, and what `study status` and the console show as its progress: one count, decided here.
    package func invitations(in iteration: Int, _ invitations: [Invitation]) -> [Invitation] {
        invitations.filter { $0.iteration == iteration }
    }

    /// Study `study` recruits `recruited` more testers into `iteration`, beside `invitations` (its existing ones):
    /// the recruitment that results. Its target is by default every invitation of the iteration that can still be
    /// done, so that recruiting again raises it; a completed study is reopened, to complete anew when the new target
    /// is met. (Before issue 54 the default counted every iteration's, a target the study could not reach.)
    package func recruit(_ study: String, earlier: Recruitment?, invitations: [Invitation], recruited: Int, iteration: Int,
                         target: Int?, deadline: Double?, seed: UInt64, now: Double) throws(RecruitmentError) -> RecruitmentTransition {
        let live = self.invitations(in: iteration, invitations).count(where: canStillBeDone) + recruited
        let wanted = target ?? live
        guard wanted <= live else { throw .targetAboveInvited(target: wanted, invited: live) }
        let recruitment = Recruitment(study: study, iteration: iteration, target: wanted, deadline: deadline ?? earlier?.deadline,
                                      created: earlier?.created ?? now, seed: seed, report: earlier?.report)
        return RecruitmentTransition(recruitment: recruitment, change: earlier?.completed != nil ? .reopened : .recruited,
                                     event: .recruitmentChanged(study: study))
    }

    /// Whether a recruitment completes now.
    package enum Verdict: Equatable, Sendable {
        case complete(Recruitment.CompletionReason)
        /// Not yet: look again at `deadline` (nil: only when invitations change).
        case wait(deadline: Double?)
        case alreadyCompleted
    }

    /// The target counts first: a study whose last invitation was done just before its deadline completed by
    /// its target, even when this is only looked at after the deadline (a restart). A deadline that is no time
    /// at all (from a damaged catalog) is none, not one that passed.
    package func verdict(_ recruitment: Recruitment, invitations: [Invitation], now: Double) -> Verdict {
        if recruitment.completed != nil { return .alreadyCompleted }
        if done(recruitment, invitations) >= recruitment.target { return .complete(.target) }
        guard let deadline = recruitment.deadline, deadline.isFinite else { return .wait(deadline: nil) }
        return deadline <= now ? .complete(.deadline) : .wait(deadline: deadline)
    }

    /// The recruitment's invitations that are done: the study's progress towards its target.
    package func done(_ recruitment: Recruitment, _ invitations: [Invitation]) -> Int {
        self.invitations(in: recruitment.iteration, invitations).count { $0.status == .done }
    }

    /// Study `study`'s recruitment at a glance (`study status`, the console's study page), its progress counted
    /// as `verdict` counts it.
    package func status(of study: String, recruitment: Recruitment?, invitations: [Invitation]) -> RecruitmentStatus {
        RecruitmentStatus(study: study, recruitment: recruitment,
                          recruited: recruitment.map { self.invitations(in: $0.iteration, invitations) } ?? [], invitations: invitations)
    }

    /// The recruitment completed at `now` for `reason`, its report at `report` (nil: it could not be written).
    package func completed(_ recruitment: Recruitment, reason: Recruitment.CompletionReason, report: String?,
                           now: Double) -> RecruitmentTransition {
        var completed = recruitment
        completed.completed = now
        completed.completionReason = reason
        completed.report = report
        return RecruitmentTransition(recruitment: completed, change: .completed(reason),
                                     event: .studyCompleted(study: recruitment.study, reason: reason, report: report ?? ""))
    }
}
