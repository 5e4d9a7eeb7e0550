public import SessionModel

// The payloads of `pool` (one per `action`): the tester pool (docs/STUDIES.md "Recruiting and remote studies").

/// What `pool` does: the request's `action`.
public enum PoolAction: String, Codable, Sendable, CaseIterable {
    case configure, show, list, link, enrol, withdraw
}

extension ControlRequest {
    /// `pool`: one of its actions, each with its own payload.
    public enum PoolCommand: Sendable, Equatable, Codable {
        case configure(ConfigurePool)
        case show(ShowPool)
        case list(ListTesters)
        case link(EnrolmentLinkRequest)
        case enrol(EnrolTester)
        case withdraw(WithdrawTester)

        private enum Keys: String, CodingKey { case action }

        public var action: PoolAction {
            switch self {
            case .configure: .configure
            case .show: .show
            case .list: .list
            case .link: .link
            case .enrol: .enrol
            case .withdraw: .withdraw
            }
        }

        public init(from decoder: Decoder) throws {
            let action = try decoder.container(keyedBy: Keys.self).decodeChoice(PoolAction.self, forKey: .action)
            do {
                switch action {
                case .configure: self = .configure(try ConfigurePool(from: decoder))
                case .show: self = .show(try ShowPool(from: decoder))
                case .list: self = .list(try ListTesters(from: decoder))
                case .link: self = .link(try EnrolmentLinkRequest(from: decoder))
                case .enrol: self = .enrol(try EnrolTester(from: decoder))
                case .withdraw: self = .withdraw(try WithdrawTester(from: decoder))
                }
            } catch let error as DecodingError {
                throw ControlRequestError("pool \(action.rawValue)", error)
            }
        }

        public func encode(to encoder: Encoder) throws {
            var fields = encoder.container(keyedBy: Keys.self)
            try fields.encode(action, forKey: .action)
            switch self {
            case .configure(let payload): try payload.encode(to: encoder)
            case .show(let payload): try payload.encode(to: encoder)
            case .list(let payload): try payload.encode(to: encoder)
            case .link(let payload): try payload.encode(to: encoder)
            case .enrol(let payload): try payload.encode(to: encoder)
            case .withdraw(let payload): try payload.encode(to: encoder)
            }
        }
    }

    /// Sets the consent text (a new version when it changed) and the profile fields, each when given.
    public struct ConfigurePool: ControlPayload {
        public typealias Reply = PoolSettings
        public var consent: String?
        /// Replaces every field; nil keeps them.
        public var fields: [PoolField]?

        public init(consent: String? = nil, fields: [PoolField]? = nil) {
            self.consent = consent
            self.fields = fields
        }

        public var request: ControlRequest { .pool(.configure(self)) }
    }

    /// The settings and how many testers the pool has.
    public struct ShowPool: ControlPayload {
        public typealias Reply = PoolOverview
        public init() {}
        public var request: ControlRequest { .pool(.show(self)) }
    }

    public struct ListTesters: ControlPayload {
        public typealias Reply = [Tester]
        public init() {}
        public var request: ControlRequest { .pool(.list(self)) }
    }

    /// The enrolment link; with `rotate`, a new one that retires the old.
    public struct EnrolmentLinkRequest: ControlPayload {
        public typealias Reply = EnrolmentLink
        public var rotate: Bool

        public init(rotate: Bool = false) {
            self.rotate = rotate
        }

        public var request: ControlRequest { .pool(.link(self)) }

        private enum CodingKeys: String, CodingKey { case rotate }

        public init(from decoder: Decoder) throws {
            rotate = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Bool.self, forKey: .rotate) ?? false
        }
    }

    /// Enrols a tester the lab met in person, who agreed to the current consent text (on paper, say).
    public struct EnrolTester: ControlPayload {
        public typealias Reply = Enrolment
        public var profile: [String: String]

        public init(profile: [String: String]) {
            self.profile = profile
        }

        public var request: ControlRequest { .pool(.enrol(self)) }
    }

    /// Deletes a tester's profile and withdraws their invitations; with `deleteRecordings`, their sessions too.
    public struct WithdrawTester: ControlPayload {
        public typealias Reply = Withdrawal
        public var tester: String
        public var deleteRecordings: Bool

        public init(tester: String, deleteRecordings: Bool = false) {
            self.tester = tester
            self.deleteRecordings = deleteRecordings
        }

        public var request: ControlRequest { .pool(.withdraw(self)) }

        private enum CodingKeys: String, CodingKey { case tester, deleteRecordings }

        public init(from decoder: Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            tester = try fields.decode(String.self, forKey: .tester)
            deleteRecordings = try fields.decodeIfPresent(Bool.self, forKey: .deleteRecordings) ?? false
        }
    }
}

/// `pool show`'s answer.
public struct PoolOverview: Codable, Sendable, Equatable {
    public var settings: PoolSettings
    public var testers: Int
    /// Where testers enrol; nil while the web console is off.
    public var enrolmentURL: String?

    public init(settings: PoolSettings, testers: Int, enrolmentURL: String?) {
        self.settings = settings
        self.testers = testers
        self.enrolmentURL = enrolmentURL
    }
}

/// `pool link`'s answer: the path on the console's address, and the whole URL when the console is on.
public struct EnrolmentLink: Codable, Sendable, Equatable {
    /// `/enrol/KEY`.
    public var path: String
    public var url: String?

    public init(path: String, url: String?) {
        self.path = path
        self.url = url
    }
}
