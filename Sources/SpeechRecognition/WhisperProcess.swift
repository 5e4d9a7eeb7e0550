internal import ChildScripts
internal import DescriptorIO
internal import Foundation

/// One run of the Whisper child (`ChildScript.whisperRecogniser`): `python3 -I -B` (no byte code written into the
/// installation, which a package owns) in `/`, with PATH, LANG, MALLOC_ARENA_MAX and
/// HF_HUB_OFFLINE alone in its environment, under `memoryMiB` of address space and `cpuSeconds` of CPU, its own
/// process group (killed whole). Audio goes to it over a socket (sends never raise SIGPIPE); what it answers is read
/// by a thread of its own, so that neither side waits on the other's full buffer.
final class WhisperProcess: @unchecked Sendable {
    /// One line of the child's output (`ChildScript.whisperRecogniser`).
    struct Line: Decodable, Sendable {
        struct Ready: Decodable, Sendable {
            var faster_whisper: String
            var ctranslate2: String
            var sha256: String
            var multilingual: Bool
        }
        struct Word: Decodable, Sendable {
            var start: Double
            var end: Double
            var text: String
            var p: Double
        }
        struct Stretch: Decodable, Sendable {
            var start: Double
            var end: Double
            var logprob: Double
            var no_speech: Double
        }
        var ready: Ready?
        var unavailable: String?
        var error: String?
        var piece: Int?
        var seconds: Double?
        var language: String?
        var segments: [Stretch]?
        var words: [Word]?
        var end: Int?
        var vm_peak_kib: Int?
        var rss_peak_kib: Int?
    }

    /// Everything the child gets of an environment: no variable of muevald's. HF_HUB_OFFLINE: were anything of
    /// Hugging Face's ever reached, it would not go to the network. Two malloc arenas at most; buffers up to 32 MiB (a
    /// batch's features and encoder output) reused rather than mapped and unmapped each time, and freed memory kept for
    /// the next piece: a fifth of the page faults and a quarter of the system time gone on ten minutes of the benchmark
    /// hour (4.9 against 6.7 CPU s), for about 170 MB more resident memory.
    static let environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MALLOC_ARENA_MAX": "2", "HF_HUB_OFFLINE": "1",
                              "MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "4294967296", "MALLOC_TOP_PAD_": "268435456"]
    /// The longest line read from the child (a piece's words: 8 minutes of speech is ~100 KiB).
    static let maxLineBytes = 16 << 20

    private let process = Process()
    private let socket: Int32
    private let reader: Thread
    private let state = ReaderState()

    /// What the reading thread found, and whether the child is gone (then no signal reaches its group: the number
    /// may be another's by then).
    private final class ReaderState: @unchecked Sendable {
        let condition = NSCondition()
        var failure: SpeechError?
        var done = false
        var exited = false

        func update(_ change: (ReaderState) -> Void) {
            condition.lock()
            change(self)
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Starts the child; `onLine` is called on the reading thread for each line it writes.
    init(configuration: WhisperConfiguration, workers: Int, hotwords: String, onLine: @escaping @Sendable (Line) -> Void) throws(SpeechError) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw SpeechError("the Whisper recogniser cannot start: no socket pair (\(String(cString: strerror(errno))))")
        }
        socket = pair[0]
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ChildScript.whisperRecogniser.limitedCommand(
            name: "mueval-whisper", python: configuration.python, options: ["-I", "-B"], memoryMiB: configuration.memoryMiB,
            cpuSeconds: configuration.cpuSeconds,
            arguments: [configuration.installation + "/site", configuration.modelDirectory, configuration.language, String(workers),
                        String(configuration.batchSize), hotwords])
        process.environment = Self.environment
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle(fileDescriptor: pair[1], closeOnDealloc: false)
        let state = self.state
        process.terminationHandler = { _ in state.update { $0.exited = true } }
        reader = Thread {
            var buffer = Data()
            let handle = output.fileHandleForReading
            func deliver(_ line: Data) {
                guard !line.isEmpty else { return }
                guard let decoded = try? JSONDecoder().decode(Line.self, from: line) else {
                    state.update { if $0.failure == nil { $0.failure = SpeechError("the Whisper recogniser wrote what is not a line of its output") } }
                    return
                }
                onLine(decoded)
            }
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    deliver(buffer[buffer.startIndex..<newline])
                    buffer = Data(buffer[(newline + 1)...])
                }
                if buffer.count > Self.maxLineBytes {
                    state.update { $0.failure = SpeechError("the Whisper recogniser wrote a line over \(Self.maxLineBytes >> 20) MiB") }
                    break
                }
            }
            state.update { $0.done = true }
        }
        reader.name = "mueval-whisper-output"
        do {
            try process.run()
        } catch {
            close(pair[0])
            close(pair[1])
            throw SpeechError("the Whisper recogniser cannot start \(configuration.python): \(error)")
        }
        close(pair[1])
        reader.start()
    }

    deinit {
        close(socket)
    }

    /// Why reading failed, if it did.
    var failure: SpeechError? {
        state.condition.lock()
        defer { state.condition.unlock() }
        return state.failure
    }

    /// Sends one piece: false when the child no longer reads (it ended, or was killed).
    func send(samples: ArraySlice<Int16>, start: Double) -> Bool {
        // A piece is seconds of audio, far below 2^32 samples; one that is not is no piece to send.
        guard let count = UInt32(exactly: samples.count) else { return false }
        var header = [UInt8]()
        header.reserveCapacity(12)
        withUnsafeBytes(of: count.littleEndian) { header.append(contentsOf: $0) }
        withUnsafeBytes(of: start.bitPattern.littleEndian) { header.append(contentsOf: $0) }
        do throws(DescriptorIOError) {
            try Descriptor(socket).sendAll(header)
            try Descriptor(socket).sendAll(samples.map(\.littleEndian))
            return true
        } catch {
            return false
        }
    }

    /// No more pieces: the child finishes the ones it has, then writes `end`.
    func finishInput() {
        // The end is a piece of no samples; a child that no longer reads needs none.
        try? Descriptor(socket).sendAll([UInt8](repeating: 0, count: 12))
        shutdown(socket, Int32(SHUT_WR))
    }

    /// Ends the child and everything it started at once (cancellation, or a failure seen on our side).
    func kill() {
        let group = -process.processIdentifier
        state.condition.lock()
        if !state.exited { Glibc.kill(group, SIGKILL) }
        state.condition.unlock()
    }

    /// Waits for the child to exit and its output to be read, calling `tick` about once a second: how it ended.
    func wait(tick: () -> Void) -> Process.TerminationReason {
        state.condition.lock()
        while !state.done {
            state.condition.unlock()
            tick()
            state.condition.lock()
            if !state.done { _ = state.condition.wait(until: Date().addingTimeInterval(1)) }
        }
        state.condition.unlock()
        process.waitUntilExit()
        return process.terminationReason
    }

    var terminationStatus: Int32 { process.terminationStatus }
}
