internal import Foundation
internal import MuEvalWire
internal import WireProtocol

/// One `<media>` stream encoded by an ffmpeg child process, as a phone's capture library encodes its
/// microphone or camera: raw samples or frames go in on its standard input as the simulated clock
/// passes, fragmented MP4 comes out on its standard output and is cut into parts as fragments
/// complete. A fragment is sent once the next one starts (or the stream ends), so that its duration
/// is known: the server adds up the parts' durations into the stream's.
final class FragmentedEncoder {
    let stream: String
    let format: MediaFormat
    private let epoch: Double
    private let process: Process
    private let input: FileHandle
    private let output: OutputCollector
    private var splitter = FragmentedMP4Splitter()
    /// A fragment waiting for the next one's start.
    private var held: FragmentedMP4Splitter.Part?
    private var part: Int64 = 0
    /// Seconds of media fed so far: where the last fragment ends.
    private var fed = 0.0

    /// Where ffmpeg is: on `PATH`, as a shell finds it; nil when it is not installed.
    static let ffmpeg: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/ffmpeg" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// `arguments`: ffmpeg's input and encoder options, read from `pipe:0`; the fragmented MP4 output
    /// is added here, cut at key frames (`frag_keyframe` in `movflags`) or every `fragmentSeconds`.
    init(stream: String, format: MediaFormat, epoch: Double, arguments: [String], movflags: String,
         fragmentSeconds: Double?) throws(ThinkAloudError) {
        guard let ffmpeg = Self.ffmpeg else {
            throw ThinkAloudError(description: "\(format.rawValue) needs ffmpeg to encode (apt install ffmpeg)")
        }
        self.stream = stream
        self.format = format
        self.epoch = epoch
        process = Process()
        process.executableURL = URL(fileURLWithPath: ffmpeg)
        process.arguments = ["-hide_banner", "-loglevel", "error"] + arguments
            + (fragmentSeconds.map { ["-frag_duration", String(Int($0 * 1_000_000))] } ?? [])
            + ["-f", "mp4", "-movflags", movflags, "pipe:1"]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        input = stdin.fileHandleForWriting
        output = OutputCollector(stdout.fileHandleForReading)
        do {
            try process.run()
        } catch {
            throw ThinkAloudError(description: "cannot run ffmpeg: \(error)")
        }
    }

    /// Feeds `seconds` of raw media; the parts that completed meanwhile.
    func feed(_ bytes: [UInt8], seconds: Double) throws(ThinkAloudError) -> [WireMedia] {
        do {
            try input.write(contentsOf: bytes)
        } catch {
            throw ThinkAloudError(description: "ffmpeg stopped encoding \(stream) (exit status \(process.isRunning ? "none yet" : String(process.terminationStatus)))")
        }
        fed += seconds
        return try parts(from: output.take())
    }

    /// Ends the input and waits for ffmpeg's last fragment: every part still to send.
    func finish() throws(ThinkAloudError) -> [WireMedia] {
        try? input.close()
        let rest = output.waitForEnd()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ThinkAloudError(description: "ffmpeg failed encoding \(stream) (exit status \(process.terminationStatus))")
        }
        var media = try parts(from: rest)
        do {
            if let last = try splitter.finish() { media += accept(last) }
        } catch {
            throw ThinkAloudError(description: error.description)
        }
        if let held { media.append(wire(held, end: fed)) }
        held = nil
        return media
    }

    private func parts(from bytes: [UInt8]) throws(ThinkAloudError) -> [WireMedia] {
        do {
            return try splitter.append(bytes).flatMap(accept)
        } catch {
            throw ThinkAloudError(description: error.description)
        }
    }

    /// The init segment goes at once; a fragment is held until the next one says where it ends.
    private func accept(_ next: FragmentedMP4Splitter.Part) -> [WireMedia] {
        guard !next.isInit else { return [wire(next, end: 0)] }
        defer { held = next }
        return held.map { [wire($0, end: next.start)] } ?? []
    }

    private func wire(_ piece: FragmentedMP4Splitter.Part, end: Double) -> WireMedia {
        defer { part += 1 }
        return WireMedia(stream: stream, format: format, part: part, start: epoch + piece.start, duration: max(0, end - piece.start),
                         seq: nil, bytes: piece.bytes)
    }
}

/// What a child process writes on a pipe, read on a thread of its own so that writing to the
/// child never waits for the reader (the pipe's buffer is small); held until taken.
private final class OutputCollector: @unchecked Sendable {
    private let condition = NSCondition()
    private var bytes: [UInt8] = []
    private var ended = false

    init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            while true {
                let data = handle.availableData
                condition.lock()
                if data.isEmpty { ended = true } else { bytes.append(contentsOf: data) }
                condition.broadcast()
                condition.unlock()
                if data.isEmpty { return }
            }
        }
        thread.name = "muevalsim-ffmpeg"
        thread.start()
    }

    /// What has been read so far.
    func take() -> [UInt8] {
        condition.lock()
        defer { condition.unlock() }
        defer { bytes = [] }
        return bytes
    }

    /// Everything still to come, once the child has closed its end.
    func waitForEnd() -> [UInt8] {
        condition.lock()
        while !ended { condition.wait() }
        defer { condition.unlock() }
        defer { bytes = [] }
        return bytes
    }
}
