public import ControlProtocol
public import SessionCore
internal import Foundation
public import SessionImport
public import SessionModel

/// Queues a stopped session's audio for transcription (`transcribe`): the daemon's transcription.
public protocol TranscriptionQueue: Sendable {
    func enqueue(_ session: SessionRecord, now: Double) throws -> [SessionTranscription]
}

/// Makes single-use login links to the web console (`console`).
public protocol ConsoleLogins: Sendable {
    func loginLink(now: Double) throws -> ConsoleLink
    /// Where browsers reach the console (no trailing slash): the enrolment link's address.
    func baseURL() throws -> String
}

/// The daemon's parts the control commands work on, all given when muevald is put together.
public struct ControlCollaborators: Sendable {
    public var registry: SessionRegistry
    public var studies: Studies
    public var liveTail: LiveTail
    public var board: StatusBoard
    public var importer: SessionImporter
    /// A live tail's buffer (`limits.tail_buffer`), read as each tail starts: a reload changes it.
    public var tailBuffer: @Sendable () -> Int
    /// nil: this muevald does not transcribe.
    public var transcription: (any TranscriptionQueue)?
    /// nil: the web console is off.
    public var console: (any ConsoleLogins)?

    public init(registry: SessionRegistry, studies: Studies, liveTail: LiveTail, board: StatusBoard, importer: SessionImporter,
                tailBuffer: @escaping @Sendable () -> Int, transcription: (any TranscriptionQueue)? = nil,
                console: (any ConsoleLogins)? = nil) {
        self.registry = registry
        self.studies = studies
        self.liveTail = liveTail
        self.board = board
        self.importer = importer
        self.tailBuffer = tailBuffer
        self.transcription = transcription
        self.console = console
    }
}

/// Carries out control requests: each command's payload goes to the handler of its group.
public final class ControlCommands: Sendable {
    private let board: StatusBoard
    private let sessions: SessionHandlers
    private let studies: StudyHandlers
    private let pages: EventPages
    private let tail: TailStream
    private let importer: ImportHandler
    private let pool: PoolHandlers
    private let console: (any ConsoleLogins)?

    public init(_ parts: ControlCollaborators) {
        board = parts.board
        console = parts.console
        sessions = SessionHandlers(registry: parts.registry, transcription: parts.transcription)
        studies = StudyHandlers(studies: parts.studies)
        pages = EventPages(registry: parts.registry, lab: parts.importer.lab)
        tail = TailStream(registry: parts.registry, liveTail: parts.liveTail, buffer: parts.tailBuffer, pages: pages)
        importer = ImportHandler(registry: parts.registry, importer: parts.importer)
        pool = PoolHandlers(studies: parts.studies, console: parts.console)
    }

    /// The daemon stops: live tails say so and end.
    public func shutdown() {
        tail.closeAll(now: Date().timeIntervalSince1970)
    }

    /// What the connection does after a request.
    public enum Continuation: Sendable {
        case readNextRequest
        /// Close it: the daemon is stopping and the client must learn so from the closed connection.
        case close
    }

    /// Carries out `request` for `peer`, the process at the other end (who takes a note), which passes
    /// open files through `files` (import).
    public func execute(_ request: ControlRequest, from peer: PeerCredentials? = nil, writer: ControlReplyWriter,
                        files: PassedFiles? = nil) async throws -> Continuation {
        do {
            return try await run(request, from: peer, writer: writer, files: files)
        } catch {
            try await writer.fail("\(error)")
        }
        return .readNextRequest
    }

    private func run(_ request: ControlRequest, from peer: PeerCredentials?, writer: ControlReplyWriter,
                     files: PassedFiles?) async throws -> Continuation {
        let now = Date().timeIntervalSince1970
        switch request {
        case .start(let start): try await writer.succeed(start, with: try await sessions.start(start, now: now))
        case .stop(let stop): try await writer.succeed(stop, with: try await sessions.stop(stop, now: now))
        case .status(let status): try await writer.succeed(status, with: board.status(now: now))
        case .sessions(let list): try await writer.succeed(list, with: try sessions.list())
        case .devices(let list): try await writer.succeed(list, with: try sessions.devices())
        case .delete(let delete): try await writer.succeed(delete, with: try sessions.delete(delete))
        case .note(let note): try await writer.succeed(note, with: try await sessions.note(note, observer: peer?.userName, now: now))
        case .transcribe(let transcribe): try await writer.succeed(transcribe, with: try sessions.transcribe(transcribe, now: now))
        case .console(let login):
            guard let console else {
                throw ControlUsageError("the web console is off: set console.enabled = true in muevald's configuration and restart it")
            }
            try await writer.succeed(login, with: try console.loginLink(now: now))
        case .events(let events): try await pages.events(events, writer: writer)
        case .export(let export): try await pages.export(export, writer: writer)
        case .media(let media): try await pages.media(media, writer: writer)
        case .tail(let follow): return try await tail.follow(follow, writer: writer)
        case .study(let command): try await studies.run(command, writer: writer, now: now)
        case .task(let mark): try await writer.succeed(mark, with: try await studies.mark(mark, observer: peer?.userName, now: now))
        case .questionnaire(let answers): try await writer.succeed(answers, with: try studies.record(answers))
        case .import(let request): try await writer.succeed(request, with: try await importer.run(request, passedBy: files, now: now))
        case .pool(let command): try await pool.run(command, writer: writer, now: now)
        }
        return .readNextRequest
    }
}

/// A request the daemon cannot carry out as asked, with what to do instead.
struct ControlUsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
