public import MuEvalWire
internal import OrderedCollections

/// A note an observer takes while watching a session live or replaying it (issue 15): stored in the
/// session file as an event of its own class, on the device's clock, among the device's events.
///
/// Its class is not an `EventClass` case: that enum lists what devices send (the thesis's five),
/// and the simulator and its tests iterate it as such. `ObserverNote.eventClass` is the one
/// spelling of the class name.
public struct ObserverNote: Sendable, Equatable {
    public static let eventClass = "ObserverNote"
    /// The kind of a note typed without one.
    public static let defaultKind = "note"
    /// The marker keys the console offers; any other label is a custom kind.
    public static let markerKinds = ["note", "problem", "quote", "task-done"]
    public static let maxTextBytes = 4096
    public static let maxKindBytes = 64
    public static let maxTaskBytes = 128
    /// The device column of a note in a session that no device recorded into yet.
    public static let device = "observer"

    /// Where a note was taken.
    public enum Source: String, Sendable, CaseIterable {
        case console, muevalctl
    }

    public var text: String
    public var kind: String
    /// A `Source` for notes muevald stored; whatever the payload says for one read back.
    public var source: String
    /// The observer's user name, when known.
    public var observer: String?
    /// The study task a task mark is about (kinds `task-begin`, `task-end`, `task-outcome`).
    public var task: String?
    /// The observer's verdict (kind `task-outcome`).
    public var outcome: TaskOutcome?

    /// A note as an observer takes it, checked: text non-empty and at most `maxTextBytes`; kind a
    /// label of at most `maxKindBytes` without control characters.
    public init(text: String, kind: String = ObserverNote.defaultKind, source: Source, observer: String? = nil) throws(ObserverNoteError) {
        guard text.contains(where: { !$0.isWhitespace }) else { throw .emptyText }
        guard text.utf8.count <= Self.maxTextBytes else { throw .textTooLong(bytes: text.utf8.count, limit: Self.maxTextBytes) }
        guard kind.contains(where: { !$0.isWhitespace }) else { throw .badKind(kind, "it is empty") }
        guard kind.utf8.count <= Self.maxKindBytes else { throw .badKind(kind, "it is longer than \(Self.maxKindBytes) bytes") }
        guard !kind.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .badKind(kind, "it contains control characters")
        }
        self.text = text
        self.kind = kind
        self.source = source.rawValue
        self.observer = observer.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A task mark: the observer saw the participant begin or end a study task, or judged an attempt
    /// (issue 16). Stored as a note, so it shows wherever notes show; `comment` replaces the text
    /// that says what the mark is.
    public init(_ mark: TaskMark, task: String, outcome: TaskOutcome? = nil, comment: String? = nil,
                source: Source, observer: String? = nil) throws(ObserverNoteError) {
        guard task.contains(where: { !$0.isWhitespace }), task.utf8.count <= Self.maxTaskBytes else { throw .badTask(task) }
        guard (mark == .outcome) == (outcome != nil) else { throw .outcomeOnlyForVerdicts }
        let text = comment.flatMap { $0.contains(where: { !$0.isWhitespace }) ? $0 : nil }
            ?? mark.describe(task: task, outcome: outcome)
        try self.init(text: text, kind: mark.kind, source: source, observer: observer)
        self.task = task
        self.outcome = outcome
    }

    /// A stored note read back; nil when the payload lacks its text (a device sent this class).
    public init?(payload: PlistValue) {
        guard let text = payload["text"]?.string else { return nil }
        self.text = text
        kind = payload["kind"]?.string ?? Self.defaultKind
        source = payload["source"]?.string ?? ""
        observer = payload["observer"]?.string
        task = payload["task"]?.string
        outcome = payload["outcome"]?.string.flatMap(TaskOutcome.init(rawValue:))
    }

    /// What a task mark says; nil for any other note.
    public var taskMark: TaskMark? {
        task == nil ? nil : TaskMark.allCases.first { $0.kind == kind }
    }

    /// The stored payload: `class`, `text`, `kind`, `source`, and `observer` when known (docs/STORAGE.md).
    public var payload: PlistValue {
        var fields: OrderedDictionary<String, PlistValue> = [
            "class": .string(Self.eventClass), "text": .string(text), "kind": .string(kind), "source": .string(source),
        ]
        if let observer { fields["observer"] = .string(observer) }
        if let task { fields["task"] = .string(task) }
        if let outcome { fields["outcome"] = .string(outcome.rawValue) }
        return .dict(fields)
    }

    /// The note as an event to store; a nil `timestamp` marks it estimated (the receive time).
    public func event(timestamp: Double?) -> WireEvent {
        WireEvent(eventClass: Self.eventClass, timestamp: timestamp, seq: nil, sensor: nil,
                  payload: TypedJSON.encode(payload).json, blobs: [])
    }

    /// The text on one line, cut at `limit` characters.
    public func line(limit: Int) -> String {
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.count > limit ? String(line.prefix(max(limit - 1, 0))) + "…" : line
    }

    /// `problem "cannot find Publish"`: the kind and the text on one line (the tail's and `events`' summary).
    public func summary(limit: Int) -> String {
        "\(kind) \"\(line(limit: limit))\""
    }
}

/// Why a note was refused, worded for the observer who typed it.
public enum ObserverNoteError: Error, Equatable, Sendable, CustomStringConvertible {
    case emptyText
    case textTooLong(bytes: Int, limit: Int)
    case badKind(String, String)
    case unknownSource(String)
    case badTime(Double)
    case badTask(String)
    case outcomeOnlyForVerdicts
    case unknownOutcome(String)

    public var description: String {
        switch self {
        case .emptyText:
            "a note needs some text"
        case .textTooLong(let bytes, let limit):
            "the note is \(bytes) bytes long; a note holds at most \(limit) bytes"
        case .badKind(let kind, let reason):
            "\(JSONString.quoted(kind)) cannot be a note's kind: \(reason); use \(ObserverNote.markerKinds.joined(separator: ", ")) or a short label of your own"
        case .unknownSource(let source):
            "\(JSONString.quoted(source)) is not a note's source; give \(ObserverNote.Source.allCases.map(\.rawValue).joined(separator: " or "))"
        case .badTime(let time):
            "\(time) cannot be a note's time: give seconds since 1970 on the device's clock"
        case .badTask(let task):
            "\(JSONString.quoted(task)) cannot be a task's name: give the study task's name (1 to \(ObserverNote.maxTaskBytes) bytes)"
        case .outcomeOnlyForVerdicts:
            "an outcome goes with a verdict (`outcome`), and a verdict needs one"
        case .unknownOutcome(let outcome):
            "\(JSONString.quoted(outcome)) is not an outcome: give \(TaskOutcome.allCases.map(\.rawValue).joined(separator: ", "))"
        }
    }
}

/// What an observer marks about a study task.
public enum TaskMark: String, Sendable, CaseIterable {
    case begin, end
    /// A verdict on the attempt, which overrides the one derived from the task's success criterion.
    case outcome

    /// The note kind that stores it.
    public var kind: String { "task-" + rawValue }

    func describe(task: String, outcome: TaskOutcome?) -> String {
        switch self {
        case .begin: "\(task) begins"
        case .end: "\(task) ends"
        case .outcome: "\(task): \(outcome?.rawValue ?? "")"
        }
    }
}

/// How a participant's attempt at a task ended (docs/STUDIES.md).
public enum TaskOutcome: String, Sendable, Codable, CaseIterable {
    /// Done, as the task's success criterion or the observer says.
    case success
    /// Ended without reaching the goal, or over the time limit.
    case failure
    /// Given up: the task never ended.
    case abandoned
    /// Done with the observer's help: not a success in the completion rate.
    case assisted

    public init(checking text: String) throws(ObserverNoteError) {
        guard let outcome = TaskOutcome(rawValue: text) else { throw .unknownOutcome(text) }
        self = outcome
    }
}
