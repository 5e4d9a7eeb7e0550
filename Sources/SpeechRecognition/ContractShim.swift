// TEMPORARY: the contract of /work/helper-notes/media.md, so that main compiles until the speech
// branch (the real module) is merged. Removed at that merge.
public struct ExclamationPhrase: Sendable, Equatable, Codable {
    public var phrase: String
    public var threshold: Double?
    public init(_ phrase: String, threshold: Double? = nil) {
        self.phrase = phrase
        self.threshold = threshold
    }
}

public struct SpeechConfiguration: Sendable, Equatable {
    public var acousticModel: String
    public var languageModel: String
    public var dictionary: String
    public var exclamations: [ExclamationPhrase]
    public var workers: Int
    public init(acousticModel: String = "/usr/share/pocketsphinx/model/en-us/en-us",
                languageModel: String = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin",
                dictionary: String = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict",
                exclamations: [ExclamationPhrase] = SpeechConfiguration.defaultExclamations, workers: Int = 2) {
        self.acousticModel = acousticModel
        self.languageModel = languageModel
        self.dictionary = dictionary
        self.exclamations = exclamations
        self.workers = workers
    }
    public static let defaultExclamations: [ExclamationPhrase] = ["oh no", "what happened", "where is", "i can't", "why did"].map { ExclamationPhrase($0) }
}

public struct SpeechError: Error, CustomStringConvertible {
    public var description: String
}

public struct RecognisedSegment: Sendable, Equatable {
    public var start: Double
    public var end: Double
    public var text: String
    public var confidence: Double?
    public var exclamation: String?
}

public final class Transcriber: Sendable {
    public init(configuration: SpeechConfiguration) throws(SpeechError) {
        throw SpeechError(description: "speech recognition is not built yet")
    }
    public var engine: String { "none" }
    public func transcribe(path: String, progress: (Double) -> Void, isCancelled: () -> Bool) throws(SpeechError) -> [RecognisedSegment] {
        []
    }
}
