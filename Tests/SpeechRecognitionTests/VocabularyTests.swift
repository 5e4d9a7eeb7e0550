import Foundation
@testable import SpeechRecognition
import Testing

/// The vocabulary cut from Debian's models: the likeliest words, the lab's own, nothing else.
struct VocabularyTests {
    static let models = SpeechConfiguration()
    static let present = FileManager.default.isReadableFile(atPath: models.languageModel)
        && FileManager.default.isReadableFile(atPath: models.dictionary)
    static let missing = "CANNOT RUN HERE: pocketsphinx-en-us is missing (make test-deps installs it)"

    static func words(_ vocabulary: Vocabulary) -> Set<String> {
        Set(vocabulary.lines.map { line in PocketSphinxDecoder.word(String(line.prefix { $0 != " " && $0 != "\t" })) })
    }

    @Test(.enabled(if: present, Comment(rawValue: missing)))
    func keepsTheLikeliestWordsWithTheirVariantsAndTheLabsOwn() throws {
        let text = try String(contentsOfFile: Self.models.dictionary, encoding: .utf8)
        let configuration = SpeechConfiguration(vocabulary: 1_000, words: ["Wordpress", "scrolling"])
        let vocabulary = try Vocabulary(configuration: configuration, text: text)
        let words = Self.words(vocabulary)
        // Of the 134,723 lines, the words the language model knows: what the search listens for without a vocabulary.
        #expect(vocabulary.known > 70_000)
        #expect(words.isSuperset(of: ["the", "what", "wordpress", "scrolling", "oh", "no", "happened", "where", "can't", "why", "did"]))
        #expect(!words.contains("aardvark"))
        // 1,000 ranked, plus the lab's two and the exclamations' words the ranking left out.
        #expect(words.count >= 1_002 && words.count <= 1_000 + 2 + 9, "\(words.count) words")
        #expect(vocabulary.lines.contains("what(2) HH W AH T"))
        // The same models always give the same vocabulary.
        #expect(try Vocabulary(configuration: configuration, text: text).lines == vocabulary.lines)
    }

    @Test(.enabled(if: present, Comment(rawValue: missing)))
    func aWordMissingFromTheDictionaryIsNamed() {
        #expect {
            try Transcriber(configuration: SpeechConfiguration(words: ["mueval"]))
        } throws: { error in
            "\(error)".contains("\"mueval\" of [transcription] words is not in the dictionary")
        }
    }

    @Test func theDictionaryFileIsUnlinkedAndReadableByName() throws {
        let file = try DictionaryFile(contents: "hello HH AH L OW\n")
        #expect(try String(contentsOfFile: file.path, encoding: .utf8) == "hello HH AH L OW\n")
        let target = try FileManager.default.destinationOfSymbolicLink(atPath: file.path)
        #expect(target.hasSuffix("(deleted)"), "\(target)")
    }
}
