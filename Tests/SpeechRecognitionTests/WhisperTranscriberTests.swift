import Foundation
import MuEvalWire
import SpeechRecognition
import Testing

/// The Whisper transcriber with its real child process on espeak-ng's speech: what it gives back, and how it fails.
struct WhisperTranscriberTests {
    static let espeak = "/usr/bin/espeak-ng"
    static let configuration = WhisperConfiguration()
    static let runs = FileManager.default.isExecutableFile(atPath: espeak) && configuration.missing == nil
    static let skipped = "CANNOT RUN HERE: espeak-ng or Whisper is missing (make test-deps installs both)"

    /// A WAV file of the lines, each after a second of silence.
    private func recording(_ lines: [String]) throws -> String {
        var pcm: [UInt8] = []
        for line in lines {
            pcm += [UInt8](repeating: 0, count: 22_050 * 2)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.espeak)
            process.arguments = ["--stdout", "-v", "en-us", "-s", "160", line]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            pcm += pipe.fileHandleForReading.readDataToEndOfFile().dropFirst(44)
            process.waitUntilExit()
        }
        pcm += [UInt8](repeating: 0, count: 22_050 * 2)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("whisper-\(UUID().uuidString).wav").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(WAVFile.header(sampleRate: 22_050, dataBytes: pcm.count) + pcm)))
        return path
    }

    @Test(.enabled(if: runs, Comment(rawValue: skipped)))
    func wordsSegmentsAndTheEngineComeBack() throws {
        let path = try recording(["where is the publish button", "the text is a bit small"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        var fractions: [Double] = []
        let transcription = try WhisperTranscriber(configuration: Self.configuration, speech: SpeechConfiguration(workers: 2))
            .transcription(path: path, container: .wav, progress: { fractions.append($0) }, isCancelled: { false })
        // As Whisper writes them (tiny.en hears espeak-ng's "button" here as "map": the one error, the same on every run).
        #expect(transcription.segments.count == 2)
        #expect(transcription.segments.first?.text.hasPrefix("Where is the publish") == true)
        #expect(transcription.segments.last?.text == "The text is a bit small.")
        #expect(transcription.segments.map(\.exclamation) == ["where is", nil])
        #expect(transcription.words.count == 11)
        #expect(zip(transcription.words, transcription.words.dropFirst()).allSatisfy { $0.start <= $1.start && $0.end <= $1.start + 0.01 })
        #expect(transcription.engine.hasPrefix("faster-whisper 1.2.1 (CTranslate2 4.8.5, int8), Whisper tiny.en sha256 1a5afae0"))
        #expect(fractions.last == 1)
        #expect(transcription.peakMemoryKiB.map { $0.resident > 0 && $0.address >= $0.resident } == true)
    }

    @Test(.enabled(if: runs, Comment(rawValue: skipped)))
    func aCancelledTranscriptionEndsItsChildAndGivesNothing() throws {
        let path = try recording(["okay so I am on the start screen now"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let transcription = try WhisperTranscriber(configuration: Self.configuration, speech: SpeechConfiguration())
            .transcription(path: path, container: .wav, progress: { _ in }, isCancelled: { true })
        #expect(transcription.segments.isEmpty && transcription.words.isEmpty)
    }

    /// An address space too small for Python's libraries: the reason names the setting to raise.
    @Test(.enabled(if: runs, Comment(rawValue: skipped)))
    func tooLittleMemoryIsNamedAsTheSetting() throws {
        let path = try recording(["hello"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        var small = Self.configuration
        small.memoryMiB = 64
        let transcriber = try WhisperTranscriber(configuration: small, speech: SpeechConfiguration())
        do {
            _ = try transcriber.transcription(path: path, container: .wav, progress: { _ in }, isCancelled: { false })
            Issue.record("transcribed within 64 MiB")
        } catch {
            #expect(error.description.contains("memory_mib"), "\(error)")
        }
    }

    @Test(.enabled(if: runs, Comment(rawValue: skipped)))
    func aFileThatIsNotAudioIsAnErrorNotACrash() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("not-audio-\(UUID().uuidString).wav").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("#EXTM3U\nsegment.wav\n".utf8)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: SpeechError.self) {
            try WhisperTranscriber(configuration: Self.configuration, speech: SpeechConfiguration())
                .transcription(path: path, container: .wav, progress: { _ in }, isCancelled: { false })
        }
    }

    /// A machine with many cores runs as many workers as the address space allowed holds, not one per core.
    @Test(.enabled(if: runs, Comment(rawValue: skipped)))
    func workersAreAsManyAsTheMemoryHolds() throws {
        var configuration = Self.configuration
        #expect(try WhisperTranscriber(configuration: configuration, speech: SpeechConfiguration(workers: 16)).workers == 3)
        #expect(try WhisperTranscriber(configuration: configuration, speech: SpeechConfiguration(workers: 2)).workers == 2)
        configuration.memoryMiB = 512
        #expect(try WhisperTranscriber(configuration: configuration, speech: SpeechConfiguration(workers: 2)).workers == 1)
    }

    /// A code Whisper does not know: refused by name, before any audio is recognised.
    @Test(.enabled(if: runs, Comment(rawValue: skipped)))
    func anUnknownLanguageIsNamed() throws {
        let path = try recording(["hello"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        var unknown = Self.configuration
        unknown.language = "zz"
        do {
            _ = try WhisperTranscriber(configuration: unknown, speech: SpeechConfiguration())
                .transcription(path: path, container: .wav, progress: { _ in }, isCancelled: { false })
            Issue.record("transcribed in language zz")
        } catch {
            #expect(error.description.contains("does not know the language zz"), "\(error)")
        }
    }
}
