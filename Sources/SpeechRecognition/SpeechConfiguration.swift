internal import Foundation

/// A phrase that hints at a usability problem when a tester says it ("oh no", "where is"): found
/// where the language model heard its words in a row, and, given a threshold, also by a PocketSphinx
/// keyphrase search, for a phrase the model mishears (lower finds more, and more wrongly).
public struct ExclamationPhrase: Sendable, Equatable, Codable {
    public var phrase: String
    /// Nil: no keyphrase search, the transcript only.
    public var threshold: Double?
    /// Whether a phrase the keyphrase search spots counts only when the language model heard one of
    /// its words there too (`Recogniser.confirms`): it removes most false alarms of short phrases.
    public var confirmed: Bool

    public init(_ phrase: String, threshold: Double? = nil, confirmed: Bool = true) {
        self.phrase = phrase.lowercased()
        self.threshold = threshold
        self.confirmed = confirmed
    }
}

/// What the recogniser uses: the models (Debian's pocketsphinx-en-us by default), the exclamations
/// to spot, and how many threads one stream is recognised on.
public struct SpeechConfiguration: Sendable, Equatable {
    public var acousticModel: String
    public var languageModel: String
    public var dictionary: String
    public var exclamations: [ExclamationPhrase]
    public var workers: Int
    /// How many of the dictionary's words the search listens for, the likeliest by the language model
    /// (`Vocabulary`); 0: every word the language model knows.
    public var vocabulary: Int
    /// Words listened for whatever `vocabulary` is: the names and terms of the app under test.
    public var words: [String]
    /// PocketSphinx's search options (beams, passes) on its command line's terms, for both searches.
    public var decoderOptions: [String]

    public static let modelDirectory = "/usr/share/pocketsphinx/model/en-us"

    /// Each worker loads its own decoders (tens of MB): more threads than cores gain nothing.
    public static let workerRange = 1...64
    /// The 20,000 likeliest words: 39 % less CPU than the language model's 72,545, the same word error
    /// rate on the benchmarks (docs/SPEECH.md, "Speed"); about what a tester says outside the app's own terms.
    public static let defaultVocabulary = 20_000
    /// One worker per core: the decoder is CPU-bound, and regions are spread evenly over the workers.
    public static let defaultWorkers = min(max(ProcessInfo.processInfo.activeProcessorCount, workerRange.lowerBound), workerRange.upperBound)

    public init(acousticModel: String = SpeechConfiguration.modelDirectory + "/en-us",
                languageModel: String = SpeechConfiguration.modelDirectory + "/en-us.lm.bin",
                dictionary: String = SpeechConfiguration.modelDirectory + "/cmudict-en-us.dict",
                exclamations: [ExclamationPhrase] = SpeechConfiguration.defaultExclamations, workers: Int = SpeechConfiguration.defaultWorkers,
                vocabulary: Int = SpeechConfiguration.defaultVocabulary, words: [String] = [],
                decoderOptions: [String] = SpeechConfiguration.tunedDecoderOptions) {
        self.acousticModel = acousticModel
        self.languageModel = languageModel
        self.dictionary = dictionary
        self.exclamations = exclamations
        self.workers = min(max(workers, Self.workerRange.lowerBound), Self.workerRange.upperBound)
        self.vocabulary = max(vocabulary, 0)
        self.words = words
        self.decoderOptions = decoderOptions
    }

    /// Where PocketSphinx's defaults were changed because the transcript stayed as good (docs/SPEECH.md,
    /// "Speed"): no second, flat-lexicon pass, a 100 ms phone lookahead (not 50 ms) that prunes the
    /// word search, at most 3,000 active HMMs per frame, and a narrower beam for words' last phones
    /// (1e-20, not 7e-29). A third less CPU than the first two alone; pruning words per frame
    /// (`-maxwpf 10`) or the main beams lost exclamations on muevalsim's voice.
    public static let tunedDecoderOptions = ["-fwdflat", "no", "-pl_window", "10", "-maxhmmpf", "3000", "-lponlybeam", "1e-20"]

    /// The exclamations of the issue and the thesis's scenario, found in the transcript only: on the
    /// measured corpus a keyphrase search added no phrase the transcript missed, only false alarms
    /// (docs/SPEECH.md has the figures).
    public static let defaultExclamations: [ExclamationPhrase] = ["oh no", "what happened", "where is", "i can't", "why did"]
        .map { ExclamationPhrase($0) }
}

/// Why speech could not be recognised, in a sentence a user can act on.
public struct SpeechError: Error, CustomStringConvertible, Equatable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// A stretch of recognised speech, in seconds from the start of the audio file.
public struct RecognisedSegment: Sendable, Equatable {
    public var start: Double
    public var end: Double
    public var text: String
    public var confidence: Double?
    /// The exclamation phrase this segment is, or nil for ordinary speech.
    public var exclamation: String?
}

extension ExclamationPhrase {
    /// A phrase of `transcription.exclamations`: `oh no`, or with its spotting threshold as in a
    /// PocketSphinx keyphrase list, `oh no /1e-20/`. Nil for an empty phrase or a bad threshold.
    public init?(configText: String) {
        var text = configText.trimmingCharacters(in: .whitespaces).lowercased()
        var threshold: Double?
        // `phrase /threshold/ !`: spotted without the language model's confirmation.
        let confirmed = !text.hasSuffix("!")
        if !confirmed { text = String(text.dropLast()).trimmingCharacters(in: .whitespaces) }
        if text.hasSuffix("/"), let open = text.dropLast().lastIndex(of: "/") {
            guard let value = Double(text[text.index(after: open)..<text.index(before: text.endIndex)]), value > 0 else { return nil }
            threshold = value
            text = String(text[..<open]).trimmingCharacters(in: .whitespaces)
        }
        guard !text.isEmpty else { return nil }
        self.init(text, threshold: threshold, confirmed: confirmed)
    }

    public static func configText(_ phrase: ExclamationPhrase) -> String {
        (phrase.threshold.map { "\(phrase.phrase) /\($0)/" } ?? phrase.phrase) + (phrase.confirmed ? "" : " !")
    }
}
