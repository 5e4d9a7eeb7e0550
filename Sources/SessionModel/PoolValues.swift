/// The tester pool's values (issue 32, docs/STUDIES.md "Recruiting and remote studies"): what
/// `muevalctl pool …`, the console's enrolment pages and recruiting exchange. The store is
/// `TesterPool.TesterStore` (DATA/testers.sqlite), apart from recordings.

/// A question of the enrolment form.
public struct PoolField: Codable, Sendable, Equatable {
    /// The key quotas and requirements use (`gender`): letters, digits, `-`, `_` and `.`.
    public var name: String
    /// What the form asks ("Your gender").
    public var label: String
    /// The answers to choose from; empty: free text.
    public var choices: [String]

    public init(name: String, label: String, choices: [String] = []) {
        self.name = name
        self.label = label
        self.choices = choices
    }

    /// `NAME=LABEL` or `NAME=LABEL:choice1,choice2` (`muevalctl pool configure --field`).
    public init(parsing text: String) throws(PoolError) {
        guard let equals = text.firstIndex(of: "=") else { throw .badField(text) }
        let name = String(text[..<equals])
        let rest = text[text.index(after: equals)...]
        let label: Substring
        var choices: [String] = []
        if let colon = rest.firstIndex(of: ":") {
            label = rest[..<colon]
            choices = rest[rest.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false)
                .map { String($0).trimmingSpaces }
            guard choices.allSatisfy({ !$0.isEmpty }) else { throw .badField(text) }
        } else {
            label = rest
        }
        guard !label.trimmingSpaces.isEmpty else { throw .badField(text) }
        self.init(name: name, label: label.trimmingSpaces, choices: choices)
    }

    public var isFreeText: Bool { choices.isEmpty }
}

/// What the lab set: the consent text testers agree to, the profile form, the enrolment link's key.
public struct PoolSettings: Codable, Sendable, Equatable {
    /// Empty until the lab writes one; nobody can enrol before.
    public var consent: String
    /// 1, 2, 3…: grows with every change of the text; each tester keeps the version they agreed to.
    public var consentVersion: Int
    public var fields: [PoolField]
    /// The secret part of the enrolment link (`/enrol/KEY`); rotating it retires the old link.
    public var enrolmentKey: String
    public var updated: Double

    public init(consent: String, consentVersion: Int, fields: [PoolField], enrolmentKey: String, updated: Double) {
        self.consent = consent
        self.consentVersion = consentVersion
        self.fields = fields
        self.enrolmentKey = enrolmentKey
        self.updated = updated
    }

    public func field(_ name: String) -> PoolField? { fields.first { $0.name == name } }
}

/// A tester in the pool, known by a pseudonymous code (`T7K2QM`), which becomes their participant code.
public struct Tester: Codable, Sendable, Equatable {
    public var code: String
    /// Field name → answer.
    public var profile: [String: String]
    /// The consent text's version the tester agreed to.
    public var consentVersion: Int
    public var enrolled: Double

    public init(code: String, profile: [String: String], consentVersion: Int, enrolled: Double) {
        self.code = code
        self.profile = profile
        self.consentVersion = consentVersion
        self.enrolled = enrolled
    }
}

/// A new tester and their withdrawal secret, which is shown this once: the pool keeps only its hash.
public struct Enrolment: Codable, Sendable, Equatable {
    public var tester: Tester
    public var withdrawalSecret: String

    public init(tester: Tester, withdrawalSecret: String) {
        self.tester = tester
        self.withdrawalSecret = withdrawalSecret
    }
}

/// What a withdrawal deleted or changed, for the tester and the lab to read, and what it still has to do.
public struct Withdrawal: Codable, Sendable, Equatable {
    /// The profile as it was: deleted once `withdrawn`, until then still in the pool. Empty answers when
    /// the withdrawal had finished before this request (a retry after it).
    public var tester: Tester
    /// Their invitations, now `withdrawn` (those already done keep their session unless deleted).
    public var invitations: [Invitation]
    /// Names of the sessions deleted with their files (only on request).
    public var deletedSessions: [String]
    /// Names of the tester's sessions that were still open and were stopped: nothing more is recorded.
    public var stoppedSessions: [String]
    /// Every step done and the profile deleted; false: `pending` says what is left, which a retry or
    /// muevald's next start carries out.
    public var withdrawn: Bool
    public var pending: [PendingStep]

    public init(tester: Tester, invitations: [Invitation], deletedSessions: [String], stoppedSessions: [String] = [],
                withdrawn: Bool = true, pending: [PendingStep] = []) {
        self.tester = tester
        self.invitations = invitations
        self.deletedSessions = deletedSessions
        self.stoppedSessions = stoppedSessions
        self.withdrawn = withdrawn
        self.pending = pending
    }

    /// A step of a withdrawal that failed this time: what it is ("delete session remote-3") and why.
    public struct PendingStep: Codable, Sendable, Equatable, CustomStringConvertible {
        public var step: String
        public var error: String

        public init(step: String, error: String) {
            self.step = step
            self.error = error
        }

        public var description: String { "\(step): \(error)" }
    }
}

/// `FIELD=VALUE:N`: exactly N of the selection have that answer, when the pool allows.
public struct Quota: Codable, Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public var value: String
    public var count: Int

    public init(field: String, value: String, count: Int) {
        self.field = field
        self.value = value
        self.count = count
    }

    public init(parsing text: String) throws(PoolError) {
        guard let equals = text.firstIndex(of: "="), let colon = text.lastIndex(of: ":"), equals < colon,
              let count = Int(text[text.index(after: colon)...]), count >= 0
        else { throw .badQuota(text) }
        let field = String(text[..<equals]), value = String(text[text.index(after: equals)..<colon])
        guard !field.isEmpty, !value.isEmpty else { throw .badQuota(text) }
        self.init(field: field, value: value, count: count)
    }

    public var description: String { "\(field)=\(value):\(count)" }
}

/// `FIELD=VALUE` or `FIELD=A|B`: every selected tester has one of the values.
public struct Requirement: Codable, Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public var values: [String]

    public init(field: String, values: [String]) {
        self.field = field
        self.values = values
    }

    public init(parsing text: String) throws(PoolError) {
        guard let equals = text.firstIndex(of: "=") else { throw .badRequirement(text) }
        let field = String(text[..<equals])
        let values = text[text.index(after: equals)...].split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard !field.isEmpty, values.allSatisfy({ !$0.isEmpty }) else { throw .badRequirement(text) }
        self.init(field: field, values: values)
    }

    public func admits(_ profile: [String: String]) -> Bool {
        profile[field].map(values.contains) ?? false
    }

    public var description: String { "\(field)=\(values.joined(separator: "|"))" }
}

/// A quota, or the count, that the pool could not fill.
public struct Shortfall: Codable, Sendable, Equatable, CustomStringConvertible {
    /// The quota (`gender=female`), or nil for the count.
    public var quota: String?
    public var selected: Int
    public var wanted: Int

    public init(quota: String?, selected: Int, wanted: Int) {
        self.quota = quota
        self.selected = selected
        self.wanted = wanted
    }

    /// "quota gender=female: 17 of 20 (3 short)", "count: 6 of 8 (2 short)".
    public var description: String {
        "\(quota.map { "quota \($0)" } ?? "count"): \(selected) of \(wanted) (\(wanted - selected) short)"
    }
}

/// Why a pool change, an enrolment or a recruitment was refused, worded for whoever asked.
public enum PoolError: Error, Equatable, Sendable, CustomStringConvertible {
    case notConfigured
    case consentChanged(agreed: Int, current: Int)
    case unknownField(String, known: [String])
    case missingField(String, label: String)
    case notAChoice(field: String, value: String, choices: [String])
    case tooLong(what: String, limit: Int)
    case controlCharacters(what: String)
    /// A character that changes the text's direction or breaks its line, named by its code point (`U+202E`).
    case layoutCharacter(what: String, scalar: String)
    case tooMany(what: String, limit: Int)
    case duplicateField(String)
    case poolFull(limit: Int)
    /// A thousand codes drawn in a row were all taken.
    case noFreeCode
    case noTester(String)
    case wrongSecret
    case wrongEnrolmentKey
    case badField(String)
    case badQuota(String)
    case badRequirement(String)
    case quotaOverCount(Quota, count: Int)

    public var description: String {
        switch self {
        case .notConfigured:
            "the pool has no consent text yet: write one with `muevalctl pool configure --consent-file FILE`"
        case .consentChanged(let agreed, let current):
            "the consent text changed (version \(agreed) was agreed to, the current one is \(current)): read it again"
        case .unknownField(let name, let known):
            "the pool has no profile field \"\(name)\"" + (known.isEmpty ? " (it has none)" : " (fields: \(known.joined(separator: ", ")))")
        case .missingField(let name, let label):
            "the profile has no answer to \"\(label)\" (\(name))"
        case .notAChoice(let field, let value, let choices):
            "\"\(value)\" is not a choice of \(field): give one of \(choices.joined(separator: ", "))"
        case .tooLong(let what, let limit):
            "\(what) is too long: at most \(limit) bytes"
        case .controlCharacters(let what):
            "\(what) has control characters (such as a line break): give one line of text"
        case .layoutCharacter(let what, let scalar):
            "\(what) has the invisible character \(scalar), which breaks the line or reverses the text around it: give one line of plain text"
        case .tooMany(let what, let limit):
            "too many \(what): at most \(limit)"
        case .duplicateField(let name):
            "the profile field \"\(name)\" is given twice"
        case .poolFull(let limit):
            "the pool is full (\(limit) testers, pool.max_testers)"
        case .noFreeCode:
            "no free tester code was found (a thousand drawn were all taken): try again"
        case .noTester(let code):
            "no tester \"\(code)\" in the pool (see `muevalctl pool list`)"
        case .wrongSecret:
            "that tester code and withdrawal secret do not match"
        case .wrongEnrolmentKey:
            "this enrolment link is not valid (any more): ask the lab for its current link"
        case .badField(let text):
            "\"\(text)\" is not a profile field: give NAME=LABEL (free text) or NAME=LABEL:choice1,choice2"
        case .badQuota(let text):
            "\"\(text)\" is not a quota: give FIELD=VALUE:N, such as gender=female:20"
        case .badRequirement(let text):
            "\"\(text)\" is not a requirement: give FIELD=VALUE or FIELD=A|B, such as device=iPhone"
        case .quotaOverCount(let quota, let count):
            "quota \(quota) asks for more testers than the \(count) recruited (--count)"
        }
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
