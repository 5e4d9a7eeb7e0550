internal import Foundation
internal import WireProtocol

/// How the simulated tester's voice is made and sent (`muevalsim --think-aloud`).
public struct ThinkAloudOptions: Sendable {
    /// espeak-ng's voice and words per minute (en-us at 140 is what the transcription is tuned on: docs/SPEECH.md).
    public var voice = "en-us"
    public var wordsPerMinute = 140
    /// Seconds of audio per `<media>` chunk.
    public var chunkSeconds = 1.0
    /// Where to write one JSON line per line said (`--speech-log`), for checking a transcription against it.
    public var speechLog: String?

    public init() {}
}

/// Why the tester cannot speak.
public struct ThinkAloudError: Error, CustomStringConvertible {
    public var description: String
}

/// The simulated phone's microphone while the tester thinks aloud: a continuous 16-bit mono WAV stream
/// ("voice-1") on the simulated clock, silent but for the lines the tester says, synthesised with espeak-ng
/// (Debian's speech synthesiser, so that tests and demos carry real speech), cut into chunks of
/// `chunkSeconds` as a capture library records them.
struct ThinkAloudRecorder {
    static let sampleRate = 22_050  // espeak-ng's own rate: no resampling here
    static let stream = "voice-1"

    let options: ThinkAloudOptions
    let epoch: Double
    let device: String
    /// Lines to be heard, with their audio, by start on the simulated clock.
    private var lines: [(start: Double, samples: [Int16])] = []
    private var synthesised: [String: [Int16]] = [:]
    private var part: Int64 = 0
    private var log: FileHandle?

    init(options: ThinkAloudOptions, epoch: Double, device: String) throws(ThinkAloudError) {
        self.options = options
        self.epoch = epoch
        self.device = device
        guard FileManager.default.isExecutableFile(atPath: Self.espeak) else {
            throw ThinkAloudError(description: "--think-aloud needs espeak-ng to speak (apt install espeak-ng)")
        }
        if let path = options.speechLog {
            guard FileManager.default.fileExists(atPath: path) || FileManager.default.createFile(atPath: path, contents: nil),
                  let handle = FileHandle(forWritingAtPath: path) else {
                throw ThinkAloudError(description: "cannot write the speech log \(path)")
            }
            handle.seekToEndOfFile()
            log = handle
        }
    }

    static let espeak = "/usr/bin/espeak-ng"

    /// Lines the tester said, to be heard at their time.
    mutating func add(_ spoken: [SpokenLine]) throws(ThinkAloudError) {
        for line in spoken {
            let samples = try synthesise(line.text)
            lines.append((line.time, samples))
            let start = epoch + line.time
            let end = start + Double(samples.count) / Double(Self.sampleRate)
            let record: [String: String] = ["device": device, "stream": Self.stream, "start": String(start), "end": String(end), "text": line.text]
            if let log, let json = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]) {
                log.write(json + Data("\n".utf8))
            }
        }
    }

    /// The next chunk, when the simulated clock has passed its end (`now`, seconds since the run's start).
    mutating func nextChunk(until now: Double) -> WireMedia? {
        let start = Double(part) * options.chunkSeconds
        guard start + options.chunkSeconds <= now else { return nil }
        return chunk(from: start)
    }

    /// The chunks still to come up to `end` on the simulated clock, and through the end of every line said.
    mutating func remaining(through end: Double) -> [WireMedia] {
        let last = max(end, lines.map { $0.start + Double($0.samples.count) / Double(Self.sampleRate) }.max() ?? 0)
        var chunks: [WireMedia] = []
        while Double(part) * options.chunkSeconds < last { chunks.append(chunk(from: Double(part) * options.chunkSeconds)) }
        return chunks
    }

    private mutating func chunk(from start: Double) -> WireMedia {
        let rate = Double(Self.sampleRate)
        let count = Int(options.chunkSeconds * rate)
        let first = Int((start * rate).rounded())
        var samples = [Int16](repeating: 0, count: count)
        for line in lines {
            let lineFirst = Int((line.start * rate).rounded())
            let from = max(first, lineFirst), to = min(first + count, lineFirst + line.samples.count)
            guard from < to else { continue }
            for index in from..<to { samples[index - first] = line.samples[index - lineFirst] }
        }
        // Lines wholly heard are not needed again.
        lines.removeAll { Int((($0.start * rate).rounded())) + $0.samples.count <= first + count }
        var bytes = part == 0 ? Self.header : []
        samples.withUnsafeBytes { bytes.append(contentsOf: $0) }
        defer { part += 1 }
        return WireMedia(stream: Self.stream, format: .wav, part: part, start: epoch + start, duration: options.chunkSeconds,
                         seq: nil, bytes: bytes)
    }

    /// A RIFF/WAVE header for 16-bit mono at `sampleRate` whose sizes are unknown while recording.
    static let header = WAVFile.header(sampleRate: sampleRate, dataBytes: nil)

    /// The line's samples as espeak-ng speaks it; each text is synthesised once per run.
    private mutating func synthesise(_ text: String) throws(ThinkAloudError) -> [Int16] {
        if let samples = synthesised[text] { return samples }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.espeak)
        process.arguments = ["--stdout", "-v", options.voice, "-s", String(options.wordsPerMinute), text]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw ThinkAloudError(description: "cannot run espeak-ng: \(error)")
        }
        let wav = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, wav.count > 44 else {
            throw ThinkAloudError(description: "espeak-ng could not say \"\(text)\" with voice \(options.voice)")
        }
        // espeak-ng writes a 44-byte header, then 16-bit mono PCM at 22,050 Hz.
        let samples = wav.dropFirst(44).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        synthesised[text] = samples
        return samples
    }
}
