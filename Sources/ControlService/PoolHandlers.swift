internal import ControlProtocol
internal import SessionCore
internal import SessionModel
internal import TesterPool

/// `pool`'s actions: the tester pool's settings, its enrolment link, its testers, a withdrawal.
struct PoolHandlers: Sendable {
    let studies: Studies
    /// nil: the web console, which serves the enrolment pages, is off.
    let console: (any ConsoleLogins)?

    func run(_ command: ControlRequest.PoolCommand, writer: ControlReplyWriter, now: Double) async throws {
        let pool = studies.pool
        switch command {
        case .configure(let configure):
            try await writer.succeed(configure, with: try pool.configure(consent: configure.consent, fields: configure.fields, now: now))
        case .show(let show):
            let settings = try pool.settings()
            try await writer.succeed(show, with: PoolOverview(settings: settings, testers: try pool.testers().count,
                                                              enrolmentURL: try link(settings).url))
        case .list(let list):
            try await writer.succeed(list, with: try pool.testers())
        case .link(let request):
            let settings = request.rotate ? try pool.rotateEnrolmentKey(now: now) : try pool.settings()
            try await writer.succeed(request, with: try link(settings))
        case .enrol(let enrol):
            try await writer.succeed(enrol, with: try pool.enrol(profile: enrol.profile, consentVersion: try pool.settings().consentVersion, now: now))
        case .withdraw(let withdraw):
            try await writer.succeed(withdraw, with: try await studies.withdraw(tester: withdraw.tester, deleteRecordings: withdraw.deleteRecordings, now: now))
        }
    }

    /// `/enrol/KEY`, on the console's address when it is on.
    private func link(_ settings: PoolSettings) throws -> EnrolmentLink {
        let path = "/enrol/" + settings.enrolmentKey
        return EnrolmentLink(path: path, url: try console.map { try $0.baseURL() + path })
    }
}
