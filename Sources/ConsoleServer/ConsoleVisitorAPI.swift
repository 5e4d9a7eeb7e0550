internal import SessionCore
internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import NIOCore
internal import SessionModel
internal import TesterPool

/// The pages a tester opens on their phone without a console login, and their calls under
/// `/api/public/` (docs/CONSOLE.md, "Pages for testers"): the invitation `/i/CODE` with its
/// questionnaire, enrolment `/enrol/KEY` and withdrawal `/withdraw`: the route group `ConsoleGate`
/// gives its visitors' guards, which have counted the request against its address and checked a state
/// change's visitor token; what a key or code grants is checked here, a wrong invitation code counting
/// as a wrong pairing code does.
struct ConsoleVisitorAPI: Sendable {
    let environment: ConsoleEnvironment
    let api: ConsoleAPI
    let visitors: ConsoleVisitors
    let quotas: VisitorQuotas
    let assets: ConsoleAssets

    func register(on router: RouterGroup<ConsoleContext>) {
        router.get("/i/:code") { _, context in
            do {
                _ = try await invitation(context)
                return try page(ConsolePage.invitation, context: context)
            } catch let error as ConsoleError {
                return ConsoleResponse.visitorPage(error.status, title: "No such invitation", message: Self.invitationRefusal(error))
            }
        }
        router.get("/enrol/:key") { _, context in
            do {
                _ = try await enrolment(context)
                return try page(ConsolePage.enrol, context: context)
            } catch let error as ConsoleError {
                return ConsoleResponse.visitorPage(error.status, title: "No such enrolment link",
                                                   message: "This enrolment link is not valid (any more). Ask the lab for its current link.")
            }
        }
        router.get("/withdraw") { _, context in try page(ConsolePage.withdraw, context: context) }
        let visitorAPI = router.group("api/public")
        visitorAPI.get("enrol/:key") { _, context in
            let settings = try await enrolment(context)
            guard settings.consentVersion > 0 else { throw ConsoleError.conflict(PoolError.notConfigured.description) }
            return try encode(EnrolmentForm(consent: .init(text: settings.consent, version: settings.consentVersion), fields: settings.fields))
        }
        visitorAPI.post("enrol/:key") { request, context in
            _ = try await enrolment(context)
            let form = try await api.decode(EnrolmentRequest.self, from: request, context: context)
            guard form.consent == true else { throw ConsoleError.badRequest("agree to the consent text first: without consent there is no enrolment") }
            try quotas.use(.enrolment, by: context.address, now: Date().timeIntervalSince1970)
            let enrolment = try await api.pooled {
                try await blocking {
                    try environment.testers.enrol(profile: form.profile ?? [:], consentVersion: form.consentVersion ?? 0, now: Date().timeIntervalSince1970)
                }
            }
            return try encode(Enrolled(code: enrolment.tester.code, secret: enrolment.withdrawalSecret), status: .created)
        }
        visitorAPI.post("withdraw") { request, context in
            let form = try await api.decode(WithdrawalRequest.self, from: request, context: context)
            try quotas.use(.withdrawal, by: context.address, now: Date().timeIntervalSince1970)
            let withdrawal = try await api.recruiting {
                try await environment.studies.withdraw(tester: form.code ?? "", secret: form.secret ?? "",
                                                       deleteRecordings: form.deleteRecordings == true, now: Date().timeIntervalSince1970)
            }
            return try encode(Withdrawn(withdrawal, recordingsAsked: form.deleteRecordings == true))
        }
        visitorAPI.get("invitations/:code") { _, context in
            let invitation = try await invitation(context)
            let data = try await api.studied { try await blocking { try environment.studies.data(invitation.study) } }
            return try encode(InvitationPage(invitation, data: data, now: Date().timeIntervalSince1970))
        }
        visitorAPI.post("invitations/:code/questionnaire") { request, context in
            let invitation = try await invitation(context)
            let lifecycle = InvitationLifecycle()
            if case .closed(let reason) = lifecycle.questionnaire(lifecycle.status(of: invitation, now: Date().timeIntervalSince1970)) {
                throw ConsoleError.conflict(reason)
            }
            let form = try await api.decode(QuestionnaireRequest.self, from: request, context: context)
            let responses = try await api.studied {
                try form.responses.checked(now: Date().timeIntervalSince1970)
            }
            // As that participant of that study and iteration, and nobody else.
            let whom = responses.sus.map { ($0.iteration, $0.participant) } + responses.seq.map { ($0.iteration, $0.participant) }
                + responses.answers.map { ($0.iteration, $0.participant) }
            guard whom.allSatisfy({ $0 == (invitation.iteration, invitation.participant) }) else {
                throw ConsoleError.badRequest("this invitation answers for participant \(invitation.participant) in iteration \(invitation.iteration) only")
            }
            return try encode(try await api.studied {
                try await blocking { try environment.studies.record(responses, in: invitation.study) }
            }, status: .created)
        }
    }

    /// The pool's settings, when the address names its current enrolment key.
    private func enrolment(_ context: ConsoleContext) async throws -> PoolSettings {
        let key = context.parameters.get("key", as: String.self) ?? ""
        return try await api.pooled {
            try await blocking {
                try environment.testers.checkEnrolmentKey(key)
                return try environment.testers.settings()
            }
        }
    }

    /// The invitation the address names, when the code is one; a wrong code counts against the
    /// visitor's address as a wrong pairing code does, and an address that sent too many waits.
    private func invitation(_ context: ConsoleContext) async throws -> Invitation {
        let code = context.parameters.get("code", as: String.self) ?? ""
        let check = try await blocking { [environment, address = context.address] in
            try environment.registry.checkInvitation(code, address: address, limits: environment.pairingLimits(), now: Date().timeIntervalSince1970)
        }
        switch check {
        case .found(let invitation):
            return invitation
        case .wrong:
            throw ConsoleError.notFound("no such invitation: check the link or code you were sent")
        case .refused(let retryAfter):
            throw ConsoleError.tooManyRequests("too many wrong invitation codes from your address: try again in \(Int(saturating: retryAfter.rounded(.up))) s")
        }
    }

    private static func invitationRefusal(_ error: ConsoleError) -> String {
        error.status == .tooManyRequests ? error.description
            : "This invitation link is not valid. Check that you opened the whole link you were sent."
    }

    /// A page for visitors, with the token of the visitor's cookie (`VisitorCookie` made one when there was none).
    func page(_ page: ConsolePage, context: ConsoleContext) throws -> Response {
        guard let asset = assets[page.file] else { throw ConsoleError.assetsMissing(page.file) }
        let token = visitors.token(for: context.visitor ?? "")
        let html = String(buffer: asset.bytes).replacingOccurrences(of: ConsoleVisitors.tokenPlaceholder, with: token)
        return Response(status: .ok, headers: [.contentType: asset.contentType, .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}

/// `GET /api/public/invitations/CODE`: what the tester's phone shows, and nothing else of the study
/// (no other participant, no answers but the tester's own).
struct InvitationPage: Encodable {
    struct Summary: Encodable {
        var code: String
        var status: InvitationStatus
        var iteration: Int
        var participant: String
        var expires: Double
    }
    struct StudySummary: Encodable {
        var name: String
        var description: String?
        var appId: String?
    }
    struct Task: Encodable {
        var order: Int
        var name: String
        var instructions: String?
        var timeLimit: Double?
    }
    struct Answered: Encodable {
        var sus: [SUSResponse]
        var seq: [SEQResponse]
        var answers: [QuestionAnswer]
    }

    var invitation: Summary
    var study: StudySummary
    /// In the order the phone gets them.
    var tasks: [Task]
    var questions: [StudyQuestion]
    var questionnaire = QuestionnaireItems()
    /// The study's web app with this invitation's code, while the invitation can be used: "Open the study's app".
    var appLink: String?
    /// Whether the questionnaire takes answers now: once the phone has used the invitation.
    var questionnaireOpen: Bool
    var answered: Answered

    init(_ invitation: Invitation, data: StudyData, now: Double) {
        let lifecycle = InvitationLifecycle()
        let status = lifecycle.status(of: invitation, now: now)
        self.invitation = Summary(code: invitation.code, status: status, iteration: invitation.iteration,
                                  participant: invitation.participant, expires: invitation.expires)
        study = StudySummary(name: data.study.name, description: data.study.description, appId: data.study.appId)
        appLink = lifecycle.appLink(data.study.webApp, for: invitation, now: now)
        tasks = data.study.tasks.enumerated().map { Task(order: $0.offset + 1, name: $0.element.name, instructions: $0.element.instructions,
                                                          timeLimit: $0.element.timeLimit) }
        questions = data.study.questions
        questionnaireOpen = lifecycle.questionnaire(status) == .open
        func mine(_ iteration: Int, _ participant: String) -> Bool {
            iteration == invitation.iteration && participant == invitation.participant
        }
        answered = Answered(sus: data.responses.sus.filter { mine($0.iteration, $0.participant) },
                            seq: data.responses.seq.filter { mine($0.iteration, $0.participant) },
                            answers: data.responses.answers.filter { mine($0.iteration, $0.participant) })
    }
}

/// `GET /api/public/enrol/KEY`: what the phone shows before and for enrolling.
struct EnrolmentForm: Encodable {
    struct Consent: Encodable { var text: String; var version: Int }
    var consent: Consent
    var fields: [PoolField]
}

/// The answer to an enrolment: shown once, never stored in the clear (the secret's hash is).
struct Enrolled: Encodable {
    var code: String
    var secret: String
}

/// What a withdrawal deleted (and kept), and what is still to be done, one line each, for the tester to read.
struct Withdrawn: Encodable {
    var code: String
    /// Everything done, the profile deleted; false: `pending` is left, which a retry with the same code and
    /// secret, or muevald's next start, carries out.
    var withdrawn: Bool
    var deleted: [String]
    var kept: [String] = []
    /// The steps left, without their errors (which name the lab's files): muevalctl and the log say those.
    var pending: [String] = []

    init(_ withdrawal: Withdrawal, recordingsAsked: Bool) {
        code = withdrawal.tester.code
        withdrawn = withdrawal.withdrawn
        let answers = withdrawal.tester.profile.keys.sorted()
        let profile = "your profile as tester \(withdrawal.tester.code)" + (answers.isEmpty ? "" : " (your answers to: \(answers.joined(separator: ", ")))")
        deleted = withdrawal.withdrawn ? [profile] : []
        deleted += withdrawal.invitations.map { "your invitation to study \($0.study): now withdrawn" }
        deleted += withdrawal.deletedSessions.map { "the recording \($0), with its files" }
        if !recordingsAsked, withdrawal.invitations.contains(where: { $0.sessionId != nil }) {
            kept.append("your recordings: you did not ask to delete them")
        }
        pending = withdrawal.pending.map(\.step)
        if !withdrawal.withdrawn { pending.append("delete \(profile), once the rest is done") }
    }
}
