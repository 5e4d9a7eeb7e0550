internal import Foundation
public import MuEvalWire
internal import WireProtocol

/// How the simulated tester's voice is made and sent (`muevalsim --think-aloud`).
public struct ThinkAloudOptions: Sendable {
    /// espeak-ng's voice and words per minute: the female variant f2 is the voice PocketSphinx's model
    /// hears best (69 % of words against 38 % for the default voice), and at 160 words a minute (a
    /// conversational pace) it found the most exclamations (docs/SPEECH.md).
    public var voice = "en-us+f2"
    public var wordsPerMinute = 160
    /// Seconds of audio per `<media>` chunk.
    public var chunkSeconds = 1.0
    /// Where to write one JSON line per line said (`--speech-log`), for checking a transcription against it.
    public var speechLog: String?
    /// The microphone's format: PCM WAV, or AAC in fragmented MP4 (encoded by ffmpeg) as phones record it.
    public var audioFormat = MediaFormat.wav
    /// Also the front camera: a drawn face as H.264 in fragmented MP4 (`face-1`, encoded by ffmpeg).
    public var faceVideo = false

    public init() {}
}

/// Why the tester cannot speak.
public struct ThinkAloudError: Error, CustomStringConvertible {
    public var description: String
}

/// The simulated phone's microphone while the tester thinks aloud: a continuous mono stream ("voice-1")
/// on the simulated clock, silent but for the lines the tester says, synthesised with espeak-ng (Debian's
/// speech synthesiser, so that tests and demos carry real speech), recorded in steps of `chunkSeconds`
/// as a capture library records: each step a WAV chunk, or fed to an AAC encoder whose fragments are
/// sent as they complete; with `faceVideo`, the front camera's frames of the same step likewise.
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
    /// The AAC encoder, unless the format is WAV.
    private let audio: FragmentedEncoder?
    private let camera: FaceCamera?
    private let face: FragmentedEncoder?

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
        audio = options.audioFormat == .wav ? nil : try FragmentedEncoder(
            stream: Self.stream, format: .aacMP4, epoch: epoch,
            arguments: ["-f", "s16le", "-ar", String(Self.sampleRate), "-ac", "1", "-i", "pipe:0", "-c:a", "aac", "-b:a", "48k"],
            // Every AAC frame is a key frame: fragments are cut by duration instead.
            movflags: "empty_moov+default_base_moof", fragmentSeconds: options.chunkSeconds)
        camera = options.faceVideo ? FaceCamera(device: device) : nil
        face = options.faceVideo ? try FragmentedEncoder(
            stream: FaceCamera.stream, format: .h264MP4, epoch: epoch, arguments: FaceCamera.encoderArguments,
            movflags: "frag_keyframe+empty_moov+default_base_moof", fragmentSeconds: nil) : nil
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

    /// Records the next step when the simulated clock (`now`, seconds since the run's start) has passed
    /// its end: the parts it completed (a WAV chunk; encoded fragments when one is complete; none yet
    /// while the encoder fills one); nil when the next step is not due.
    mutating func advance(until now: Double) throws(ThinkAloudError) -> [WireMedia]? {
        let start = Double(part) * options.chunkSeconds
        guard start + options.chunkSeconds <= now else { return nil }
        return try step(from: start)
    }

    /// The parts still to come up to `end` on the simulated clock, through the end of every line said,
    /// and the encoders' last fragments.
    mutating func remaining(through end: Double) throws(ThinkAloudError) -> [WireMedia] {
        let last = max(end, lines.map(Self.end(of:)).max() ?? 0)
        var media: [WireMedia] = []
        while Double(part) * options.chunkSeconds < last { media += try step(from: Double(part) * options.chunkSeconds) }
        for encoder in [audio, face].compactMap({ $0 }) { media += try encoder.finish() }
        return media
    }

    private mutating func step(from start: Double) throws(ThinkAloudError) -> [WireMedia] {
        let end = start + options.chunkSeconds
        var media: [WireMedia] = []
        if let camera, let face {
            let lines = lines
            let frames = camera.frames(from: start, to: end) { time in lines.contains { $0.start <= time && time < Self.end(of: $0) } }
            media += try face.feed(frames, seconds: options.chunkSeconds)
        }
        let samples = pcm(from: start)
        defer { part += 1 }
        guard let audio else {
            var bytes = part == 0 ? Self.header : []
            samples.withUnsafeBytes { bytes.append(contentsOf: $0) }
            return [WireMedia(stream: Self.stream, format: .wav, part: part, start: epoch + start, duration: options.chunkSeconds,
                              seq: nil, bytes: bytes)] + media
        }
        return try audio.feed(samples.withUnsafeBytes { Array($0) }, seconds: options.chunkSeconds) + media
    }

    /// Where a line ends on the simulated clock.
    private static func end(of line: (start: Double, samples: [Int16])) -> Double {
        line.start + Double(line.samples.count) / Double(sampleRate)
    }

    /// The microphone's samples of one step: silence, and the lines said in it.
    private mutating func pcm(from start: Double) -> [Int16] {
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
        return samples
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
