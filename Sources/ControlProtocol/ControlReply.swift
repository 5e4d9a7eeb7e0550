public import SessionModel
internal import MemberwiseInit

/// Any line the daemon writes.
@MemberwiseInit
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
}

/// The next bytes of one of `media`'s files.
@MemberwiseInit
public struct MediaPiece: Codable, Sendable, Equatable {
    /// The file's name, e.g. `voice-1.wav`.
    public var file: String
    public var base64: String
}

/// `media`'s final result: the files written, one per stream.
@MemberwiseInit
public struct MediaSummary: Codable, Sendable, Equatable {
    @MemberwiseInit
    public struct File: Codable, Sendable, Equatable {
        public var file: String
        public var bytes: Int64
        public var stream: MediaStreamRecord
    }

    public var session: Int64
    public var files: [File]
}

/// `console`: where the browser logs in, once, before `expires` (seconds since 1970).
@MemberwiseInit
public struct ConsoleLink: Codable, Sendable, Equatable {
    public var url: String
    public var expires: Double
}

/// `export`'s final result, after the chunks.
@MemberwiseInit
public struct ExportSummary: Codable, Sendable {
    public var session: Int64
    public var format: ExportFormat
    public var events: Int64
}

/// `events`' final result, after the pages.
@MemberwiseInit
public struct EventsSummary: Codable, Sendable {
    public var session: Int64
    public var events: Int64
    /// Transcript segments shown with them.
    public var speech: Int64 = 0
}

/// A result with no fields.
public struct Empty: Codable, Sendable {
    public init() {}
}
