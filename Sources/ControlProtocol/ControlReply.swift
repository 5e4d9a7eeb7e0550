public import SessionModel

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

/// A result with no fields.
public struct Empty: Codable, Sendable {
    public init() {}
}
