internal import Foundation

/// A word Whisper heard, in seconds of the recording, as it writes it (" Okay," with its space, capital and comma).
public struct RecognisedWord: Sendable, Equatable {
    public var text: String
    public var start: Double
    public var end: Double
    public var probability: Double

    public init(text: String, start: Double, end: Double, probability: Double) {
        self.text = text
        self.start = start
        self.end = end
        self.probability = probability
    }

    /// The word as exclamations are matched: lower case, letters, digits and apostrophes only ("Can’t," is `can't`).
    var key: String {
        String(text.lowercased().map { $0 == "’" ? "'" : $0 }.filter { $0.isLetter || $0.isNumber || $0 == "'" })
    }
}

/// Whisper's words as the transcript's segments: one per sentence or stretch of speech, and from each exclamation
/// of the list on, a segment marked with it (its text from the phrase to the next exclamation or the sentence's end).
enum WhisperSegments {
    /// A pause this long ends a segment even without a full stop.
    static let pause = 1.0
    /// A segment without a full stop or a pause is cut after this many words, so that a caption stays readable.
    static let longest = 40

    static func build(_ words: [RecognisedWord], exclamations: [ExclamationPhrase]) -> [RecognisedSegment] {
        let phrases = exclamations.map { $0.phrase.split(separator: " ").map(String.init) }.filter { !$0.isEmpty }
        return utterances(words).flatMap { segments(of: $0, phrases: phrases) }
    }

    /// The words in runs: a new run after a sentence's end (".", "?", "!"), a pause, or `longest` words.
    static func utterances(_ words: [RecognisedWord]) -> [ArraySlice<RecognisedWord>] {
        var runs: [ArraySlice<RecognisedWord>] = []
        var first = words.startIndex
        for index in words.indices where index > first {
            let previous = words[index - 1]
            let ended = previous.text.trimmingCharacters(in: CharacterSet(charactersIn: "\"')” ")).last.map { ".?!".contains($0) } ?? false
            if ended || words[index].start - previous.end >= pause || index - first >= longest {
                runs.append(words[first..<index])
                first = index
            }
        }
        if first < words.endIndex { runs.append(words[first...]) }
        return runs
    }

    /// Where each phrase's words stand in a row (word indices), the first of overlapping ones kept.
    static func hits(in run: ArraySlice<RecognisedWord>, phrases: [[String]]) -> [(index: Int, count: Int, phrase: String)] {
        let keys = run.map(\.key)
        var found: [(index: Int, count: Int, phrase: String)] = []
        for phrase in phrases where keys.count >= phrase.count {
            for offset in 0...(keys.count - phrase.count) where Array(keys[offset..<(offset + phrase.count)]) == phrase {
                found.append((run.startIndex + offset, phrase.count, phrase.joined(separator: " ")))
            }
        }
        var kept: [(index: Int, count: Int, phrase: String)] = []
        for hit in found.sorted(by: { ($0.index, -$0.count) < ($1.index, -$1.count) }) where kept.last.map({ $0.index + $0.count <= hit.index }) ?? true {
            kept.append(hit)
        }
        return kept
    }

    static func segments(of run: ArraySlice<RecognisedWord>, phrases: [[String]]) -> [RecognisedSegment] {
        func segment(_ words: ArraySlice<RecognisedWord>, exclamation: (count: Int, phrase: String)? = nil) -> RecognisedSegment? {
            let text = words.map(\.text).joined().trimmingCharacters(in: .whitespaces)
            guard let first = words.first, let last = words.last, !text.isEmpty else { return nil }
            // An exclamation's confidence is its phrase's words'; a segment's, its words' mean probability.
            let scored = exclamation.map { words.prefix($0.count) } ?? words
            return RecognisedSegment(start: first.start, end: max(last.end, first.start), text: text,
                                     confidence: scored.map(\.probability).reduce(0, +) / Double(scored.count),
                                     exclamation: exclamation?.phrase)
        }
        let hits = hits(in: run, phrases: phrases)
        var result: [RecognisedSegment] = []
        if let ordinary = segment(run[run.startIndex..<(hits.first?.index ?? run.endIndex)]) { result.append(ordinary) }
        for (position, hit) in hits.enumerated() {
            let end = position + 1 < hits.count ? hits[position + 1].index : run.endIndex
            if let spotted = segment(run[hit.index..<end], exclamation: (hit.count, hit.phrase)) { result.append(spotted) }
        }
        return result
    }
}
