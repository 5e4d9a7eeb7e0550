public import SessionModel
public import WireProtocol

// The payloads of `study` (one per `action`), `task` and `questionnaire` (docs/STUDIES.md).

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

    public struct CreateStudy: ControlPayload {
        public typealias Reply = Study
        public var study: String
        /// The app under test's id, as its devices announce it.
        public var appId: String?
        public var description: String?
        /// The app under test on the web: an absolute http or https URL (docs/STUDIES.md "A web app").
        public var webApp: String?

        public init(study: String, appId: String? = nil, description: String? = nil, webApp: String? = nil) {
            self.study = study
            self.appId = appId
            self.description = description
            self.webApp = webApp
        }

        public var request: ControlRequest { .study(.create(self)) }

        private enum CodingKeys: String, CodingKey { case study, appId, description = "label", webApp }
    }

    /// Changes an existing study (`study set`); answered with the study as it now is.
    public struct SetStudy: ControlPayload {
        public typealias Reply = Study
        public var study: String
        /// The study's web app; nil removes it.
        public var webApp: String?

        public init(study: String, webApp: String?) {
            self.study = study
            self.webApp = webApp
        }

        public var request: ControlRequest { .study(.set(self)) }

        private enum CodingKeys: String, CodingKey { case study, webApp }

        /// `webApp` must be there: `null` removes the web app, while a request without the key (a misspelt one)
        /// is refused rather than taken for a removal.
        public init(from decoder: Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            study = try fields.decode(String.self, forKey: .study)
            guard fields.contains(.webApp) else {
                throw DecodingError.keyNotFound(CodingKeys.webApp, .init(codingPath: decoder.codingPath, debugDescription: "no webApp"))
            }
            webApp = try fields.decodeNil(forKey: .webApp) ? nil : try fields.decode(String.self, forKey: .webApp)
        }

        public func encode(to encoder: Encoder) throws {
            var fields = encoder.container(keyedBy: CodingKeys.self)
            try fields.encode(study, forKey: .study)
            try fields.encode(webApp, forKey: .webApp)
        }
    }

    public struct ListStudies: ControlPayload {
        public typealias Reply = [Study]
        public init() {}
        public var request: ControlRequest { .study(.list(self)) }
    }

    /// The study with its sessions and questionnaire answers.
    public struct ShowStudy: ControlPayload {
        public typealias Reply = StudyData
        public var study: String

        public init(study: String) {
            self.study = study
        }

        public var request: ControlRequest { .study(.show(self)) }
    }

    public struct AddIteration: ControlPayload {
        public typealias Reply = StudyIteration
        public var study: String
        /// Its number; nil: one more than the last.
        public var number: Int?
        /// What is tested: an app version or a prototype round.
        public var label: String?

        public init(study: String, number: Int? = nil, label: String? = nil) {
            self.study = study
            self.number = number
            self.label = label
        }

        public var request: ControlRequest { .study(.addIteration(self)) }

        private enum CodingKeys: String, CodingKey { case study, number = "iteration", label }
    }

    public struct AddTask: ControlPayload {
        public typealias Reply = StudyTask
        public var study: String
        public var task: StudyTask

        public init(study: String, task: StudyTask) {
            self.study = study
            self.task = task
        }

        public var request: ControlRequest { .study(.addTask(self)) }

        private enum CodingKeys: String, CodingKey { case study, task = "newTask" }
    }

    public struct AddParticipant: ControlPayload {
        public typealias Reply = Participant
        public var study: String
        /// A pseudonymous code, such as P07.
        public var code: String
        /// What the study groups by (`experience: novice`).
        public var attributes: [String: String]

        public init(study: String, code: String, attributes: [String: String] = [:]) {
            self.study = study
            self.code = code
            self.attributes = attributes
        }

        public var request: ControlRequest { .study(.addParticipant(self)) }

        private enum CodingKeys: String, CodingKey { case study, code = "participant", attributes }

        public init(from decoder: Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            study = try fields.decode(String.self, forKey: .study)
            code = try fields.decode(String.self, forKey: .code)
            attributes = try fields.decodeIfPresent([String: String].self, forKey: .attributes) ?? [:]
        }
    }

    /// One of the study's own questions, answered in free text.
    public struct AddQuestion: ControlPayload {
        public typealias Reply = StudyQuestion
        public var study: String
        public var question: StudyQuestion

        public init(study: String, question: StudyQuestion) {
            self.study = study
            self.question = question
        }

        public var request: ControlRequest { .study(.addQuestion(self)) }

        private enum CodingKeys: String, CodingKey { case study, id = "name", text = "label" }

        public init(from decoder: Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            study = try fields.decode(String.self, forKey: .study)
            question = StudyQuestion(id: try fields.decode(String.self, forKey: .id), text: try fields.decode(String.self, forKey: .text))
        }

        public func encode(to encoder: Encoder) throws {
            var fields = encoder.container(keyedBy: CodingKeys.self)
            try fields.encode(study, forKey: .study)
            try fields.encode(question.id, forKey: .id)
            try fields.encode(question.text, forKey: .text)
        }
    }

    /// Chooses testers from the pool by quota sampling and invites each (`study recruit`).
    public struct Recruit: ControlPayload {
        public typealias Reply = RecruitmentResult
        public var study: String
        public var count: Int
        public var quotas: [Quota]
        public var requirements: [Requirement]
        /// nil: the recruitment's iteration, else the study's last (a first one is made when it has none).
        public var iteration: Int?
        /// Invitations done for the study to complete; nil: all of them.
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

        private enum CodingKeys: String, CodingKey { case study, count, quotas, requirements, iteration, target, deadline, seed }

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

    /// `task`: an observer's mark of a study task in a session; answered with the stored event.
    public struct MarkTask: ControlPayload {
        public typealias Reply = StoredEvent
        public var session: String
        public var mark: TaskMark
        public var task: String
        /// The verdict, with `outcome`.
        public var outcome: TaskOutcome?
        /// Why this verdict.
        public var comment: String?

        public init(session: String, mark: TaskMark, task: String, outcome: TaskOutcome? = nil, comment: String? = nil) {
            self.session = session
            self.mark = mark
            self.task = task
            self.outcome = outcome
            self.comment = comment
        }

        public var request: ControlRequest { .task(self) }

        private enum CodingKeys: String, CodingKey { case session, mark = "action", task, outcome, comment = "text" }

        public init(from decoder: Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            session = try fields.decode(String.self, forKey: .session)
            mark = try fields.decodeChoice(TaskMark.self, forKey: .mark)
            task = try fields.decode(String.self, forKey: .task)
            outcome = try fields.decodeChoiceIfPresent(TaskOutcome.self, forKey: .outcome)
            comment = try fields.decodeIfPresent(String.self, forKey: .comment)
        }

        public func encode(to encoder: Encoder) throws {
            var fields = encoder.container(keyedBy: CodingKeys.self)
            try fields.encode(session, forKey: .session)
            try fields.encode(mark.rawValue, forKey: .mark)
            try fields.encode(task, forKey: .task)
            try fields.encodeIfPresent(outcome, forKey: .outcome)
            try fields.encodeIfPresent(comment, forKey: .comment)
        }
    }

    /// `questionnaire`: a participant's answers, stored all or none; answered with them.
    public struct RecordAnswers: ControlPayload {
        public typealias Reply = StudyResponses
        public var study: String
        public var responses: StudyResponses

        public init(study: String, responses: StudyResponses) {
            self.study = study
            self.responses = responses
        }

        public var request: ControlRequest { .questionnaire(self) }
    }
}
