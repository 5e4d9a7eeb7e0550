/// A media stream of a session as stored (think-aloud audio, face video): what `muevalctl media`,
/// the console and the report list. Its chunks are in the session file's `media` table.
public struct MediaStreamRecord: Sendable, Equatable, Codable {
    public var device: String
    /// The device's name for the stream.
    public var stream: String
    /// `audio` or `video`.
    public var kind: String
    /// `audio/wav`, `audio/mp4` or `video/mp4` (normalised: aliases are stored under these).
    public var contentType: String
    /// Device time of the first sample of part 0 (seconds since 1970): where the stream sits on the
    /// events' timeline.
    public var start: Double
    /// Seconds of media, the sum of the chunks' durations; nil when a chunk did not say.
    public var duration: Double?
    /// Chunks stored.
    public var parts: Int
    /// Numbers below the highest part that are not stored (chunks the device never delivered).
    public var missingParts: Int
    public var bytes: Int64

    public init(device: String, stream: String, kind: String, contentType: String, start: Double, duration: Double?,
                parts: Int, missingParts: Int, bytes: Int64) {
        self.device = device
        self.stream = stream
        self.kind = kind
        self.contentType = contentType
        self.start = start
        self.duration = duration
        self.parts = parts
        self.missingParts = missingParts
        self.bytes = bytes
    }
}

/// A stretch of speech recognised in an audio stream, on the events' timeline (device time).
public struct TranscriptSegment: Sendable, Equatable, Codable {
    public var device: String
    public var stream: String
    public var start: Double
    public var end: Double
    /// What was said, as the recogniser writes it: Whisper with capitals and punctuation, PocketSphinx in lower case.
    public var text: String
    /// The recogniser's confidence, 0…1, when it gives one.
    public var confidence: Double?
    /// The phrase of the exclamation list this segment is ("oh no", "where is"…), spotted as such:
    /// a hint at a usability problem. Nil for ordinary speech.
    public var exclamation: String?

    public init(device: String, stream: String, start: Double, end: Double, text: String, confidence: Double? = nil,
                exclamation: String? = nil) {
        self.device = device
        self.stream = stream
        self.start = start
        self.end = end
        self.text = text
        self.confidence = confidence
        self.exclamation = exclamation
    }
}

extension TranscriptSegment {
    /// One line: the quote, and the exclamation it was spotted as.
    public var summary: String {
        "\"\(text)\"" + (exclamation.map { $0 == text ? " (exclamation)" : " (exclamation: \($0))" } ?? "")
    }

    /// Whether what was said contains `text`, in any case (`events --grep`, tails, the console's search).
    public func contains(_ text: String) -> Bool {
        let text = text.lowercased()
        return self.text.lowercased().contains(text) || exclamation?.lowercased().contains(text) == true
    }
}

/// A word of a transcript with its time on the events' timeline, where the recogniser gives words' times (Whisper).
public struct TranscriptWord: Sendable, Equatable, Codable {
    public var device: String
    public var stream: String
    public var start: Double
    public var end: Double
    /// As the recogniser writes it (" Okay," with its space and comma).
    public var text: String
    /// The recogniser's probability of the word, 0…1.
    public var probability: Double?

    public init(device: String, stream: String, start: Double, end: Double, text: String, probability: Double? = nil) {
        self.device = device
        self.stream = stream
        self.start = start
        self.end = end
        self.text = text
        self.probability = probability
    }
}

/// How far the transcription of one audio stream is: muevald transcribes in the background after a
/// session stops; `muevalctl status` and the console show this.
public struct TranscriptionStatus: Sendable, Equatable, Codable {
    public enum State: String, Sendable, Codable, CaseIterable {
        case queued
        case running
        case done
        case failed
    }

    public var device: String
    public var stream: String
    public var state: State
    /// 0…1: the share of the stream's audio recognised so far.
    public var progress: Double
    /// Which recogniser and model, e.g. "pocketsphinx 5prealpha en-us".
    public var engine: String?
    /// Why it failed, in a sentence a user can act on.
    public var error: String?
    /// When this status was written (seconds since 1970).
    public var updated: Double

    public init(device: String, stream: String, state: State, progress: Double, engine: String? = nil,
                error: String? = nil, updated: Double) {
        self.device = device
        self.stream = stream
        self.state = state
        self.progress = progress
        self.engine = engine
        self.error = error
        self.updated = updated
    }
}

/// One stream's transcription with the session it belongs to: what `status` lists while muevald transcribes.
public struct SessionTranscription: Sendable, Equatable, Codable {
    public var session: Int64
    public var status: TranscriptionStatus

    public init(session: Int64, status: TranscriptionStatus) {
        self.session = session
        self.status = status
    }
}
