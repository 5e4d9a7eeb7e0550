/// A usability study (issue 16, docs/STUDIES.md): an app tested in iterations, each by a few
/// participants doing the same tasks while being recorded, then answering questionnaires.
public struct Study: Codable, Sendable, Equatable {
    /// The study's key in every command (`momentree`): letters, digits, `-`, `_` and `.`.
    public var name: String
    /// The app under test (its bundle id), as devices announce it.
    public var appId: String?
    public var description: String?
    /// The app under test on the web (an absolute http or https URL), when it is a web app: testers open it from their
    /// invitation page (`/i/CODE`) with `mueval=CODE` added to its query.
    public var webApp: String?
    /// When it was created (seconds since 1970).
    public var created: Double
    public var iterations: [StudyIteration]
    /// In the order participants do them.
    public var tasks: [StudyTask]
    public var participants: [Participant]
    /// The study's own questions, answered in free text after each iteration.
    public var questions: [StudyQuestion]

    public init(name: String, appId: String? = nil, description: String? = nil, webApp: String? = nil, created: Double,
                iterations: [StudyIteration] = [], tasks: [StudyTask] = [], participants: [Participant] = [],
                questions: [StudyQuestion] = []) {
        self.name = name
        self.appId = appId
        self.description = description
        self.webApp = webApp
        self.created = created
        self.iterations = iterations
        self.tasks = tasks
        self.participants = participants
        self.questions = questions
    }

    public func iteration(_ number: Int) -> StudyIteration? { iterations.first { $0.number == number } }
    public func task(named name: String) -> StudyTask? { tasks.first { $0.name == name } }
    public func participant(_ code: String) -> Participant? { participants.first { $0.code == code } }
}

/// One round of the app: a version or a prototype, tested by its own participants.
public struct StudyIteration: Codable, Sendable, Equatable {
    /// 1, 2, 3… in order.
    public var number: Int
    /// What was tested: an app version or a prototype round ("paper prototype", "1.2 beta").
    public var label: String?
    public var created: Double

    public init(number: Int, label: String? = nil, created: Double) {
        self.number = number
        self.label = label
        self.created = created
    }
}

/// Something every participant is asked to do.
public struct StudyTask: Codable, Sendable, Equatable {
    /// Unique within the study; the name the app's task begin/end custom events use.
    public var name: String
    /// What the participant is told.
    public var instructions: String?
    /// Seconds after which an attempt counts as failed, when set.
    public var timeLimit: Double?
    public var success: TaskSuccess
    /// The views a participant goes through on the shortest way, in order (none: no path analysis).
    public var expectedPath: [String]

    public init(name: String, instructions: String? = nil, timeLimit: Double? = nil,
                success: TaskSuccess = .observer, expectedPath: [String] = []) {
        self.name = name
        self.instructions = instructions
        self.timeLimit = timeLimit
        self.success = success
        self.expectedPath = expectedPath
    }
}

/// How an attempt is judged a success.
public enum TaskSuccess: Codable, Sendable, Equatable, CustomStringConvertible {
    /// The app sends a custom event of this name during the attempt.
    case event(String)
    /// A view of this class appears during the attempt.
    case view(String)
    /// The observer says so (`muevalctl task SESSION outcome NAME success`).
    case observer

    /// `event:NAME`, `view:NAME` or `observer`: how commands and the catalog write it.
    public init(_ text: String) throws(StudyError) {
        if text == "observer" { self = .observer; return }
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[1].isEmpty else { throw .badSuccess(text) }
        switch parts[0] {
        case "event": self = .event(parts[1])
        case "view": self = .view(parts[1])
        default: throw .badSuccess(text)
        }
    }

    public var description: String {
        switch self {
        case .event(let name): "event:\(name)"
        case .view(let name): "view:\(name)"
        case .observer: "observer"
        }
    }

    public init(from decoder: Decoder) throws {
        self = try TaskSuccess(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A test user, known by a pseudonymous code only (`P07`): no personal data is needed.
public struct Participant: Codable, Sendable, Equatable {
    public var code: String
    /// Whatever the study groups by (`experience=novice`).
    public var attributes: [String: String]
    public var created: Double

    public init(code: String, attributes: [String: String] = [:], created: Double) {
        self.code = code
        self.attributes = attributes
        self.created = created
    }
}

/// One of the study's own questions, answered in free text.
public struct StudyQuestion: Codable, Sendable, Equatable {
    /// A short key (`q1`, `expectations`), unique within the study.
    public var id: String
    public var text: String

    public init(id: String, text: String) {
        self.id = id
        self.text = text
    }
}

/// Which study, iteration and participant a session records (`muevalctl start --study …`).
public struct StudyAssignment: Codable, Sendable, Equatable {
    public var study: String
    public var iteration: Int
    public var participant: String

    public init(study: String, iteration: Int, participant: String) {
        self.study = study
        self.iteration = iteration
        self.participant = participant
    }
}

/// What a session file carries about its study, written at start, so that a copied file is
/// analysed as part of its study without the catalog (docs/STORAGE.md, table `study`).
public struct StudyContext: Codable, Sendable, Equatable {
    public var study: String
    public var appId: String?
    public var description: String?
    public var iteration: StudyIteration
    public var participant: Participant
    public var tasks: [StudyTask]

    public init(study: Study, iteration: StudyIteration, participant: Participant) {
        self.study = study.name
        appId = study.appId
        description = study.description
        self.iteration = iteration
        self.participant = participant
        tasks = study.tasks
    }

    public var assignment: StudyAssignment {
        StudyAssignment(study: study, iteration: iteration.number, participant: participant.code)
    }
}
