internal import Foundation

/// One worker's recognition: the language-model decoder for what was said and the keyphrase
/// decoder for the exclamations, over the speech regions of a piece. Made on the caller's thread,
/// then used by its worker thread only: hence unchecked.
final class Recogniser: @unchecked Sendable {
    private let words: PocketSphinxDecoder
    private let keyphrases: PocketSphinxDecoder

    init(_ configuration: SpeechConfiguration) throws(SpeechError) {
        let model = ["-hmm", configuration.acousticModel, "-dict", configuration.dictionary]
        words = try PocketSphinxDecoder(arguments: model + ["-lm", configuration.languageModel])
        let list = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-kws-\(UUID().uuidString).list").path
        let text = configuration.exclamations.map { "\($0.phrase) /\($0.threshold ?? SpeechConfiguration.defaultThreshold)/\n" }.joined()
        guard FileManager.default.createFile(atPath: list, contents: Data(text.utf8)) else {
            throw SpeechError("cannot write the keyphrase list to \(list)")
        }
        defer { try? FileManager.default.removeItem(atPath: list) }
        do {
            keyphrases = try PocketSphinxDecoder(arguments: model + ["-kws", list])
        } catch {
            throw SpeechError("an exclamation has a word the dictionary does not know (\(configuration.exclamations.map(\.phrase).joined(separator: ", "))): \(error)")
        }
    }

    /// The segments of one piece, in seconds from the recording's start.
    func recognise(_ piece: Piece) throws(SpeechError) -> [RecognisedSegment] {
        let base = Double(piece.offset) / 16_000
        return try piece.samples.withUnsafeBufferPointer { (samples) throws(SpeechError) -> [RecognisedSegment] in
            var segments: [RecognisedSegment] = []
            for region in SpeechRegions.find(in: samples) {
                let audio = UnsafeBufferPointer(rebasing: samples[region])
                let start = base + Double(region.lowerBound) / 16_000
                let said = try words.decode(audio)
                let spotted = try keyphrases.decode(audio)
                segments += Self.segments(said: said, spotted: spotted, at: start)
            }
            return segments
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

/// `workers` threads, each with its own `Recogniser`, taking pieces from a short queue.
final class WorkerPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [Piece] = []
    private var closed = false
    private var running = 0
    private var results: [RecognisedSegment] = []
    private var seconds = 0.0
    private(set) var failure: SpeechError?
    private let capacity: Int

    init(configuration: SpeechConfiguration) throws(SpeechError) {
        capacity = configuration.workers
        var recognisers: [Recogniser] = []
        for _ in 0..<configuration.workers { recognisers.append(try Recogniser(configuration)) }
        running = recognisers.count
        for recogniser in recognisers {
            let thread = Thread { [self] in work(recogniser) }
            thread.name = "mueval-speech"
            thread.start()
        }
    }

    /// Seconds of audio recognised so far.
    var secondsDone: Double {
        condition.lock()
        defer { condition.unlock() }
        return seconds
    }

    /// Queues a piece; waits while `capacity` pieces wait already (the decoder is faster than recognition).
    func submit(_ piece: Piece) {
        condition.lock()
        while queue.count >= capacity, failure == nil { condition.wait() }
        queue.append(piece)
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
        if let failure { throw failure }
        return results
    }

    /// Stops the workers after their current piece (an early end: cancellation or an error).
    func finish() {
        condition.lock()
        closed = true
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    private func work(_ recogniser: Recogniser) {
        while true {
            condition.lock()
            while queue.isEmpty, !closed { condition.wait() }
            guard !queue.isEmpty, failure == nil else {
                running -= 1
                condition.broadcast()
                condition.unlock()
                return
            }
            let piece = queue.removeFirst()
            condition.broadcast()
            condition.unlock()
            let outcome = Result { () throws(SpeechError) in try recogniser.recognise(piece) }
            condition.lock()
            switch outcome {
            case .success(let segments): results += segments
            case .failure(let error): failure = error
            }
            seconds += Double(piece.samples.count) / 16_000
            condition.broadcast()
            condition.unlock()
        }
    }
}
