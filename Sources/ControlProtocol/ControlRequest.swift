// The control socket speaks newline-delimited JSON (docs/CONTROL.md): the client writes one
// request per line; the daemon answers each with zero or more stream lines (`{"chunk": …}`)
// and one final line, `{"ok": true, "result": …}` or `{"ok": false, "error": "…"}`.

/// The control commands, as `muevalctl` names them: a request line's `command`.
public enum ControlCommand: String, Codable, Sendable, CaseIterable {
    case start, stop, status, sessions, devices, events, export, delete, tail, note
    /// A single-use login link for the web console.
    case console
    /// Studies: create, list, show, and add iterations, tasks, participants and questions (`action`).
    case study
    /// An observer's task mark in a session: begin, end, or a verdict (`action`).
    case task
    /// Questionnaire answers of a study's participant (`responses`).
    case questionnaire
    /// A session's media streams, each as one playable file (streamed as `media` pieces).
    case media
    /// Transcribe a stopped session's audio (again).
    case transcribe
    /// Make sessions of files recorded elsewhere: IMUT logs, GPX tracks, exports (`files`).
    case `import`
    /// The tester pool: its settings, enrolment link, testers, and a tester's withdrawal (`action`).
    case pool
}

/// A command's fields, the rest of its request line beside `command`, and what the daemon answers it.
public protocol ControlPayload: Codable, Sendable, Equatable {
    /// The final line's `result`.
    associatedtype Reply: Codable & Sendable
    /// The request this payload makes.
    var request: ControlRequest { get }
}

/// One request line: `command` says which payload the line's other keys are. On the wire a flat
/// JSON object, as before the commands were typed: `{"command":"stop","session":"jack"}`.
public enum ControlRequest: Sendable, Equatable {
    case start(StartSession)
    case stop(StopSessions)
    case status(Status)
    case sessions(ListSessions)
    case devices(ListDevices)
    case events(Events)
    case export(Export)
    case delete(DeleteSession)
    case tail(Tail)
    case note(AddNote)
    case console(ConsoleLogin)
    case study(StudyCommand)
    case task(MarkTask)
    case questionnaire(RecordAnswers)
    case media(Media)
    case transcribe(Transcribe)
    case `import`(Import)
    case pool(PoolCommand)

    public var command: ControlCommand {
        switch self {
        case .start: .start
        case .stop: .stop
        case .status: .status
        case .sessions: .sessions
        case .devices: .devices
        case .events: .events
        case .export: .export
        case .delete: .delete
        case .tail: .tail
        case .note: .note
        case .console: .console
        case .study: .study
        case .task: .task
        case .questionnaire: .questionnaire
        case .media: .media
        case .transcribe: .transcribe
        case .import: .import
        case .pool: .pool
        }
    }

    /// The keys beside `command`.
    private var fields: any Encodable {
        switch self {
        case .start(let payload): payload
        case .stop(let payload): payload
        case .status(let payload): payload
        case .sessions(let payload): payload
        case .devices(let payload): payload
        case .events(let payload): payload
        case .export(let payload): payload
        case .delete(let payload): payload
        case .tail(let payload): payload
        case .note(let payload): payload
        case .console(let payload): payload
        case .study(let command): command
        case .task(let payload): payload
        case .questionnaire(let payload): payload
        case .media(let payload): payload
        case .transcribe(let payload): payload
        case .import(let payload): payload
        case .pool(let command): command
        }
    }
}

extension ControlRequest: Codable {
    private enum Key: String, CodingKey { case command }

    public init(from decoder: Decoder) throws {
        let command: ControlCommand
        do {
            command = try decoder.container(keyedBy: Key.self).decodeChoice(ControlCommand.self, forKey: .command)
        } catch let error as DecodingError {
            throw ControlRequestError(nil, error)
        }
        do {
            self = try Self.decode(command, from: decoder)
        } catch let error as DecodingError {
            throw ControlRequestError(command.rawValue, error)
        }
    }

    private static func decode(_ command: ControlCommand, from decoder: Decoder) throws -> ControlRequest {
        switch command {
        case .start: .start(try StartSession(from: decoder))
        case .stop: .stop(try StopSessions(from: decoder))
        case .status: .status(try Status(from: decoder))
        case .sessions: .sessions(try ListSessions(from: decoder))
        case .devices: .devices(try ListDevices(from: decoder))
        case .events: .events(try Events(from: decoder))
        case .export: .export(try Export(from: decoder))
        case .delete: .delete(try DeleteSession(from: decoder))
        case .tail: .tail(try Tail(from: decoder))
        case .note: .note(try AddNote(from: decoder))
        case .console: .console(try ConsoleLogin(from: decoder))
        case .study: .study(try StudyCommand(from: decoder))
        case .task: .task(try MarkTask(from: decoder))
        case .questionnaire: .questionnaire(try RecordAnswers(from: decoder))
        case .media: .media(try Media(from: decoder))
        case .transcribe: .transcribe(try Transcribe(from: decoder))
        case .import: .import(try Import(from: decoder))
        case .pool: .pool(try PoolCommand(from: decoder))
        }
    }

    /// `command` and the payload's keys, side by side in one object.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(command, forKey: .command)
        try fields.encode(to: encoder)
    }
}
