internal import Foundation

/// One worker's recognition: the language-model decoder for what was said, in which the exclamations
/// are looked for, and a keyphrase decoder for each exclamation configured with a threshold. Made on
/// the caller's thread, then used by its worker thread only: hence unchecked.
final class Recogniser: @unchecked Sendable {
    private let words: PocketSphinxDecoder
    private let exclamations: [ExclamationPhrase]
    /// One keyphrase search per exclamation that has a threshold: in one search several phrases
    /// compete, and lowering one phrase's threshold changed what the others found (docs/SPEECH.md).
    private let keyphrases: [(phrase: ExclamationPhrase, decoder: PocketSphinxDecoder)]

    /// `dictionary`: the pronunciations the decoders open, the configured dictionary or its `Vocabulary`.
    init(_ configuration: SpeechConfiguration, dictionary: String) throws(SpeechError) {
        // Dither: synthetic speech (and a muted microphone) has stretches of digital silence, whose
        // log energy breaks the model's noise estimate; half a bit of noise lifted the words heard in
        // espeak-ng's lines from 26 % to 38 % (docs/SPEECH.md). A fixed seed keeps results repeatable.
        let model = ["-hmm", configuration.acousticModel, "-dict", dictionary, "-dither", "yes", "-seed", "1"]
            + configuration.decoderOptions
        let words = try PocketSphinxDecoder(arguments: model + ["-lm", configuration.languageModel])
        self.words = words
        exclamations = configuration.exclamations
        for exclamation in exclamations {
            let unknown = exclamation.phrase.split(separator: " ").filter { !words.knows(String($0)) }
            guard unknown.isEmpty else {
                throw SpeechError("the exclamation \"\(exclamation.phrase)\" cannot be heard: \(unknown.joined(separator: ", ")) is not in the dictionary \(configuration.dictionary)")
            }
        }
        var keyphrases: [(ExclamationPhrase, PocketSphinxDecoder)] = []
        for exclamation in configuration.exclamations {
            guard let threshold = exclamation.threshold else { continue }
            do {
                keyphrases.append((exclamation, try PocketSphinxDecoder(
                    arguments: model + ["-keyphrase", exclamation.phrase, "-kws_threshold", String(threshold)])))
            } catch {
                throw SpeechError("the exclamation \"\(exclamation.phrase)\" cannot be spotted: \(error)")
            }
        }
        self.keyphrases = keyphrases
    }

    /// The segments of one piece, in seconds from the recording's start: each speech region decoded as
    /// one utterance by the language model and by each keyphrase search.
    func recognise(_ piece: Piece) throws(SpeechError) -> [RecognisedSegment] {
        let base = Double(piece.offset) / 16_000
        return try piece.samples.withUnsafeBufferPointer { (samples) throws(SpeechError) -> [RecognisedSegment] in
            var segments: [RecognisedSegment] = []
            for region in SpeechRegions.find(in: samples) {
                let audio = UnsafeBufferPointer(rebasing: samples[region])
                let said = try words.decode(audio)
                var spotted = exclamations.flatMap { Self.occurrences(of: $0.phrase, in: said) }
                for (phrase, decoder) in keyphrases {
                    for var hit in try decoder.decode(audio) where !phrase.confirmed || Self.confirms(said, phrase: phrase.phrase, around: hit) {
                        hit.text = phrase.phrase
                        // Heard by both searches: once.
                        if !spotted.contains(where: { $0.text == hit.text && $0.start < hit.end && hit.start < $0.end }) { spotted.append(hit) }
                    }
                }
                segments += Self.segments(said: said, spotted: spotted, at: base + Double(region.lowerBound) / 16_000)
            }
            return segments
        }
    }

    /// Where the language model heard `phrase`, word for word, as one word each (text the phrase,
    /// times from its first word's start to its last word's end).
    static func occurrences(of phrase: String, in said: [PocketSphinxDecoder.Word]) -> [PocketSphinxDecoder.Word] {
        let keys = phrase.split(separator: " ").map(String.init)
        guard !keys.isEmpty, said.count >= keys.count else { return [] }
        return (0...(said.count - keys.count)).compactMap { first in
            let run = said[first..<(first + keys.count)]
            guard zip(run, keys).allSatisfy({ $0.text == $1 }), let last = run.last else { return nil }
            return PocketSphinxDecoder.Word(text: phrase, start: said[first].start, end: last.end,
                                            probability: run.map(\.probability).reduce(0, +) / Double(keys.count))
        }
    }

    /// Words that carry no phrase alone: "i can't" is confirmed by "can't", not by "i".
    static let weakWords: Set<String> = ["i", "is", "a", "the", "it", "to"]

    /// Whether the language model heard one of the phrase's words (or its start: "can" for "can't")
    /// where the keyphrase search spotted it: a spotted phrase the other search does not back is most
    /// often a false alarm (the figures are in docs/SPEECH.md).
    static func confirms(_ said: [PocketSphinxDecoder.Word], phrase: String, around hit: PocketSphinxDecoder.Word) -> Bool {
        let keys = phrase.split(separator: " ").map(String.init).filter { !weakWords.contains($0) }
        return said.contains { word in
            word.end >= hit.start - 0.3 && word.start <= hit.end + 0.3
                && keys.contains { $0 == word.text || (word.text.count >= 3 && $0.hasPrefix(word.text)) }
        }
    }

    /// An utterance as segments: ordinary speech, and from each spotted exclamation on, a segment
    /// marked with it (its text what the language model heard there, or the phrase when it heard nothing).
    static func segments(said: [PocketSphinxDecoder.Word], spotted: [PocketSphinxDecoder.Word], at start: Double) -> [RecognisedSegment] {
        func segment(_ words: ArraySlice<PocketSphinxDecoder.Word>) -> RecognisedSegment? {
            guard let first = words.first, let last = words.last else { return nil }
            return RecognisedSegment(start: start + first.start, end: start + last.end, text: words.map(\.text).joined(separator: " "),
                                     confidence: words.map(\.probability).reduce(0, +) / Double(words.count))
        }
        var result: [RecognisedSegment] = []
        var rest = said[...]
        for hit in spotted.sorted(by: { $0.start < $1.start }) {
            let before = rest.prefix { $0.end <= hit.start + 0.1 }
            if let ordinary = segment(before) { result.append(ordinary) }
            rest = rest.dropFirst(before.count)
            let next = spotted.first { $0.start > hit.start }?.start ?? .infinity
            let within = rest.prefix { $0.start < next }
            rest = rest.dropFirst(within.count)
            let end = max(hit.end, within.last?.end ?? hit.end)
            result.append(RecognisedSegment(
                start: start + hit.start, end: start + end,
                text: within.isEmpty ? hit.text : within.map(\.text).joined(separator: " "),
                confidence: hit.probability, exclamation: hit.text))
        }
        if let ordinary = segment(rest) { result.append(ordinary) }
        return result
    }
}

/// `workers` threads, each with its own `Recogniser` and a short queue of pieces: piece `n` goes to
/// worker `n % workers`. A decoder carries state from one utterance to the next (its running
/// cepstral mean, its dither's random numbers), so what it hears depends on what it heard before:
/// fixed queues make a transcript the same on every run, whichever thread is quicker.
final class WorkerPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var queues: [[Piece]]
    private var submitted = 0
    private var closed = false
    private var running = 0
    private var results: [RecognisedSegment] = []
    private var seconds = 0.0
    private var failed: SpeechError?
    /// Pieces that may wait for each worker (the decoder is faster than recognition).
    private static let capacity = 1

    /// `spare`: a recogniser already loaded (and unused: a used one would carry its state over), for the
    /// first worker. The others load on their own threads (0.4 s of CPU each) while the first pieces are
    /// read and recognised; a worker that cannot load ends the transcription with its reason.
    init(configuration: SpeechConfiguration, dictionary: String, spare: Recogniser?) {
        queues = Array(repeating: [], count: configuration.workers)
        running = configuration.workers
        for index in 0..<configuration.workers {
            let loaded = index == 0 ? spare : nil
            let thread = Thread { [self] in
                let recogniser = Result { () throws(SpeechError) in
                    if let loaded { return loaded }
                    return try Recogniser(configuration, dictionary: dictionary)
                }
                switch recogniser {
                case .success(let recogniser): work(index, recogniser)
                case .failure(let error): end(failing: error)
                }
            }
            thread.name = "mueval-speech"
            thread.start()
        }
    }

    /// Why the transcription ends early, once a worker failed (read by the thread that reads the file).
    var failure: SpeechError? {
        condition.lock()
        defer { condition.unlock() }
        return failed
    }

    /// Seconds of audio recognised so far.
    var secondsDone: Double {
        condition.lock()
        defer { condition.unlock() }
        return seconds
    }

    /// Queues a piece for its worker; waits while that worker's queue is full.
    func submit(_ piece: Piece) {
        condition.lock()
        let worker = submitted % queues.count
        submitted += 1
        while queues[worker].count >= Self.capacity, failed == nil { condition.wait() }
        queues[worker].append(piece)
        condition.broadcast()
        condition.unlock()
    }

    /// No more pieces: waits for the workers, calling `tick` about once a second; their segments.
    func wait(tick: () -> Void) throws(SpeechError) -> [RecognisedSegment] {
        condition.lock()
        closed = true
        condition.broadcast()
        while running > 0 {
            condition.unlock()
            tick()
            condition.lock()
            if running > 0 { _ = condition.wait(until: Date().addingTimeInterval(1)) }
        }
        defer { condition.unlock() }
        if let failed { throw failed }
        return results
    }

    /// Stops the workers after their current piece (an early end: cancellation or an error).
    func finish() {
        condition.lock()
        closed = true
        for index in queues.indices { queues[index].removeAll() }
        condition.broadcast()
        condition.unlock()
    }

    /// A worker's end: the first failure is the transcription's.
    private func end(failing error: SpeechError?) {
        condition.lock()
        if failed == nil { failed = error }
        running -= 1
        condition.broadcast()
        condition.unlock()
    }

    private func work(_ index: Int, _ recogniser: Recogniser) {
        while true {
            condition.lock()
            while queues[index].isEmpty, !closed { condition.wait() }
            guard !queues[index].isEmpty, failed == nil else {
                condition.unlock()
                return end(failing: nil)
            }
            let piece = queues[index].removeFirst()
            condition.broadcast()
            condition.unlock()
            let outcome = Result { () throws(SpeechError) in try recogniser.recognise(piece) }
            condition.lock()
            switch outcome {
            case .success(let segments): results += segments
            case .failure(let error): if failed == nil { failed = error }
            }
            seconds += Double(piece.samples.count) / 16_000
            condition.broadcast()
            condition.unlock()
        }
    }
}
