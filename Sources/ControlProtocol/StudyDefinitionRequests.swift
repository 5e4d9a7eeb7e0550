public import SessionModel

// The payloads of `study` that define a study: create, set, list, show and add its parts (docs/STUDIES.md).

extension ControlRequest {
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

        /// The compiler's decoding, but for `attributes`, which a request may leave out.
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
}
