internal import Foundation
internal import Synchronization

/// Transcribes think-aloud audio with Whisper (docs/SPEECH.md): CTranslate2's int8 Whisper through faster-whisper,
/// in a `python3 -I` child bounded in memory and CPU (`WhisperProcess`), nothing downloaded. muEval decodes the
/// audio itself (CAudioDecode's gate: one demuxer, no protocol), cuts it at quiet moments into pieces of about eight
/// minutes and hands them over as samples; the child finds the speech in each (Silero's voice-activity detection), so
/// silence and noise give no words, and recognises it on `workers` threads. The exclamations are spotted in its words.
public final class WhisperTranscriber: SpeechTranscriber {
    public let configuration: WhisperConfiguration
    public let exclamations: [ExclamationPhrase]
    public let workers: Int
    /// The app's own terms (`[transcription] words`), given to Whisper as hot words.
    public let words: [String]

    /// Samples per piece (8 min): each piece's speech is recognised in batches of up to `batchSize` stretches of 30 s,
    /// so a piece holds about that much speech at half the time spoken; an hour is 8 pieces for the workers.
    static let pieceSamples = 480 * 16_000
    static let cutWindow = 5 * 16_000

    public init(configuration: WhisperConfiguration, speech: SpeechConfiguration) throws(SpeechError) {
        if let missing = configuration.missing { throw SpeechError(missing) }
        guard WhisperConfiguration.isLanguage(configuration.language) else {
            throw SpeechError("[transcription] language \"\(configuration.language)\" is neither auto nor a two-letter code such as en or de")
        }
        if configuration.model == nil, configuration.language != "en", configuration.modelName == "tiny.en" {
            throw SpeechError("the English-only model cannot transcribe \(configuration.language)")
        }
        guard !speech.exclamations.isEmpty else { throw SpeechError("no exclamations to spot: [transcription] exclamations is empty") }
        self.configuration = configuration
        exclamations = speech.exclamations
        // Each worker's batches take about 1.1 GiB of address space at their peak (two took 2.2 GiB on the benchmark hour):
        // as many as `memoryMiB` holds, so that a machine with many cores does not fail every transcription at its limit.
        workers = min(speech.workers, max(1, configuration.memoryMiB / WhisperConfiguration.workerMiB))
        words = speech.words
    }

    public var engine: String { "faster-whisper (CTranslate2, int8), Whisper \(configuration.modelName), language \(configuration.language)" }

    /// What the child said, gathered by its reading thread.
    private struct Heard: Sendable {
        var ready: WhisperProcess.Line.Ready?
        var problem: String?
        var unavailable: String?
        var pieces = 0
        var seconds = 0.0
        var words: [RecognisedWord] = []
        var languages: [String: Int] = [:]
        var end: WhisperProcess.Line?
    }

    private final class Box: Sendable {
        let value: Mutex<Heard>
        init(_ heard: Heard) { value = Mutex(heard) }
    }

    public func transcription(path: String, container: AudioContainer, progress: (Double) -> Void, isCancelled: () -> Bool) throws(SpeechError)
        -> Transcription
    {
        let heard = Box(Heard())
        let child = try WhisperProcess(configuration: configuration, workers: workers, hotwords: words.joined(separator: " ")) { line in
            heard.value.withLock { heard in
                if let ready = line.ready { heard.ready = ready }
                if let error = line.error, heard.problem == nil { heard.problem = error }
                if let unavailable = line.unavailable { heard.unavailable = unavailable }
                if line.piece != nil {
                    heard.pieces += 1
                    heard.seconds += line.seconds ?? 0
                    heard.words += (line.words ?? []).map { RecognisedWord(text: $0.text, start: $0.start, end: $0.end, probability: $0.p) }
                    if let language = line.language { heard.languages[language, default: 0] += 1 }
                }
                if line.end != nil { heard.end = line }
            }
        }
        var pending: [Int16] = []
        var sent = 0  // samples handed over
        var pieces = 0
        var duration = 0.0
        var reported = -1.0
        var stopped = false
        func report() {
            let total = max(duration, Double(sent + pending.count) / 16_000)
            let fraction = total > 0 ? min(1, heard.value.withLock { $0.seconds } / total) : 0
            if fraction - reported >= 0.01 {
                reported = fraction
                progress(fraction)
            }
        }
        func send(_ samples: ArraySlice<Int16>) -> Bool {
            guard child.send(samples: samples, start: Double(sent) / 16_000) else { return false }
            sent += samples.count
            pieces += 1
            return true
        }
        let status = withoutActuallyEscaping({ (samples: UnsafeBufferPointer<Int16>, total: Double) -> Bool in
            if isCancelled() { stopped = true; return false }
            duration = total
            pending.append(contentsOf: samples)
            while pending.count >= Self.pieceSamples + Self.cutWindow {
                let cut = SpeechRegions.quietestCut(in: pending[..<(Self.pieceSamples + Self.cutWindow)], window: 2 * Self.cutWindow)
                guard send(pending[..<cut]) else { return false }
                pending.removeFirst(cut)
                report()
            }
            return true
        }) { block in
            AudioFile.decode(path: path, container: container, block: block)
        }
        if case .failure = status { child.kill() }
        if stopped || isCancelled() {
            child.kill()
            _ = child.wait {}
            return Transcription(segments: [], engine: engine)
        }
        if case .done = status, !pending.isEmpty { _ = send(pending[...]) }
        duration = Double(sent) / 16_000
        child.finishInput()
        let reason = child.wait { report() }
        if case .failure(let error) = status { throw error }
        let result = heard.value.withLock { $0 }
        if let unavailable = result.unavailable {
            throw SpeechError("Whisper cannot run: \(unavailable) in \(configuration.installation)/site (make speech-model, or apt install mueval-speech)")
        }
        if let problem = result.problem { throw SpeechError("Whisper: \(problem)") }
        if let failure = child.failure { throw failure }
        guard reason == .exit, let end = result.end, result.pieces == pieces, let ready = result.ready else {
            throw SpeechError(reason == .uncaughtSignal
                ? "the Whisper recogniser was stopped: it reached its \(configuration.cpuSeconds) CPU seconds ([transcription] cpu_seconds)"
                    + " or was cancelled"
                : "the Whisper recogniser ended early (status \(child.terminationStatus), \(result.pieces) of \(pieces) pieces done;"
                    + " allowed \(configuration.memoryMiB) MiB, [transcription] memory_mib)")
        }
        progress(1)
        let heardWords = result.words.sorted { ($0.start, $0.end) < ($1.start, $1.end) }
        let languages = result.languages.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map(\.key)
        let language = configuration.language == "auto" ? "auto (heard: \(languages.isEmpty ? "none" : languages.joined(separator: ", ")))"
            : configuration.language
        return Transcription(
            segments: WhisperSegments.build(heardWords, exclamations: exclamations),
            engine: "faster-whisper \(ready.faster_whisper) (CTranslate2 \(ready.ctranslate2), int8), Whisper \(configuration.modelName)"
                + " sha256 \(ready.sha256), language \(language)",
            words: heardWords,
            peakMemoryKiB: end.vm_peak_kib.map { ($0, end.rss_peak_kib ?? 0) })
    }
}
