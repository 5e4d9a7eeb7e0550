public import SessionModel

// The control socket speaks newline-delimited JSON (docs/CONTROL.md): the client writes one
// request per line; the daemon answers each with zero or more stream lines (`{"chunk": …}`)
// and one final line, `{"ok": true, "result": …}` or `{"ok": false, "error": "…"}`.

/// The control commands, as `muevalctl` names them.
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
}

/// What `study` does.
public enum StudyAction: String, Codable, Sendable, CaseIterable {
    case create, list, show
    case addIteration = "iteration-add"
    case addTask = "task-add"
    case addParticipant = "participant-add"
    case addQuestion = "question-add"
}

/// One request. A flat record: each command reads the fields it needs and ignores the rest.
public struct ControlRequest: Codable, Sendable, Equatable {
    public var command: ControlCommand
    /// A session id or name (stop, events, export, delete, note).
    public var session: String?
    /// Every open session (stop).
    public var all: Bool?
    public var name: String?
    public var device: String?
    public var user: String?
    public var notes: String?
    public var sensors: [String]?
    public var classes: [String]?
    public var limit: Int?
    public var format: ExportFormat?
    /// Only events whose class, device or payload contains this text (tail, events); for events,
    /// also the transcript's speech that contains it (any case).
    public var grep: String?
    /// Show the last N stored events before following (tail).
    public var since: Int?
    /// Give the session a pairing code its device must present (start).
    public var pairing: Bool?
    /// An observer's note (note).
    public var text: String?
    /// The note's kind: note (the default), problem, quote, task-done or a label of one's own (note).
    public var kind: String?
    /// A study's name (start, study, questionnaire).
    public var study: String?
    /// An iteration's number (start, study iteration-add, questionnaire).
    public var iteration: Int?
    /// A participant's code (start, study participant-add).
    public var participant: String?
    /// What `study` does (a `StudyAction`), or `task`'s mark: begin, end or outcome.
    public var action: String?
    /// A task's name (task), or a whole task to add (study task-add: `newTask`).
    public var task: String?
    public var newTask: StudyTask?
    /// A verdict: success, failure, abandoned or assisted (task outcome).
    public var outcome: String?
    /// An iteration's label, a study's description or a question's text (study).
    public var label: String?
    /// The app under test's id (study create).
    public var appId: String?
    /// A participant's attributes (study participant-add).
    public var attributes: [String: String]?
    /// Answers to record (questionnaire).
    public var responses: StudyResponses?
    /// The names (paths) of the files to import, in the order of the open files passed with them (import).
    public var files: [String]?
    /// The files come open over this connection (import): after the daemon's `descriptors` line, one
    /// message with one descriptor per name in `files` (`SCM_RIGHTS`, docs/CONTROL.md). muevald opens
    /// no path for a client.
    public var descriptors: Bool?
    /// The files' format, when not recognised from their content (import).
    public var importFormat: ImportFormat?
    /// A stopped session to merge a track or log into (import).
    public var into: String?
    /// Import a file again that was imported before (import).
    public var again: Bool?

    public init(command: ControlCommand, session: String? = nil, all: Bool? = nil, name: String? = nil,
                device: String? = nil, user: String? = nil, notes: String? = nil, sensors: [String]? = nil,
                classes: [String]? = nil, limit: Int? = nil, format: ExportFormat? = nil, grep: String? = nil,
                since: Int? = nil, pairing: Bool? = nil, text: String? = nil, kind: String? = nil,
                study: String? = nil, iteration: Int? = nil, participant: String? = nil, action: String? = nil,
                task: String? = nil, newTask: StudyTask? = nil, outcome: String? = nil, label: String? = nil,
                appId: String? = nil, attributes: [String: String]? = nil, responses: StudyResponses? = nil,
                files: [String]? = nil, importFormat: ImportFormat? = nil, into: String? = nil, again: Bool? = nil,
                descriptors: Bool? = nil) {
        self.command = command
        self.session = session
        self.all = all
        self.name = name
        self.device = device
        self.user = user
        self.notes = notes
        self.sensors = sensors
        self.classes = classes
        self.limit = limit
        self.format = format
        self.grep = grep
        self.since = since
        self.pairing = pairing
        self.text = text
        self.kind = kind
        self.study = study
        self.iteration = iteration
        self.participant = participant
        self.action = action
        self.task = task
        self.newTask = newTask
        self.outcome = outcome
        self.label = label
        self.appId = appId
        self.attributes = attributes
        self.responses = responses
        self.files = files
        self.importFormat = importFormat
        self.into = into
        self.again = again
        self.descriptors = descriptors
    }
}

/// Any line the daemon writes.
public struct ControlReply<Result: Codable & Sendable>: Codable, Sendable {
    public var ok: Bool?
    public var result: Result?
    public var error: String?
    /// A piece of streamed output (export), before the final line.
    public var chunk: String?
    /// A line of a live tail, before the final line.
    public var tail: TailLine?
    /// A page of stored events (`events`), before the final line.
    public var events: [StoredEvent]?
    /// Transcript segments (`events`), in time order with the pages around them.
    public var speech: [TranscriptSegment]?
    /// A piece of a media file (`media`).
    public var media: MediaPiece?
    /// The daemon waits for this many open files, passed in one message (`import` with `descriptors`).
    public var descriptors: Int?

    public init(ok: Bool? = nil, result: Result? = nil, error: String? = nil, chunk: String? = nil, tail: TailLine? = nil,
                events: [StoredEvent]? = nil, speech: [TranscriptSegment]? = nil, media: MediaPiece? = nil, descriptors: Int? = nil) {
        self.ok = ok
        self.result = result
        self.error = error
        self.chunk = chunk
        self.tail = tail
        self.events = events
        self.speech = speech
        self.media = media
        self.descriptors = descriptors
    }
}

/// The next bytes of one of `media`'s files.
public struct MediaPiece: Codable, Sendable, Equatable {
    /// The file's name, e.g. `voice-1.wav`.
    public var file: String
    public var base64: String

    public init(file: String, base64: String) {
        self.file = file
        self.base64 = base64
    }
}

/// `media`'s final result: the files written, one per stream.
public struct MediaSummary: Codable, Sendable, Equatable {
    public struct File: Codable, Sendable, Equatable {
        public var file: String
        public var bytes: Int64
        public var stream: MediaStreamRecord

        public init(file: String, bytes: Int64, stream: MediaStreamRecord) {
            self.file = file
            self.bytes = bytes
            self.stream = stream
        }
    }

    public var session: Int64
    public var files: [File]

    public init(session: Int64, files: [File]) {
        self.session = session
        self.files = files
    }
}

/// `console`: where the browser logs in, once, before `expires` (seconds since 1970).
public struct ConsoleLink: Codable, Sendable, Equatable {
    public var url: String
    public var expires: Double

    public init(url: String, expires: Double) {
        self.url = url
        self.expires = expires
    }
}

/// `status`: the daemon at a glance.
public struct StatusReport: Codable, Sendable {
    public var version: String
    public var pid: Int32
    /// When the daemon started (seconds since 1970).
    public var started: Double
    public var listen: ListenAddress?
    /// The TLS listener that runs beside the plaintext `listen` (`server.tls_listen`).
    public var listenTLS: ListenAddress?
    /// The Zeroconf announcement: "announced as \"muEval on lab\"", "waiting for avahi-daemon", "off", …
    public var zeroconf: String
    public var socket: String
    public var dataDirectory: String
    public var unknownDevicePolicy: UnknownDevicePolicy
    /// Open sessions (waiting, recording, interrupted), with live counts.
    public var sessions: [SessionRecord]
    public var counters: CounterSnapshot
    /// Live tails (`muevalctl tail`) following now.
    public var tails: Int
    /// nil while commits succeed; else since when and why they fail (a full disk).
    public var storageProblem: StorageProblem?
    /// Audio streams being transcribed or waiting for it.
    public var transcriptions: [SessionTranscription]
    /// Replication into PostgreSQL (`storage.postgres.url`); nil when muevald replicates nowhere.
    public var replication: ReplicationStatus?

    public init(version: String, pid: Int32, started: Double, listen: ListenAddress?, listenTLS: ListenAddress? = nil, zeroconf: String, socket: String,
                dataDirectory: String, unknownDevicePolicy: UnknownDevicePolicy, sessions: [SessionRecord],
                counters: CounterSnapshot, tails: Int, storageProblem: StorageProblem?, transcriptions: [SessionTranscription] = [],
                replication: ReplicationStatus? = nil) {
        self.transcriptions = transcriptions
        self.replication = replication
        self.version = version
        self.pid = pid
        self.started = started
        self.listen = listen
        self.listenTLS = listenTLS
        self.zeroconf = zeroconf
        self.socket = socket
        self.dataDirectory = dataDirectory
        self.unknownDevicePolicy = unknownDevicePolicy
        self.sessions = sessions
        self.counters = counters
        self.tails = tails
        self.storageProblem = storageProblem
    }
}

public struct ListenAddress: Codable, Sendable, Equatable {
    public var host: String
    public var port: Int
    /// Devices must speak TLS here; absent (nil) for plaintext.
    public var tls: Bool?

    public init(host: String, port: Int, tls: Bool = false) {
        self.host = host
        self.port = port
        self.tls = tls ? true : nil
    }

    /// `host:port`, with ` (TLS)` where devices must speak TLS.
    public var text: String { "\(host):\(port)" + (tls == true ? " (TLS)" : "") }
}

/// `export`'s final result, after the chunks.
public struct ExportSummary: Codable, Sendable {
    public var session: Int64
    public var format: ExportFormat
    public var events: Int64

    public init(session: Int64, format: ExportFormat, events: Int64) {
        self.session = session
        self.format = format
        self.events = events
    }
}

/// `events`' final result, after the pages.
public struct EventsSummary: Codable, Sendable {
    public var session: Int64
    public var events: Int64
    /// Transcript segments shown with them.
    public var speech: Int64

    public init(session: Int64, events: Int64, speech: Int64 = 0) {
        self.session = session
        self.events = events
        self.speech = speech
    }
}

/// muEval's version, shown by `status` and announced over Zeroconf.
public enum MuEvalVersion {
    public static let current = "0.1.0"
}

/// A result with no fields.
public struct Empty: Codable, Sendable {
    public init() {}
}
