// The `study` command: its `action` chooses the payload, one per action (docs/STUDIES.md). The payloads are in
// StudyDefinitionRequests.swift and RecruitmentRequests.swift; `task` and `questionnaire` in StudyRecordRequests.swift.

/// What `study` does: the request's `action`.
public enum StudyAction: String, Codable, Sendable, CaseIterable {
    case create, list, show
    /// Changes an existing study: its web app.
    case set
    case addIteration = "iteration-add"
    case addTask = "task-add"
    case addParticipant = "participant-add"
    case addQuestion = "question-add"
    /// Recruiting from the tester pool (docs/STUDIES.md "Recruiting and remote studies").
    case recruit, invitations, status
}

extension ControlRequest {
    /// `study`: one of its actions, each with its own payload.
    public enum StudyCommand: Sendable, Equatable, Codable {
        case create(CreateStudy)
        case list(ListStudies)
        case show(ShowStudy)
        case set(SetStudy)
        case addIteration(AddIteration)
        case addTask(AddTask)
        case addParticipant(AddParticipant)
        case addQuestion(AddQuestion)
        case recruit(Recruit)
        case invitations(ListInvitations)
        case status(RecruitmentProgress)

        private enum Keys: String, CodingKey { case action }

        public var action: StudyAction {
            switch self {
            case .create: .create
            case .list: .list
            case .show: .show
            case .set: .set
            case .addIteration: .addIteration
            case .addTask: .addTask
            case .addParticipant: .addParticipant
            case .addQuestion: .addQuestion
            case .recruit: .recruit
            case .invitations: .invitations
            case .status: .status
            }
        }

        public init(from decoder: Decoder) throws {
            let action = try decoder.container(keyedBy: Keys.self).decodeChoice(StudyAction.self, forKey: .action)
            do {
                switch action {
                case .create: self = .create(try CreateStudy(from: decoder))
                case .list: self = .list(try ListStudies(from: decoder))
                case .show: self = .show(try ShowStudy(from: decoder))
                case .set: self = .set(try SetStudy(from: decoder))
                case .addIteration: self = .addIteration(try AddIteration(from: decoder))
                case .addTask: self = .addTask(try AddTask(from: decoder))
                case .addParticipant: self = .addParticipant(try AddParticipant(from: decoder))
                case .addQuestion: self = .addQuestion(try AddQuestion(from: decoder))
                case .recruit: self = .recruit(try Recruit(from: decoder))
                case .invitations: self = .invitations(try ListInvitations(from: decoder))
                case .status: self = .status(try RecruitmentProgress(from: decoder))
                }
            } catch let error as DecodingError {
                throw ControlRequestError("study \(action.rawValue)", error)
            }
        }

        public func encode(to encoder: Encoder) throws {
            var fields = encoder.container(keyedBy: Keys.self)
            try fields.encode(action, forKey: .action)
            switch self {
            case .create(let payload): try payload.encode(to: encoder)
            case .list(let payload): try payload.encode(to: encoder)
            case .show(let payload): try payload.encode(to: encoder)
            case .set(let payload): try payload.encode(to: encoder)
            case .addIteration(let payload): try payload.encode(to: encoder)
            case .addTask(let payload): try payload.encode(to: encoder)
            case .addParticipant(let payload): try payload.encode(to: encoder)
            case .addQuestion(let payload): try payload.encode(to: encoder)
            case .recruit(let payload): try payload.encode(to: encoder)
            case .invitations(let payload): try payload.encode(to: encoder)
            case .status(let payload): try payload.encode(to: encoder)
            }
        }
    }
}
