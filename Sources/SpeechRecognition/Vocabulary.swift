internal import CPocketSphinx
internal import Foundation
internal import UnlinkedFiles

/// The words the language-model search listens for: the `vocabulary` words the language model finds
/// most likely on their own, and every word a lab needs (the exclamations', `[transcription] words`).
///
/// Why: PocketSphinx's search walks a lexicon tree of every dictionary word its language model
/// knows (72,545 of Debian's models), and that search is most of a transcription's CPU. A tree of
/// the 20,000 likeliest words took 39 % less CPU on the benchmark's hour with the same word error
/// rate, and the exclamations corpus heard as many phrases (docs/SPEECH.md, "Speed").
///
/// The dictionary is read as bytes, not text: a model's dictionary may be in another encoding than
/// UTF-8 (older Sphinx models used ISO-8859-1), and its lines are written back exactly as they were.
struct Vocabulary {
    /// The pronunciation lines kept, in the dictionary's order (a word's variants `what(2)` with it).
    private(set) var lines: [ArraySlice<UInt8>] = []
    /// Words of the dictionary the language model knows (what the whole dictionary would listen for).
    private(set) var known = 0

    /// Reads the dictionary and ranks its words by the language model's unigram probability; ties
    /// keep the dictionary's order, so the same models always give the same vocabulary.
    init(configuration: SpeechConfiguration, dictionary: [UInt8]) throws(SpeechError) {
        var variants: [ArraySlice<UInt8>: [ArraySlice<UInt8>]] = [:]
        var order: [ArraySlice<UInt8>] = []
        for line in dictionary.split(whereSeparator: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) {
            guard let end = line.firstIndex(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) else { continue }
            var word = line[..<end]
            if word.last == UInt8(ascii: ")"), let open = word.firstIndex(of: UInt8(ascii: "(")) { word = word[..<open] }
            if variants[word] == nil { order.append(word) }
            variants[word, default: []].append(line)
        }
        var required = Set(configuration.exclamations.flatMap { $0.phrase.split(separator: " ").map { ArraySlice($0.utf8) } })
        for word in configuration.words {
            let word = word.lowercased()
            guard variants[ArraySlice(word.utf8)] != nil else {
                throw SpeechError("the word \"\(word)\" of [transcription] words is not in the dictionary \(configuration.dictionary): add its pronunciation there")
            }
            required.insert(ArraySlice(word.utf8))
        }
        let scores = try Self.unigramScores(of: order, languageModel: configuration.languageModel)
        known = scores.count
        var ranked = Array(scores.indices)
        ranked.sort { scores[$0].score != scores[$1].score ? scores[$0].score > scores[$1].score : $0 < $1 }
        var kept = Set(ranked.prefix(configuration.vocabulary).map { scores[$0].word })
        kept.formUnion(required)
        lines = order.filter(kept.contains).flatMap { variants[$0] ?? [] }
    }

    /// The language model's log probability of each word on its own, for the words it knows.
    private static func unigramScores(of words: [ArraySlice<UInt8>], languageModel: String) throws(SpeechError)
        -> [(word: ArraySlice<UInt8>, score: Int32)]
    {
        guard let logmath = logmath_init(1.0001, 0, 0) else { throw SpeechError("PocketSphinx cannot start its log tables") }
        defer { logmath_free(logmath) }
        guard let model = ngram_model_read(nil, languageModel, NGRAM_AUTO, logmath) else {
            throw SpeechError("PocketSphinx cannot read the language model \(languageModel)")
        }
        defer { ngram_model_free(model) }
        let unknown = ngram_unknown_wid(model)
        var used: Int32 = 0
        return words.compactMap { word in
            let id = (word + [0]).withUnsafeBufferPointer { ngram_wid(model, UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self)) }
            guard id >= 0, id != unknown else { return nil }
            return (word, ngram_ng_score(model, id, nil, 0, &used))
        }
    }

    /// The vocabulary as a pronunciation dictionary PocketSphinx can open by name.
    func file() throws(SpeechError) -> DictionaryFile {
        var contents: [UInt8] = []
        for line in lines {
            contents += line
            contents.append(UInt8(ascii: "\n"))
        }
        return try DictionaryFile(contents: contents)
    }
}

/// A pronunciation dictionary written for the decoders, as a file already unlinked: it lives while
/// the transcriber holds it open, and a crash leaves nothing behind. PocketSphinx opens it again
/// through `/proc/self/fd/N`, which Linux resolves to the open file, deleted or not.
final class DictionaryFile: Sendable {
    let path: String
    private let descriptor: Int32

    init(contents: [UInt8]) throws(SpeechError) {
        let descriptor: Int32
        do {
            descriptor = try UnlinkedFile.create(in: [NSTemporaryDirectory()], prefix: "mueval-vocabulary")
        } catch {
            throw SpeechError("cannot write the vocabulary's dictionary: \(error)")
        }
        self.descriptor = descriptor
        path = "/proc/self/fd/\(descriptor)"
        let written = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        do {
            try written.write(contentsOf: contents)
        } catch {
            close(descriptor)
            throw SpeechError("cannot write the vocabulary's dictionary in \(NSTemporaryDirectory()): \(error)")
        }
    }

    deinit { close(descriptor) }
}
