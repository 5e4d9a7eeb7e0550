public import SessionModel
public import WireProtocol

// The payloads of `task` and `questionnaire`: what an observer and a participant record in a study
// (docs/STUDIES.md).

extension ControlRequest {
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

        /// By hand: a wrong `action` or `outcome` is refused naming the choices, and `TaskMark` is not Codable.
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
