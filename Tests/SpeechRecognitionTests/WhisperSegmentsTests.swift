import Foundation
@testable import SpeechRecognition
import Testing

/// Whisper's words into the transcript's segments and exclamations (no model needed: the words are given).
struct WhisperSegmentsTests {
    /// Words as Whisper writes them: a leading space, capitals, punctuation; 0.3 s each, `gap` seconds apart.
    private func words(_ text: String, from start: Double = 10, gap: Double = 0.05) -> [RecognisedWord] {
        text.split(separator: " ").enumerated().map { index, word in
            let begin = start + Double(index) * (0.3 + gap)
            return RecognisedWord(text: " " + word, start: begin, end: begin + 0.3, probability: 0.9)
        }
    }

    private let phrases = SpeechConfiguration.defaultExclamations

    @Test func sentencesBecomeSegmentsWithTheirTextAsWritten() {
        let segments = WhisperSegments.build(words("Okay, so I'm on the start screen now. Let me open the blog first."), exclamations: phrases)
        #expect(segments.map(\.text) == ["Okay, so I'm on the start screen now.", "Let me open the blog first."])
        #expect(segments.allSatisfy { $0.exclamation == nil && abs(($0.confidence ?? 0) - 0.9) < 1e-9 })
        #expect(segments[1].start == 10 + 8 * (0.3 + 0.05))
    }

    @Test func aPauseEndsASegmentWithoutAFullStop() {
        let segments = WhisperSegments.build(words("the list looks fine") + words("now the map", from: 20), exclamations: phrases)
        #expect(segments.map(\.text) == ["the list looks fine", "now the map"])
    }

    @Test func anExclamationIsFoundInAnyCaseAndPunctuation() {
        let segments = WhisperSegments.build(words("Hmm. Oh, no! Where is the publish button? I can’t find it."), exclamations: phrases)
        #expect(segments.map(\.text) == ["Hmm.", "Oh, no!", "Where is the publish button?", "I can’t find it."])
        #expect(segments.map(\.exclamation) == [nil, "oh no", "where is", "i can't"])
    }

    @Test func aSegmentIsSplitAtEachExclamationWithinIt() {
        let segments = WhisperSegments.build(words("okay oh no what happened to my post"), exclamations: phrases)
        #expect(segments.map(\.text) == ["okay", "oh no", "what happened to my post"])
        #expect(segments.map(\.exclamation) == [nil, "oh no", "what happened"])
        #expect(segments[1].start == 10 + 1 * (0.3 + 0.05))
    }

    @Test func wordsThatOnlyResembleAPhraseAreNoExclamation() {
        let segments = WhisperSegments.build(words("I can tell where it is. Why, didn't it work?"), exclamations: phrases)
        #expect(segments.allSatisfy { $0.exclamation == nil }, "\(segments)")
    }

    @Test func overlappingPhrasesKeepTheFirst() {
        let custom = [ExclamationPhrase("where is"), ExclamationPhrase("is the"), ExclamationPhrase("where is the menu")]
        let segments = WhisperSegments.build(words("where is the menu"), exclamations: custom)
        #expect(segments.map(\.exclamation) == ["where is the menu"])
    }

    @Test func nothingHeardIsNoSegment() {
        #expect(WhisperSegments.build([], exclamations: phrases).isEmpty)
        #expect(WhisperSegments.build([RecognisedWord(text: " ", start: 1, end: 1, probability: 0.1)], exclamations: phrases).isEmpty)
    }

    @Test func aLongRunWithoutPunctuationIsCut() {
        let text = Array(repeating: "word", count: WhisperSegments.longest + 5).joined(separator: " ")
        #expect(WhisperSegments.build(words(text), exclamations: phrases).map { $0.text.split(separator: " ").count } == [WhisperSegments.longest, 5])
    }

    @Test(arguments: ["en", "de", "auto", "fr"]) func aLanguageIsACodeOrAuto(language: String) {
        #expect(WhisperConfiguration.isLanguage(language))
    }

    @Test(arguments: ["", "EN", "german", "e1", "auto "]) func anythingElseIsNoLanguage(language: String) {
        #expect(!WhisperConfiguration.isLanguage(language))
    }

    @Test func theLanguageChoosesTheModel() {
        #expect(WhisperConfiguration(directory: "/x", language: "en").modelDirectory == "/x/models/tiny.en")
        #expect(WhisperConfiguration(directory: "/x", language: "de").modelDirectory == "/x/models/base")
        #expect(WhisperConfiguration(directory: "/x", language: "auto").modelDirectory == "/x/models/base")
        #expect(WhisperConfiguration(directory: "/x", model: "/m/small", language: "de").modelName == "small")
    }

    @Test func aMissingInstallationSaysWhatToInstall() throws {
        let configuration = WhisperConfiguration(directory: "/nowhere/mueval-speech")
        #expect(configuration.missing == "faster-whisper is not installed in /nowhere/mueval-speech (make speech-model, or apt install mueval-speech)")
        #expect(throws: SpeechError(configuration.missing!)) { try WhisperTranscriber(configuration: configuration, speech: SpeechConfiguration()) }
    }
}
