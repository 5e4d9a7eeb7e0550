internal import DequeModule
internal import Dispatch
internal import Foundation
internal import JournalStorage
public import Logging
internal import NIOConcurrencyHelpers
public import SessionModel
public import SpeechRecognition

/// What the daemon's transcription does, from `[transcription]` in muevald.toml.
public struct TranscriptionConfiguration: Sendable, Equatable {
    /// Off: sessions keep their audio, and nothing is recognised.
    public var enabled: Bool
    /// Whisper by default, PocketSphinx where Whisper is not installed or when chosen (`transcription.engine`).
    public var engine: SpeechEngine
    /// PocketSphinx's models and options, and what both engines share: the exclamations, the workers, the app's words.
    public var speech: SpeechConfiguration
    /// Whisper's installation, language, model and limits.
    public var whisper: WhisperConfiguration
    /// Streams that may wait for transcription at once; `transcribe` beyond it is refused.
    public var maxQueued: Int

    public init(enabled: Bool = true, engine: SpeechEngine = .whisper, speech: SpeechConfiguration = SpeechConfiguration(),
                whisper: WhisperConfiguration = WhisperConfiguration(), maxQueued: Int = 10_000) {
        self.enabled = enabled
        self.engine = engine
        self.speech = speech
        self.whisper = whisper
        self.maxQueued = maxQueued
    }
}

public enum TranscriptionError: Error, CustomStringConvertible {
    case disabled
    case queueFull(Int)
    case noAudio(Int64)

    public var description: String {
        switch self {
        case .disabled: "transcription is off in muevald's configuration ([transcription] enabled = false)"
        case .queueFull(let limit): "\(limit) streams already wait for transcription ([transcription] max_queued); try again later"
        case .noAudio(let session): "session \(session) has no audio stream to transcribe"
        }
    }
}

/// Transcribes the think-aloud audio of stopped sessions on the lab machine, in the background, one
/// stream at a time (the recogniser uses `speech.workers` threads for it): the transcript and each
/// stream's progress go into the session file (`transcripts`, `transcription`), so that they travel
/// with it and a restart picks up what was not done (`resume`).
///
/// The recogniser is CPU-bound and blocking: it runs on a thread of its own, never on an event loop
/// or the cooperative pool. The queue is bounded (`maxQueued`).
public final class TranscriptionService: Sendable {
    private struct Job: Sendable {
        var session: Int64
        var path: String
        var stream: MediaStreamRecord
    }

    private struct State {
        var queue = Deque<Job>()
        var running: (job: Job, status: TranscriptionStatus)?
        var cancelled = false
        /// Whether a drain of the queue is scheduled or running on `worker`.
        var draining = false
        /// Created on first use: loading the models takes a second and memory a daemon without audio never needs.
        var transcriber: Result<any SpeechTranscriber, SpeechError>?
    }

    private let configuration: TranscriptionConfiguration
    private let logger: Logger
    private let temporaryDirectory: String
    private let state = NIOLockedValueBox(State())
    /// The recogniser's thread: one serial queue, so one stream at a time.
    private let worker = DispatchQueue(label: "mueval.transcription", qos: .utility)
    /// Called with a stream's transcript once it is stored (the live tail shows it).
    private let onTranscript: @Sendable (Int64, [TranscriptSegment]) -> Void

    public init(configuration: TranscriptionConfiguration, temporaryDirectory: String, logger: Logger,
                onTranscript: @escaping @Sendable (Int64, [TranscriptSegment]) -> Void = { _, _ in }) {
        self.configuration = configuration
        self.temporaryDirectory = temporaryDirectory
        self.logger = logger
        self.onTranscript = onTranscript
    }

    public var isEnabled: Bool { configuration.enabled }

    /// Queues every audio stream of a stopped session (again, when it was transcribed before).
    @discardableResult
    public func enqueue(_ session: SessionRecord, now: Double) throws -> [SessionTranscription] {
        guard configuration.enabled else { throw TranscriptionError.disabled }
        let streams = try SessionReader(path: session.path).mediaStreams().filter { $0.kind == "audio" }
        guard !streams.isEmpty else { throw TranscriptionError.noAudio(session.id) }
        let jobs = streams.map { Job(session: session.id, path: session.path, stream: $0) }
        try state.withLockedValue { state in
            guard state.queue.count + jobs.count <= configuration.maxQueued else {
                throw TranscriptionError.queueFull(configuration.maxQueued)
            }
            state.queue.append(contentsOf: jobs)
        }
        let queued = jobs.map { job in
            SessionTranscription(session: job.session, status: TranscriptionStatus(
                device: job.stream.device, stream: job.stream.stream, state: .queued, progress: 0, updated: now))
        }
        for item in queued { write(item.status, to: session.path) }
        startWorker()
        return queued
    }

    /// A session just stopped: its audio, if any, is queued. Never throws: a session without audio is the common case.
    public func sessionStopped(_ session: SessionRecord, now: Double) {
        guard configuration.enabled else { return }
        do {
            try enqueue(session, now: now)
        } catch TranscriptionError.noAudio {
        } catch {
            logger.error("session \(session.id): its audio cannot be queued for transcription: \(error)")
        }
    }

    /// After a restart: queues the streams of stopped sessions whose transcription did not finish
    /// (queued or running when muevald stopped), reading each file off the caller's thread.
    public func resume(_ sessions: [SessionRecord], now: Double) {
        guard configuration.enabled else { return }
        for session in sessions where session.state == .stopped {
            do {
                let reader = try SessionReader(path: session.path)
                let unfinished = try reader.transcriptionStatus().filter { $0.state == .queued || $0.state == .running }
                guard !unfinished.isEmpty else { continue }
                let streams = try reader.mediaStreams().filter { stream in
                    unfinished.contains { $0.device == stream.device && $0.stream == stream.stream }
                }
                state.withLockedValue { state in
                    state.queue.append(contentsOf: streams.map { Job(session: session.id, path: session.path, stream: $0) })
                }
                logger.info("session \(session.id): transcription of \(streams.count) stream(s) resumes")
            } catch {
                logger.error("session \(session.id): cannot read its transcription state: \(error)")
            }
        }
        startWorker()
    }

    /// A follower of the sessions' stops fell behind: queues the audio of every stopped session in
    /// `sessions` that was never queued (no transcription status in its file), as its stop would have.
    public func catchUp(_ sessions: [SessionRecord], now: Double) {
        guard configuration.enabled else { return }
        for session in sessions where session.state == .stopped {
            guard let reader = try? SessionReader(path: session.path), (try? reader.transcriptionStatus().isEmpty) == true,
                  (try? reader.mediaStreams().contains { $0.kind == "audio" }) == true else { continue }
            logger.info("session \(session.id): its stop was among the lifecycle events dropped for transcription; its audio is queued now")
            sessionStopped(session, now: now)
        }
    }

    /// What waits and what runs, for `status` and the console.
    public func progress(now: Double) -> [SessionTranscription] {
        state.withLockedValue { state in
            var result: [SessionTranscription] = []
            if let running = state.running { result.append(SessionTranscription(session: running.job.session, status: running.status)) }
            for job in state.queue {
                result.append(SessionTranscription(session: job.session, status: TranscriptionStatus(
                    device: job.stream.device, stream: job.stream.stream, state: .queued, progress: 0, updated: now)))
            }
            return result
        }
    }

    /// Stops the worker: the running stream is abandoned (it stays `running` in its file, and `resume`
    /// picks it up after the restart), the queue is dropped likewise.
    public func shutdown() {
        state.withLockedValue { state in
            state.cancelled = true
            state.queue.removeAll()
        }
    }

    // MARK: Worker

    private func startWorker() {
        let start = state.withLockedValue { state -> Bool in
            guard !state.draining, !state.cancelled, !state.queue.isEmpty else { return false }
            state.draining = true
            return true
        }
        guard start else { return }
        worker.async { [self] in
            while let job = next() { transcribe(job) }
        }
    }

    private func next() -> Job? {
        state.withLockedValue { state in
            guard !state.cancelled, let job = state.queue.popFirst() else {
                state.running = nil
                state.draining = false
                return nil
            }
            state.running = (job, TranscriptionStatus(device: job.stream.device, stream: job.stream.stream, state: .running,
                                                      progress: 0, updated: Date().timeIntervalSince1970))
            return job
        }
    }

    /// Whisper where it is chosen and installed; else PocketSphinx, and the log says once why (the choice is kept
    /// until muevald restarts: installing `make speech-model` or `mueval-speech` takes effect then).
    private func transcriber() -> Result<any SpeechTranscriber, SpeechError> {
        state.withLockedValue { state in
            if let transcriber = state.transcriber { return transcriber }
            var result: Result<any SpeechTranscriber, SpeechError>?
            if configuration.engine == .whisper {
                do {
                    result = .success(try WhisperTranscriber(configuration: configuration.whisper, speech: configuration.speech))
                } catch {
                    let language = configuration.whisper.language == "en" ? "" : " (it knows US English only, not \(configuration.whisper.language))"
                    logger.warning("transcription: Whisper cannot run: \(error); transcribing with PocketSphinx\(language) instead")
                }
            }
            let chosen = result ?? Result { () throws(SpeechError) -> any SpeechTranscriber in try Transcriber(configuration: configuration.speech) }
            state.transcriber = chosen
            return chosen
        }
    }

    private func transcribe(_ job: Job) {
        let label = "session \(job.session), stream \(job.stream.stream)"
        var status = TranscriptionStatus(device: job.stream.device, stream: job.stream.stream, state: .running, progress: 0,
                                         updated: Date().timeIntervalSince1970)
        let audio = temporaryDirectory + "/transcribe-\(job.session)-\(UUID().uuidString).\(job.stream.contentType == "audio/wav" ? "wav" : "m4a")"
        defer { try? FileManager.default.removeItem(atPath: audio) }
        do {
            let transcriber = try transcriber().get()
            status.engine = transcriber.engine
            write(status, to: job.path)
            guard let container = AudioContainer(contentType: job.stream.contentType) else {
                throw SpeechError("audio of content type \(job.stream.contentType) is not transcribed (only audio/wav and audio/mp4)")
            }
            try writeStream(job, to: audio)
            let started = Date()
            var lastWritten = 0.0
            let transcription = try transcriber.transcription(path: audio, container: container, progress: { fraction in
                status.progress = fraction
                status.updated = Date().timeIntervalSince1970
                state.withLockedValue { $0.running?.status = status }
                // Into the file every 5 %, for the console of another process and for `resume`.
                if fraction - lastWritten >= 0.05 {
                    lastWritten = fraction
                    write(status, to: job.path)
                }
            }, isCancelled: { state.withLockedValue { $0.cancelled } })
            if state.withLockedValue({ $0.cancelled }) { return }
            let transcript = transcription.segments.map { segment in
                TranscriptSegment(device: job.stream.device, stream: job.stream.stream, start: job.stream.start + segment.start,
                                  end: job.stream.start + segment.end, text: segment.text, confidence: segment.confidence,
                                  exclamation: segment.exclamation)
            }
            let file = try SessionFile(path: job.path, synchronous: .full, indexed: true)
            let words = transcription.words.map { word in
                TranscriptWord(device: job.stream.device, stream: job.stream.stream, start: job.stream.start + word.start,
                               end: job.stream.start + word.end, text: word.text, probability: word.probability)
            }
            try file.writeTranscript(device: job.stream.device, stream: job.stream.stream, segments: transcript, words: words)
            status.engine = transcription.engine
            status.state = .done
            status.progress = 1
            status.updated = Date().timeIntervalSince1970
            try file.writeTranscriptionStatus(status)
            try file.finish(buildingIndexes: false)
            let seconds = Date().timeIntervalSince(started)
            let exclamations = transcript.filter { $0.exclamation != nil }.count
            logger.info("\(label): transcribed in \(String(format: "%.0f", seconds)) s: \(transcript.count) segments, \(exclamations) exclamations")
            onTranscript(job.session, transcript)
        } catch {
            status.state = .failed
            status.error = "\(error)"
            status.updated = Date().timeIntervalSince1970
            write(status, to: job.path)
            logger.error("\(label): cannot be transcribed: \(error)")
        }
    }

    /// The stream as one file for the decoder: the recogniser reads a path.
    private func writeStream(_ job: Job, to path: String) throws {
        let reader = try SessionReader(path: job.path)
        guard let layout = try reader.mediaLayout(device: job.stream.device, stream: job.stream.stream) else {
            throw TranscriptionError.noAudio(job.session)
        }
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
              let handle = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        defer { try? handle.close() }
        try reader.writeMedia(layout) { try handle.write(contentsOf: $0) }
    }

    private func write(_ status: TranscriptionStatus, to path: String) {
        do {
            let file = try SessionFile(path: path, synchronous: .full, indexed: true)
            try file.writeTranscriptionStatus(status)
            try file.finish(buildingIndexes: false)
        } catch {
            logger.error("\(path): cannot record the transcription's progress: \(error)")
        }
    }
}
