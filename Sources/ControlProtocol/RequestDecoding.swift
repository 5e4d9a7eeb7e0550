internal import SessionModel

/// Why a request line is not a request: one line naming the command and the field, such as
/// `events needs "session"` or `task: "action" must be one of begin, end, outcome, not "start"`.
public struct ControlRequestError: Error, CustomStringConvertible, Equatable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }

    /// `command` is what the line asked for (`study task-add`), nil when that is what is wrong.
    init(_ command: String?, _ error: DecodingError) {
        description = Self.describe(error, in: command)
    }

    /// A line that is no request at all: not JSON, no command, an unknown command.
    public static func describe(_ error: Error) -> String {
        switch error {
        case let error as ControlRequestError: error.description
        case let error as DecodingError: describe(error, in: nil)
        default: "\(error)"
        }
    }

    private static func describe(_ error: DecodingError, in command: String?) -> String {
        let prefix = command.map { "\($0): " } ?? ""
        switch error {
        case .keyNotFound(let key, let context):
            return "\(command ?? "a request") needs \(name(context.codingPath + [key]))"
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return "\(prefix)\(name(context.codingPath)) must be \(kind(of: type))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? prefix + context.debugDescription
                : "\(prefix)\(name(context.codingPath)) \(context.debugDescription)"
        @unknown default:
            return "\(prefix)\(error)"
        }
    }

    /// `"newTask.name"`: the field as the request line spells it.
    private static func name(_ path: [any CodingKey]) -> String {
        "\"" + path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".") + "\""
    }

    private static func kind(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type, is Double.Type: "a number"
        case is [String].Type: "an array of strings"
        default: type is any Collection.Type ? "an array or object" : "a \(type)"
        }
    }
}

extension KeyedDecodingContainer {
    /// A string that must be one of `T`'s raw values; the error lists them.
    func decodeChoice<T: RawRepresentable & CaseIterable>(_ type: T.Type, forKey key: Key) throws -> T where T.RawValue == String {
        let text = try decode(String.self, forKey: key)
        guard let value = T(rawValue: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "must be one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(text)\"")
        }
        return value
    }

    func decodeChoiceIfPresent<T: RawRepresentable & CaseIterable>(_ type: T.Type, forKey key: Key) throws -> T? where T.RawValue == String {
        try contains(key) && !decodeNil(forKey: key) ? decodeChoice(type, forKey: key) : nil
    }
}

/// The sessions a command works on: one, by id or name, or every one (`"all": true`).
public enum SessionSelection: Sendable, Equatable {
    case session(String)
    case all

    private enum Keys: String, CodingKey { case session, all }

    init(from decoder: Decoder) throws {
        let fields = try decoder.container(keyedBy: Keys.self)
        self = try fields.decodeIfPresent(Bool.self, forKey: .all) == true ? .all : .session(fields.decode(String.self, forKey: .session))
    }

    func encode(to encoder: Encoder) throws {
        var fields = encoder.container(keyedBy: Keys.self)
        switch self {
        case .session(let key): try fields.encode(key, forKey: .session)
        case .all: try fields.encode(true, forKey: .all)
        }
    }
}

/// A session's study (`start`, `import`): `study`, `iteration` and `participant` side by side, all
/// three or none.
enum FlatAssignment {
    private enum Keys: String, CodingKey { case study, iteration, participant }

    static func decode(from decoder: Decoder) throws -> StudyAssignment? {
        let fields = try decoder.container(keyedBy: Keys.self)
        switch (try fields.decodeIfPresent(String.self, forKey: .study), try fields.decodeIfPresent(Int.self, forKey: .iteration),
                try fields.decodeIfPresent(String.self, forKey: .participant)) {
        case (nil, nil, nil):
            return nil
        case (let study?, let iteration?, let participant?):
            return StudyAssignment(study: study, iteration: iteration, participant: participant)
        default:
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: [], debugDescription: "a session in a study needs \"study\", \"iteration\" and \"participant\" together"))
        }
    }

    static func encode(_ assignment: StudyAssignment?, to encoder: Encoder) throws {
        guard let assignment else { return }
        var fields = encoder.container(keyedBy: Keys.self)
        try fields.encode(assignment.study, forKey: .study)
        try fields.encode(assignment.iteration, forKey: .iteration)
        try fields.encode(assignment.participant, forKey: .participant)
    }
}
