/// A recogniser muevald transcribes with: Whisper (`WhisperTranscriber`) or PocketSphinx (`Transcriber`).
public protocol SpeechTranscriber: Sendable {
    /// The engine, its model and language as known before a transcription (the status while it runs).
    var engine: String { get }
    /// The file's speech as segments, with the engine as the transcript records it (the model's hash, the language heard).
    /// `container`: what the file is said to be (its stream's content type); it is read as that and nothing else.
    func transcription(path: String, container: AudioContainer, progress: (Double) -> Void, isCancelled: () -> Bool) throws(SpeechError)
        -> Transcription
}

/// One stream's transcript and what made it.
public struct Transcription: Sendable, Equatable {
    public var segments: [RecognisedSegment]
    /// Engine, model (name and SHA-256 where known) and language, e.g. "faster-whisper 1.2.1 (CTranslate2 4.8.5, int8),
    /// Whisper tiny.en sha256 1a5a…, language en".
    public var engine: String
    /// The words with their times, where the engine gives them (Whisper); empty for PocketSphinx.
    public var words: [RecognisedWord]
    /// Peak address space and resident memory of the recogniser's process in KiB, where it runs in one of its own.
    public var peakMemoryKiB: (address: Int, resident: Int)?

    public init(segments: [RecognisedSegment], engine: String, words: [RecognisedWord] = [], peakMemoryKiB: (address: Int, resident: Int)? = nil) {
        self.segments = segments
        self.engine = engine
        self.words = words
        self.peakMemoryKiB = peakMemoryKiB
    }

    public static func == (left: Transcription, right: Transcription) -> Bool {
        left.segments == right.segments && left.engine == right.engine && left.words == right.words
            && left.peakMemoryKiB?.address == right.peakMemoryKiB?.address && left.peakMemoryKiB?.resident == right.peakMemoryKiB?.resident
    }
}

extension Transcriber: SpeechTranscriber {
    public func transcription(path: String, container: AudioContainer, progress: (Double) -> Void, isCancelled: () -> Bool) throws(SpeechError)
        -> Transcription
    {
        Transcription(segments: try transcribe(path: path, container: container, progress: progress, isCancelled: isCancelled), engine: engine)
    }
}
