/// Why a study change or a questionnaire answer was refused, worded for the researcher who typed it.
public enum StudyError: Error, Equatable, Sendable, CustomStringConvertible {
    case badName(what: String, name: String)
    case studyExists(String)
    case noStudy(String)
    case noIteration(study: String, iteration: Int)
    case iterationExists(study: String, iteration: Int)
    case badIteration(Int)
    case noTask(study: String, task: String)
    case taskExists(study: String, task: String)
    case noParticipant(study: String, participant: String)
    case participantExists(study: String, participant: String)
    case noQuestion(study: String, question: String)
    case questionExists(study: String, question: String)
    case badTaskName(String)
    case badSuccess(String)
    case badTimeLimit(Double)
    case badAttribute(String)
    case incompleteAnswer(questionnaire: String, item: String)
    case answerOutOfRange(questionnaire: String, item: String, value: Int, scale: ClosedRange<Int>)
    case tooManyAnswers(questionnaire: String, given: Int, expected: Int)
    case tooLong(what: String, limit: Int)
    case badWebApp(String)

    public var description: String {
        switch self {
        case .badName(let what, let name):
            "\"\(name)\" cannot be a \(what): use 1 to 64 letters, digits, '-', '_' or '.'"
        case .studyExists(let name):
            "there is already a study \"\(name)\" (see `muevalctl study show \(name)`)"
        case .noStudy(let name):
            "no study \"\(name)\" (see `muevalctl study list`)"
        case .noIteration(let study, let iteration):
            "study \"\(study)\" has no iteration \(iteration): add it with `muevalctl study iteration add \(study)`"
        case .iterationExists(let study, let iteration):
            "study \"\(study)\" already has iteration \(iteration)"
        case .badIteration(let number):
            "\(number) cannot be an iteration: iterations are numbered 1, 2, 3…"
        case .noTask(let study, let task):
            "study \"\(study)\" has no task \"\(task)\" (see `muevalctl study show \(study)`)"
        case .taskExists(let study, let task):
            "study \"\(study)\" already has a task \"\(task)\""
        case .noParticipant(let study, let participant):
            "study \"\(study)\" has no participant \"\(participant)\": add it with `muevalctl study participant add \(study) \(participant)`"
        case .participantExists(let study, let participant):
            "study \"\(study)\" already has a participant \"\(participant)\""
        case .noQuestion(let study, let question):
            "study \"\(study)\" has no question \"\(question)\" (see `muevalctl study show \(study)`)"
        case .questionExists(let study, let question):
            "study \"\(study)\" already has a question \"\(question)\""
        case .badTaskName(let name):
            "\"\(name)\" cannot be a task's name: give 1 to 128 bytes without control characters (the name the app's task events use)"
        case .badSuccess(let text):
            "\"\(text)\" is not a success criterion: give event:NAME (a custom event the app sends), view:NAME (a view reached) or observer"
        case .badTimeLimit(let seconds):
            "\(seconds) cannot be a time limit: give a positive number of seconds"
        case .badAttribute(let text):
            "\"\(text)\" is not an attribute: give KEY=VALUE, such as experience=novice"
        case .incompleteAnswer(let questionnaire, let item):
            "the \(questionnaire) answers are incomplete: \(item) has no answer"
        case .answerOutOfRange(let questionnaire, let item, let value, let scale):
            "\(questionnaire) \(item) is \(value): answers go from \(scale.lowerBound) to \(scale.upperBound)"
        case .tooManyAnswers(let questionnaire, let given, let expected):
            "\(given) \(questionnaire) answers given: the questionnaire has \(expected) items"
        case .tooLong(let what, let limit):
            "\(what) is too long: at most \(limit) bytes"
        case .badWebApp(let url):
            // Quoted with escapes, so that a line break in it cannot break the one-line error.
            "\(String(reflecting: url)) cannot be a study's web app: give an absolute http:// or https:// URL without a user name or "
                + "password, such as https://lab.example.org/notes/"
        }
    }

    /// Study names, task names, participant codes and question ids: short, and safe in a path and a URL.
    public static func checkName(_ name: String, as what: String) throws(StudyError) {
        guard (1...64).contains(name.utf8.count),
              name.unicodeScalars.allSatisfy({ ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || "-_.".unicodeScalars.contains($0) }),
              name != ".", name != ".."
        else { throw .badName(what: what, name: name) }
    }

    /// Task names are what the app's begin/end events say ("Edit blog posting"): any short text on one line.
    public static func checkTaskName(_ name: String) throws(StudyError) {
        guard (1...128).contains(name.utf8.count), name.contains(where: { !$0.isWhitespace }),
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw .badTaskName(name) }
    }
}
