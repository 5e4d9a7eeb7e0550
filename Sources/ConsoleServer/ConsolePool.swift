internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import NIOCore
internal import QRCode
internal import SessionModel
internal import TesterPool

/// The tester pool in the console (logged in): its settings (consent text, profile fields), the
/// enrolment link with its QR code, and the testers (docs/CONSOLE.md, "Tester pool").
extension ConsoleAPI {
    func registerPool(on api: RouterGroup<ConsoleContext>) {
        let testers = environment.testers
        api.get("pool") { _, _ in
            let (settings, list) = try await pooled { try await blocking { (try testers.settings(), try testers.testers()) } }
            return try encode(PoolPage(settings: settings, link: enrolmentLink(settings), testers: list))
        }
        api.post("pool/settings") { request, context in
            let change = try await decode(PoolSettingsChange.self, from: request, context: context)
            let settings = try await pooled {
                try await blocking { try testers.configure(consent: change.consent, fields: change.fields, now: Date().timeIntervalSince1970) }
            }
            return try encode(PoolPage(settings: settings, link: enrolmentLink(settings), testers: nil))
        }
        api.post("pool/link/rotate") { _, _ in
            let settings = try await pooled { try await blocking { try testers.rotateEnrolmentKey(now: Date().timeIntervalSince1970) } }
            return try encode(PoolPage(settings: settings, link: enrolmentLink(settings), testers: nil))
        }
        api.post("studies/:study/recruit") { request, context in
            let name = context.parameters.get("study", as: String.self) ?? ""
            let form = try await decode(RecruitRequest.self, from: request, context: context)
            _ = try ConsoleInput.time(form.deadline, field: "deadline")
            let result = try await recruiting {
                let quotas = try (form.quotas ?? []).map { text throws(PoolError) in try Quota(parsing: text) }
                let requirements = try (form.requirements ?? []).map { text throws(PoolError) in try Requirement(parsing: text) }
                return try await blocking {
                    try environment.studies.recruit(study: name, count: form.count ?? 0, quotas: quotas, requirements: requirements,
                                                    iteration: form.iteration, target: form.target, deadline: form.deadline,
                                                    seed: form.seed, now: Date().timeIntervalSince1970)
                }
            }
            return try encode(RecruitReply(result), status: .created)
        }
        api.get("studies/:study/recruitment") { _, context in
            let name = context.parameters.get("study", as: String.self) ?? ""
            return try encode(try await recruiting { try await blocking { try environment.studies.status(study: name, now: Date().timeIntervalSince1970) } })
        }
        api.get("pool/link.svg") { _, _ in
            let settings = try await pooled { try await blocking { try testers.settings() } }
            guard let link = enrolmentLink(settings) else { throw ConsoleError.conflict("the console has no address yet") }
            let svg = try QRCode(encoding: link).svg()
            return Response(status: .ok, headers: [.contentType: "image/svg+xml", .cacheControl: "no-store"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: svg)))
        }
    }

    /// `/enrol/KEY` on the console's address; nil before it listens.
    func enrolmentLink(_ settings: PoolSettings) -> String? {
        publicURL().map { $0 + "/enrol/" + settings.enrolmentKey }
    }

    /// Recruiting's errors as HTTP statuses: the pool's and the study's as theirs, a recruitment that
    /// selects nobody a 409, any other refusal (a count, target or deadline) a 400.
    func recruiting<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await pooled { try await studied(body) }
        } catch let error as RecruitmentError {
            switch error {
            case .noRecruitment, .noInvitation: throw ConsoleError.notFound(error.description)
            case .nobodySelected: throw ConsoleError.conflict(error.description)
            default: throw ConsoleError.badRequest(error.description)
            }
        }
    }

    /// Pool errors as HTTP statuses: a wrong key, code or secret is a 404 or 403, a pool that
    /// cannot take the request now a 409, any other refusal a 400 with its message.
    func pooled<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PoolError {
            switch error {
            case .wrongEnrolmentKey, .noTester: throw ConsoleError.notFound(error.description)
            case .wrongSecret: throw ConsoleError.forbidden(error.description)
            case .notConfigured, .consentChanged, .poolFull: throw ConsoleError.conflict(error.description)
            default: throw ConsoleError.badRequest(error.description)
            }
        }
    }
}

/// `GET /api/pool`: the settings, the link that enrols, and the testers.
struct PoolPage: Encodable {
    var settings: PoolSettings
    var link: String?
    var testers: [Tester]?
}

/// `POST /api/pool/settings`: what changes; absent stays.
struct PoolSettingsChange: Decodable {
    var consent: String?
    var fields: [PoolField]?
}

/// `POST /api/studies/S/recruit`: the options of `muevalctl study recruit`; quotas and requirements
/// as on its command line (`gender=female:20`, `device=iPhone|iPad`), the deadline in seconds since 1970.
struct RecruitRequest: Decodable {
    var count: Int?
    var quotas: [String]?
    var requirements: [String]?
    var iteration: Int?
    var target: Int?
    var deadline: Double?
    var seed: UInt64?
}

/// The recruitment with each quota that could not be filled said plainly ("quota gender=female: 17 of 20 (3 short)").
struct RecruitReply: Encodable {
    var recruitment: Recruitment
    var invitations: [Invitation]
    var shortfalls: [String]

    init(_ result: RecruitmentResult) {
        recruitment = result.recruitment
        invitations = result.invitations
        shortfalls = result.shortfalls.map(\.description)
    }
}
