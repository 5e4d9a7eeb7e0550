/// The System Usability Scale (Brooke 1996): ten statements, each answered 1 (strongly disagree)
/// to 5 (strongly agree), once per participant and iteration.
public struct SUSResponse: Codable, Sendable, Equatable {
    public static let statements = [
        "I think that I would like to use this system frequently.",
        "I found the system unnecessarily complex.",
        "I thought the system was easy to use.",
        "I think that I would need the support of a technical person to be able to use this system.",
        "I found the various functions in this system were well integrated.",
        "I thought there was too much inconsistency in this system.",
        "I would imagine that most people would learn to use this system very quickly.",
        "I found the system very cumbersome to use.",
        "I felt very confident using the system.",
        "I needed to learn a lot of things before I could get going with this system.",
    ]
    public static let scale = 1...5

    public var iteration: Int
    public var participant: String
    /// The ten answers in questionnaire order.
    public var items: [Int]
    public var recorded: Double

    /// Checked: exactly ten answers, each 1…5; the error names the first item that is not.
    public init(iteration: Int, participant: String, items: [Int], recorded: Double) throws(StudyError) {
        for index in Self.statements.indices {
            guard index < items.count else { throw .incompleteAnswer(questionnaire: "SUS", item: "item \(index + 1)") }
            guard Self.scale.contains(items[index]) else {
                throw .answerOutOfRange(questionnaire: "SUS", item: "item \(index + 1)", value: items[index], scale: Self.scale)
            }
        }
        guard items.count == Self.statements.count else {
            throw .tooManyAnswers(questionnaire: "SUS", given: items.count, expected: Self.statements.count)
        }
        self.iteration = iteration
        self.participant = participant
        self.items = items
        self.recorded = recorded
    }
}

/// The Single Ease Question (Sauro & Dumas 2009) after a task: "Overall, how difficult or easy
/// was the task to complete?", 1 (very difficult) to 7 (very easy).
public struct SEQResponse: Codable, Sendable, Equatable {
    public static let question = "Overall, how difficult or easy was the task to complete?"
    public static let scale = 1...7

    public var iteration: Int
    public var participant: String
    public var task: String
    public var rating: Int
    public var recorded: Double

    public init(iteration: Int, participant: String, task: String, rating: Int, recorded: Double) throws(StudyError) {
        guard Self.scale.contains(rating) else {
            throw .answerOutOfRange(questionnaire: "SEQ", item: "task \"\(task)\"", value: rating, scale: Self.scale)
        }
        self.iteration = iteration
        self.participant = participant
        self.task = task
        self.rating = rating
        self.recorded = recorded
    }
}

/// A free-text answer to one of the study's own questions.
public struct QuestionAnswer: Codable, Sendable, Equatable {
    public static let maxBytes = 8192

    public var iteration: Int
    public var participant: String
    /// The question's id.
    public var question: String
    public var text: String
    public var recorded: Double

    public init(iteration: Int, participant: String, question: String, text: String, recorded: Double) throws(StudyError) {
        guard text.contains(where: { !$0.isWhitespace }) else { throw .incompleteAnswer(questionnaire: "questions", item: "question \"\(question)\"") }
        guard text.utf8.count <= Self.maxBytes else { throw .tooLong(what: "the answer to \"\(question)\"", limit: Self.maxBytes) }
        self.iteration = iteration
        self.participant = participant
        self.question = question
        self.text = text
        self.recorded = recorded
    }
}

/// Every questionnaire answer of a study.
public struct StudyResponses: Codable, Sendable, Equatable {
    public var sus: [SUSResponse]
    public var seq: [SEQResponse]
    public var answers: [QuestionAnswer]

    public init(sus: [SUSResponse] = [], seq: [SEQResponse] = [], answers: [QuestionAnswer] = []) {
        self.sus = sus
        self.seq = seq
        self.answers = answers
    }
}

/// A study with everything recorded for it: what a study report and export are made from.
public struct StudyData: Codable, Sendable, Equatable {
    public var study: Study
    /// The sessions assigned to the study, in id order (each with its file's path).
    public var sessions: [SessionRecord]
    public var responses: StudyResponses

    public init(study: Study, sessions: [SessionRecord], responses: StudyResponses) {
        self.study = study
        self.sessions = sessions
        self.responses = responses
    }
}

// Decoding checks as the initialisers do, so that answers that arrive as JSON (the control socket)
// are refused with the item named, like answers typed at muevalctl or in the console.

extension SUSResponse {
    private enum CodingKeys: String, CodingKey { case iteration, participant, items, recorded }

    public init(from decoder: Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(iteration: try fields.decode(Int.self, forKey: .iteration), participant: try fields.decode(String.self, forKey: .participant),
                      items: try fields.decode([Int].self, forKey: .items), recorded: try fields.decode(Double.self, forKey: .recorded))
    }
}

extension SEQResponse {
    private enum CodingKeys: String, CodingKey { case iteration, participant, task, rating, recorded }

    public init(from decoder: Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(iteration: try fields.decode(Int.self, forKey: .iteration), participant: try fields.decode(String.self, forKey: .participant),
                      task: try fields.decode(String.self, forKey: .task), rating: try fields.decode(Int.self, forKey: .rating),
                      recorded: try fields.decode(Double.self, forKey: .recorded))
    }
}

extension QuestionAnswer {
    private enum CodingKeys: String, CodingKey { case iteration, participant, question, text, recorded }

    public init(from decoder: Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(iteration: try fields.decode(Int.self, forKey: .iteration), participant: try fields.decode(String.self, forKey: .participant),
                      question: try fields.decode(String.self, forKey: .question), text: try fields.decode(String.self, forKey: .text),
                      recorded: try fields.decode(Double.self, forKey: .recorded))
    }
}
