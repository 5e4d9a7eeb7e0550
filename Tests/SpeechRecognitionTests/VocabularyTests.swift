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
        Set(vocabulary.lines.map { line in
            PocketSphinxDecoder.word(String(decoding: line.prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }, as: UTF8.self))
        })
    }

    @Test(.enabled(if: present, Comment(rawValue: missing)))
    func keepsTheLikeliestWordsWithTheirVariantsAndTheLabsOwn() throws {
        let text = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.models.dictionary)))
        let configuration = SpeechConfiguration(vocabulary: 1_000, words: ["Wordpress", "scrolling"])
        let vocabulary = try Vocabulary(configuration: configuration, dictionary: text)
        let words = Self.words(vocabulary)
        // Of the 134,723 lines, the words the language model knows: what the search listens for without a vocabulary.
        #expect(vocabulary.known > 70_000)
        #expect(words.isSuperset(of: ["the", "what", "wordpress", "scrolling", "oh", "no", "happened", "where", "can't", "why", "did"]))
        #expect(!words.contains("aardvark"))
        // 1,000 ranked, plus the lab's two and the exclamations' words the ranking left out.
        #expect(words.count >= 1_002 && words.count <= 1_000 + 2 + 9, "\(words.count) words")
        #expect(vocabulary.lines.contains(ArraySlice("what(2) HH W AH T".utf8)))
        // The same models always give the same vocabulary.
        #expect(try Vocabulary(configuration: configuration, dictionary: text).lines == vocabulary.lines)
    }

    /// A dictionary in ISO-8859-1 (older Sphinx models) is read, not refused as bad UTF-8; CRLF lines too.
    @Test(.enabled(if: present, Comment(rawValue: missing)))
    func aDictionaryInAnotherEncodingIsCopiedByteForByte() throws {
        let latin1: [UInt8] = Array("the DH AH\nstra".utf8) + [0xDF] + Array("e SH T R AA S AH\r\nwhat W AH T\nwhat(2) HH W AH T\n".utf8)
        let vocabulary = try Vocabulary(configuration: SpeechConfiguration(vocabulary: 1, words: ["what"]), dictionary: latin1)
        #expect(vocabulary.lines == [ArraySlice("the DH AH".utf8), ArraySlice("what W AH T".utf8), ArraySlice("what(2) HH W AH T".utf8)])
        let all = try Vocabulary(configuration: SpeechConfiguration(vocabulary: 10, words: ["what"]), dictionary: latin1)
        #expect(all.lines.count == 3, "the word with 0xDF is not in the English language model, so it is never listened for")
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
        let file = try DictionaryFile(contents: Array("hello HH AH L OW\n".utf8))
        #expect(try String(contentsOfFile: file.path, encoding: .utf8) == "hello HH AH L OW\n")
        let target = try FileManager.default.destinationOfSymbolicLink(atPath: file.path)
        #expect(target.hasSuffix("(deleted)"), "\(target)")
        // Never inherited by muevald's children (the face scan, a completion command).
        let descriptor = try #require(Int32(file.path.dropFirst("/proc/self/fd/".count)))
        #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
    }
}
