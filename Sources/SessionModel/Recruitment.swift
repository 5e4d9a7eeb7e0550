/// Where a recruited tester's invitation stands (issue 32, docs/STUDIES.md "Recruiting and remote
/// studies"). The raw values are the exact words commands, pages and the catalog use.
public enum InvitationStatus: String, Codable, Sendable, Equatable, CaseIterable {
    /// Sent, not yet presented by a phone.
    case invited
    /// A phone presented it and is bound to it; no recording yet.
    case accepted
    /// The study session it opened is recording.
    case recording
    /// That session ended.
    case done
    /// Not presented before it expired.
    case expired
    /// The tester withdrew from the pool.
    case withdrawn
}

/// A single-use link or code that pairs one tester's phone to a session of one study.
public struct Invitation: Codable, Sendable, Equatable {
    /// `Invitation.codeLength` characters of `Invitation.alphabet`; the link is `/i/CODE` on the console.
    public var code: String
    public var study: String
    public var iteration: Int
    /// The participant's code, which is the tester's pool code.
    public var participant: String
    public var status: InvitationStatus
    /// Seconds since 1970.
    public var created: Double
    public var expires: Double
    /// The study session the invitation opened, once a phone presented it.
    public var sessionId: Int64?
    /// The device bound to the invitation: the first that presented it; another device is refused.
    public var deviceId: String?

    public init(code: String, study: String, iteration: Int, participant: String, status: InvitationStatus = .invited,
                created: Double, expires: Double, sessionId: Int64? = nil, deviceId: String? = nil) {
        self.code = code
        self.study = study
        self.iteration = iteration
        self.participant = participant
        self.status = status
        self.created = created
        self.expires = expires
        self.sessionId = sessionId
        self.deviceId = deviceId
    }

    /// No 0/1/i/l/o, which read alike: 31 characters, so ten of them are about 2^49 codes.
    public static let alphabet = Array("23456789abcdefghjkmnpqrstuvwxyz")
    public static let codeLength = 10

    /// A fresh random code.
    public static func newCode<Generator: RandomNumberGenerator>(using generator: inout Generator) -> String {
        String((0..<codeLength).map { _ in alphabet.randomElement(using: &generator)! })
    }

    /// Whether `text` has the form of a code (the check before any lookup).
    public static func isCode(_ text: String) -> Bool {
        text.count == codeLength && text.allSatisfy(alphabet.contains)
    }
}

/// A study's recruitment: how many recruited testers must be done, by when, and whether it completed.
public struct Recruitment: Codable, Sendable, Equatable {
    public var study: String
    /// The iteration recruited testers record.
    public var iteration: Int
    /// How many invitations must be `done` for the study to complete.
    public var target: Int
    /// When the study completes even if the target is not met (seconds since 1970).
    public var deadline: Double?
    public var created: Double
    /// The seed of the quota sampling's tie breaks, so that a selection can be explained afterwards.
    public var seed: UInt64
    /// When the study completed.
    public var completed: Double?
    /// Why it completed.
    public var completionReason: CompletionReason?
    /// The study report's path, once built.
    public var report: String?

    public init(study: String, iteration: Int, target: Int, deadline: Double? = nil, created: Double, seed: UInt64,
                completed: Double? = nil, completionReason: CompletionReason? = nil, report: String? = nil) {
        self.study = study
        self.iteration = iteration
        self.target = target
        self.deadline = deadline
        self.created = created
        self.seed = seed
        self.completed = completed
        self.completionReason = completionReason
        self.report = report
    }

    /// Why a recruitment completed; the raw values are the words commands, events and the catalog use.
    public enum CompletionReason: String, Codable, Sendable {
        case target
        case deadline
    }
}

/// Why an invitation or recruitment change was refused, worded for whoever asked.
public enum RecruitmentError: Error, Equatable, Sendable, CustomStringConvertible {
    case noInvitation(String)
    /// It changed between reading it and storing a change of it (its tester withdrew): read it again.
    case invitationChanged(String)
    case noRecruitment(study: String)
    case badCount(Int)
    case badTarget(Int)
    case targetAboveInvited(target: Int, invited: Int)
    case deadlinePassed
    case nobodySelected([Shortfall])

    public var description: String {
        switch self {
        case .noInvitation(let code):
            "no invitation \"\(code)\""
        case .invitationChanged(let code):
            "invitation \"\(code)\" changed meanwhile (was its tester withdrawn?): try again"
        case .noRecruitment(let study):
            "study \"\(study)\" has recruited nobody: recruit with `muevalctl study recruit \(study) --count N`"
        case .badCount(let count):
            "\(count) cannot be a number of testers: give 1 or more"
        case .badTarget(let target):
            "\(target) cannot be a target: give 1 or more sessions done"
        case .targetAboveInvited(let target, let invited):
            "a target of \(target) sessions done is more than the \(invited) testers invited: lower --target or recruit more"
        case .deadlinePassed:
            "the deadline has passed already: give a date in the future, or +7d"
        case .nobodySelected(let shortfalls):
            "no tester in the pool qualifies: " + shortfalls.map(\.description).joined(separator: "; ")
        }
    }
}

/// What `muevalctl study recruit` did: the recruitment as it now stands, the invitations it sent, and
/// the quotas (or the count) it could not fill.
public struct RecruitmentResult: Codable, Sendable, Equatable {
    public var recruitment: Recruitment
    public var invitations: [Invitation]
    /// Empty when every quota and the count were met.
    public var shortfalls: [Shortfall]

    public init(recruitment: Recruitment, invitations: [Invitation], shortfalls: [Shortfall]) {
        self.recruitment = recruitment
        self.invitations = invitations
        self.shortfalls = shortfalls
    }
}

/// A study's recruitment at a glance (`muevalctl study status`, the console's study page), counted as the session
/// core's `InvitationLifecycle` decides: the recruitment's invitations are those of its iteration.
public struct RecruitmentStatus: Codable, Sendable, Equatable {
    public var study: String
    /// Nil when the study recruited nobody.
    public var recruitment: Recruitment?
    /// The recruitment's invitations per status, every status present: `done` is the study's progress, what
    /// completes it when it reaches the target. Before issue 54, every iteration's (now `allIterationCounts`).
    public var counts: [String: Int]
    /// Every invitation of the study per status, every iteration's, every status present.
    public var allIterationCounts: [String: Int]
    /// Every status in the order an invitation goes through them: the counts' keys, in the order to show them.
    public var statuses: [InvitationStatus]
    /// Every invitation of the study, every iteration's.
    public var invitations: [Invitation]

    /// `recruited`: the recruitment's invitations, as `InvitationLifecycle` chose them among `invitations`.
    public init(study: String, recruitment: Recruitment?, recruited: [Invitation], invitations: [Invitation]) {
        self.study = study
        self.recruitment = recruitment
        self.invitations = invitations
        counts = Self.counts(recruited)
        allIterationCounts = Self.counts(invitations)
        statuses = InvitationStatus.allCases
    }

    /// The recruitment's invitations with `status`.
    public func count(_ status: InvitationStatus) -> Int { counts[status.rawValue] ?? 0 }

    private static func counts(_ invitations: [Invitation]) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: InvitationStatus.allCases.map { status in
            (status.rawValue, invitations.count { $0.status == status })
        })
    }
}
