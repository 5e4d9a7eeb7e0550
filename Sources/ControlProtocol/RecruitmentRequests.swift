public import SessionModel

// The payloads of `study` that recruit from the tester pool and follow the recruitment: recruit, invitations,
// status (docs/STUDIES.md "Recruiting and remote studies").

extension ControlRequest {
    /// Chooses testers from the pool by quota sampling and invites each (`study recruit`).
    public struct Recruit: ControlPayload {
        public typealias Reply = RecruitmentResult
        public var study: String
        public var count: Int
        public var quotas: [Quota]
        public var requirements: [Requirement]
        /// nil: the recruitment's iteration, else the study's last (a first one is made when it has none).
        public var iteration: Int?
        /// Invitations of the iteration done for the study to complete; nil: all of them.
        public var target: Int?
        /// Seconds since 1970.
        public var deadline: Double?
        /// The tie breaks' seed; nil: a random one, stored with the recruitment.
        public var seed: UInt64?

        public init(study: String, count: Int, quotas: [Quota] = [], requirements: [Requirement] = [], iteration: Int? = nil,
                    target: Int? = nil, deadline: Double? = nil, seed: UInt64? = nil) {
            self.study = study
            self.count = count
            self.quotas = quotas
            self.requirements = requirements
            self.iteration = iteration
            self.target = target
            self.deadline = deadline
            self.seed = seed
        }

        public var request: ControlRequest { .study(.recruit(self)) }

        /// The compiler's decoding, but for `quotas` and `requirements`, which a request may leave out.
        public init(from decoder: Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            study = try fields.decode(String.self, forKey: .study)
            count = try fields.decode(Int.self, forKey: .count)
            quotas = try fields.decodeIfPresent([Quota].self, forKey: .quotas) ?? []
            requirements = try fields.decodeIfPresent([Requirement].self, forKey: .requirements) ?? []
            iteration = try fields.decodeIfPresent(Int.self, forKey: .iteration)
            target = try fields.decodeIfPresent(Int.self, forKey: .target)
            deadline = try fields.decodeIfPresent(Double.self, forKey: .deadline)
            seed = try fields.decodeIfPresent(UInt64.self, forKey: .seed)
        }
    }

    /// A study's invitations (`study invitations`).
    public struct ListInvitations: ControlPayload {
        public typealias Reply = [Invitation]
        public var study: String

        public init(study: String) {
            self.study = study
        }

        public var request: ControlRequest { .study(.invitations(self)) }
    }

    /// A study's recruitment, its invitations per status and each one (`study status`).
    public struct RecruitmentProgress: ControlPayload {
        public typealias Reply = RecruitmentStatus
        public var study: String

        public init(study: String) {
            self.study = study
        }

        public var request: ControlRequest { .study(.status(self)) }
    }
}
