import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import SessionModel
import WireProtocol
import XCTest

/// Whisper through a real muevald (issue 53): espeak-ng's think-aloud lines go over the wire as WAV `<media>`,
/// muevald transcribes them after the stop, and the transcript is read back from the session file.
final class WhisperTranscriptionTests: XCTestCase {
    static let espeak = "/usr/bin/espeak-ng"
    /// `make speech-model`'s installation, or the mueval-speech package's.
    static let installed = ["/usr/local/lib/mueval-speech", "/usr/lib/mueval-speech"].contains {
        FileManager.default.fileExists(atPath: $0 + "/models/base/model.bin") && FileManager.default.fileExists(atPath: $0 + "/site/faster_whisper")
    }
    static let start = 1_700_000_000.0

    override func setUp() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.espeak) else {
            throw XCTSkip("CANNOT RUN HERE: espeak-ng is missing (make test-deps installs it)")
        }
        guard Self.installed else { throw XCTSkip("CANNOT RUN HERE: Whisper is not installed (make test-deps runs make speech-model)") }
    }

    /// Lines spoken one after another with pauses of 1–3 s, at 22,050 Hz: the samples and where each line starts (s).
    private func speak(_ lines: [String], voice: String) throws -> (audio: TestAudio, starts: [Double]) {
        var samples: [Int16] = []
        var starts: [Double] = []
        for (index, line) in lines.enumerated() {
            samples += [Int16](repeating: 0, count: (index % 3 + 1) * 22_050)
            starts.append(Double(samples.count) / 22_050)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.espeak)
            process.arguments = ["--stdout", "-v", voice, "-s", "160", line]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let wav = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            samples += Data(wav.dropFirst(44)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        }
        samples += [Int16](repeating: 0, count: 22_050)
        return (TestAudio(samples: samples, sampleRate: 22_050), starts)
    }

    private func daemon(config: String) async throws -> TestDaemon {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("whisper-\(UUID().uuidString.prefix(8)).toml").path
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await TestDaemon.start(arguments: ["--config", path])
    }

    /// Records the streams in one session of `phone-1`, stops it and waits until each stream's transcription ended.
    private func record(_ streams: [(name: String, audio: TestAudio)], on daemon: TestDaemon) async throws -> SessionRecord {
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "think-aloud", device: "phone-1"))
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "phone-1"))
        _ = try await device.waitFor("welcome") { _ in device.welcome }
        var seq: Int64 = 1
        for (name, audio) in streams {
            let chunks = audio.chunks(stream: name, start: Self.start, chunkSeconds: 1, firstSeq: seq)
            for batch in stride(from: 0, to: chunks.count, by: 50) {
                for chunk in chunks[batch..<min(chunks.count, batch + 50)] { try await device.send(WireEncoder.media(chunk)) }
                try await device.waitForAck(chunks[min(chunks.count, batch + 50) - 1].seq!)
            }
            seq += Int64(chunks.count)
        }
        XCTAssertEqual(device.errors, [])
        try await device.goodbye()
        await device.close()
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
        try await waitForTranscripts(session, streams: streams.count)
        return session
    }

    private func waitForTranscripts(_ session: SessionRecord, streams: Int, after: Double = 0) async throws {
        let statuses = try await eventually(timeout: 300, "the transcription of \(streams) stream(s)") { () -> [TranscriptionStatus]? in
            let statuses = try SessionReader(path: session.path).transcriptionStatus()
            return statuses.count == streams && statuses.allSatisfy({ ($0.state == .done || $0.state == .failed) && $0.updated > after })
                ? statuses : nil
        }
        for status in statuses { XCTAssertEqual(status.state, .done, status.error ?? "") }
    }

    private func words(_ text: String) -> [String] {
        text.lowercased().split { !($0.isLetter || $0 == "'") }.map(String.init)
    }

    /// Word-level edit distance over the words said.
    private func wordErrorRate(said: [String], heard: [String]) -> Double {
        let reference = said.flatMap(words), hypothesis = heard.flatMap(words)
        var previous = Array(0...hypothesis.count)
        for (row, word) in reference.enumerated() {
            var current = [row + 1] + [Int](repeating: 0, count: hypothesis.count)
            for (column, other) in hypothesis.enumerated() {
                current[column + 1] = min(previous[column] + (word == other ? 0 : 1), previous[column + 1] + 1, current[column] + 1)
            }
            previous = current
        }
        return Double(previous[hypothesis.count]) / Double(max(reference.count, 1))
    }

    /// English: readable text on the events' timeline, words the engine timed, the exclamations found where they were
    /// said, the engine with its model's hash, and `events --grep` finding what was said.
    func testEnglishThinkAloudIsReadableAndItsExclamationsAreFound() async throws {
        let lines = ["okay so I am on the start screen now", "where is the publish button", "the text is a bit small but it works",
                     "oh no, it closed", "I can't find the settings", "why did it go back to the list", "good, that is done"]
        let (audio, starts) = try speak(lines, voice: "en-us")
        let daemon = try await daemon(config: "[transcription]\nlanguage = \"en\"\n")
        defer { daemon.cleanUp() }
        let session = try await record([("voice-1", audio)], on: daemon)
        let reader = try SessionReader(path: session.path)
        let transcript = try reader.transcript()
        let heard = transcript.map(\.text)
        let rate = wordErrorRate(said: lines, heard: heard)
        XCTAssertLessThanOrEqual(rate, 0.12, "word error rate \(rate): \(heard)")
        let engine = try XCTUnwrap(reader.transcriptionStatus().first?.engine)
        XCTAssertTrue(engine.contains("faster-whisper") && engine.contains("Whisper tiny.en sha256 1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a")
                      && engine.hasSuffix("language en"), engine)
        // On the events' timeline: the stream's start plus the time in the recording.
        for segment in transcript {
            XCTAssertGreaterThanOrEqual(segment.start, Self.start)
            XCTAssertLessThanOrEqual(segment.end, Self.start + Double(audio.samples.count) / 22_050 + 0.5)
            XCTAssertNotNil(segment.confidence)
        }
        // Each word with its time, inside its segment: what was said, word by word.
        let timed = try reader.transcriptWords()
        XCTAssertEqual(timed.map(\.text).joined().trimmingCharacters(in: .whitespaces), heard.joined(separator: " "))
        for word in timed {
            XCTAssertTrue(transcript.contains { $0.start <= word.start && word.end <= $0.end + 0.01 }, "\(word) outside every segment")
            XCTAssertNotNil(word.probability)
        }
        for (phrase, line) in [("where is", 1), ("oh no", 3), ("i can't", 4), ("why did", 5)] {
            XCTAssertTrue(transcript.contains { $0.exclamation == phrase && abs($0.start - (Self.start + starts[line])) <= 1 },
                          "\(phrase) at \(starts[line]) s: \(transcript.map { "\($0.start - Self.start) \($0.text) \($0.exclamation ?? "")" })")
        }
        XCTAssertEqual(transcript.filter { $0.exclamation != nil }.count, 4, "no false alarm: \(transcript)")
        let grep = try daemon.muevalctl(["events", String(session.id), "--grep", "publish button"])
        XCTAssertEqual(grep.status, 0, grep.stderr)
        XCTAssertTrue(grep.stdout.lowercased().contains("publish button"), grep.stdout)
    }

    /// German (`language = "de"`): Whisper base on espeak-ng's `de` voice, the lab's German exclamations.
    func testGermanThinkAloudWithTheMultilingualModel() async throws {
        let lines = ["okay, ich bin jetzt auf der Startseite", "wo ist der Knopf zum Veröffentlichen", "die Schrift ist etwas klein, aber es geht",
                     "oh nein, was ist passiert", "ich finde die Einstellungen nicht", "gut, das ist erledigt"]
        let (audio, starts) = try speak(lines, voice: "de")
        let daemon = try await daemon(config: "[transcription]\nlanguage = \"de\"\nexclamations = [\"oh nein\", \"wo ist\"]\n")
        defer { daemon.cleanUp() }
        let session = try await record([("voice-1", audio)], on: daemon)
        let reader = try SessionReader(path: session.path)
        let transcript = try reader.transcript()
        let rate = wordErrorRate(said: lines, heard: transcript.map(\.text))
        XCTAssertLessThanOrEqual(rate, 0.25, "word error rate \(rate): \(transcript.map(\.text))")
        let engine = try XCTUnwrap(reader.transcriptionStatus().first?.engine)
        XCTAssertTrue(engine.contains("Whisper base sha256 d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9")
                      && engine.hasSuffix("language de"), engine)
        for (phrase, line) in [("wo ist", 1), ("oh nein", 3)] {
            XCTAssertTrue(transcript.contains { $0.exclamation == phrase && abs($0.start - (Self.start + starts[line])) <= 1 }, "\(phrase): \(transcript)")
        }
    }

    /// Two minutes of digital silence and two of white noise through muevald: no words in either (Whisper writes text
    /// over both without the voice-activity detection). `make bench` hears ten minutes of each (SpeechBenchmark quiet):
    /// here, ten would cost CI two minutes for what two show.
    func testSilenceAndNoiseGiveNoWords() async throws {
        let count = 120 * 16_000
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        let noise = (0..<count).map { _ -> Int16 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int16(truncatingIfNeeded: Int64(bitPattern: state) >> 53)  // ±1,024: white noise at about -33 dBFS
        }
        let daemon = try await daemon(config: "[transcription]\nlanguage = \"en\"\n")
        defer { daemon.cleanUp() }
        let session = try await record([("voice-1", TestAudio(samples: [Int16](repeating: 0, count: count), sampleRate: 16_000)),
                                        ("voice-2", TestAudio(samples: noise, sampleRate: 16_000))], on: daemon)
        let transcript = try SessionReader(path: session.path).transcript()
        XCTAssertEqual(transcript, [], "\(transcript.map { "\($0.stream): \($0.text)" })")
    }

    /// Without Whisper installed muevald says so once and transcribes with PocketSphinx; that transcript stays after
    /// a restart with Whisper, until `muevalctl transcribe` makes it Whisper's.
    func testWithoutWhisperPocketSphinxTranscribesAndTranscribeRedoesItWithWhisper() async throws {
        let lines = ["where is the publish button", "oh no, it closed", "I can't find the settings"]
        let (audio, _) = try speak(lines, voice: "en-us+f2")
        let nowhere = FileManager.default.temporaryDirectory.appendingPathComponent("no-whisper-\(UUID().uuidString.prefix(8))").path
        let daemon = try await daemon(config: "[transcription]\nspeech_directory = \"\(nowhere)\"\n")
        defer { daemon.cleanUp() }
        let session = try await record([("voice-1", audio), ("voice-2", audio)], on: daemon)
        let reader = try SessionReader(path: session.path)
        for status in try reader.transcriptionStatus() { XCTAssertTrue(status.engine?.hasPrefix("pocketsphinx") == true, "\(status)") }
        XCTAssertFalse(try reader.transcript().isEmpty)
        XCTAssertEqual(try reader.transcriptWords(), [], "PocketSphinx's transcript has no words' times")
        let warnings = daemon.log.components(separatedBy: "\n").filter { $0.contains("Whisper cannot run") }
        XCTAssertEqual(warnings.count, 1, daemon.log)
        XCTAssertTrue(warnings.first?.contains("faster-whisper is not installed in \(nowhere)") == true, warnings.first ?? "")

        // The same data with Whisper: the transcript stays PocketSphinx's until transcribed again.
        let whisper = try await TestDaemon.start(dataDirectoryCopy: daemon.dataDirectory)
        defer { whisper.cleanUp() }
        let sessions = try await whisper.ctl.call(ControlRequest.ListSessions())
        let copy = try XCTUnwrap(sessions.first { $0.id == session.id })
        XCTAssertTrue(try SessionReader(path: copy.path).transcriptionStatus().allSatisfy { $0.engine?.hasPrefix("pocketsphinx") == true })
        let before = Date().timeIntervalSince1970
        let queued = try whisper.muevalctl(["transcribe", String(session.id)])
        XCTAssertEqual(queued.status, 0, queued.stderr)
        try await waitForTranscripts(copy, streams: 2, after: before)
        let statuses = try SessionReader(path: copy.path).transcriptionStatus()
        for status in statuses { XCTAssertTrue(status.engine?.hasPrefix("faster-whisper") == true, "\(status)") }
        XCTAssertEqual(Set(try SessionReader(path: copy.path).transcriptWords().map(\.stream)), ["voice-1", "voice-2"])
        // Whisper's text and exclamations now ("publish button" is heard as "publisher" in this voice: 2 of 14 words).
        let transcript = try SessionReader(path: copy.path).transcript().filter { $0.stream == "voice-1" }
        XCTAssertLessThanOrEqual(wordErrorRate(said: lines, heard: transcript.map(\.text)), 0.25, "\(transcript)")
        XCTAssertEqual(transcript.compactMap(\.exclamation), ["where is", "oh no", "i can't"], "\(transcript)")
    }
}
