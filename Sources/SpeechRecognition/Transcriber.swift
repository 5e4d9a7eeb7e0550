internal import CAudioDecode
internal import Foundation
internal import Synchronization

/// Transcribes think-aloud audio on the lab machine: ordinary speech into timed segments, and the
/// configured exclamations spotted as such (docs/SPEECH.md).
///
/// The file is decoded as it is read and cut at quiet moments into pieces of about half a minute, which
/// `workers` threads recognise at once, each with decoders of its own (PocketSphinx decoders are
/// not thread-safe). The queue between them holds a few pieces, so memory stays bounded whatever
/// the recording's length.
public final class Transcriber: Sendable {
    public let configuration: SpeechConfiguration
    public let engine: String
    /// The recogniser loaded to check the configuration, kept for the first transcription's first
    /// worker: loading one takes 0.4 s of CPU and ~55 MB (~90 with every word), so it is not thrown
    /// away, nor kept longer.
    private let spare: Mutex<Recogniser?>
    /// The vocabulary's dictionary, open while the transcriber lives; nil: the configured dictionary.
    private let vocabulary: DictionaryFile?
    /// What the decoders open: the vocabulary's file, or the configured dictionary.
    private var dictionary: String { vocabulary?.path ?? configuration.dictionary }

    /// Samples per piece handed to a worker (30 s), and how far back from its end a cut is sought.
    /// Pieces go to the workers in turn, so at the end one worker may still have a piece while the
    /// others have none: halving the pieces from 60 s took the hour's wall time from 62.3 to 60.5 s.
    static let pieceSamples = 30 * 16_000
    static let cutWindow = 5 * 16_000

    public init(configuration: SpeechConfiguration) throws(SpeechError) {
        for (path, what, package) in [(configuration.acousticModel, "acoustic model", "pocketsphinx-en-us"),
                                      (configuration.languageModel, "language model", "pocketsphinx-en-us"),
                                      (configuration.dictionary, "pronunciation dictionary", "pocketsphinx-en-us")] {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw SpeechError("the \(what) \(path) is missing: install \(package) or set [transcription] in muevald's configuration")
            }
        }
        guard !configuration.exclamations.isEmpty else { throw SpeechError("no exclamations to spot: [transcription] exclamations is empty") }
        self.configuration = configuration
        vocabulary = try Self.vocabulary(configuration)
        // The words listened for only when the vocabulary cut the dictionary (a larger one than it has is every word).
        let model = (configuration.acousticModel as NSString).lastPathComponent
        engine = "pocketsphinx 5prealpha (\(model)\(vocabulary == nil ? "" : ", \(configuration.vocabulary) words"))"
        // Loads both searches once, so that a bad model or phrase fails here, with its reason.
        spare = Mutex(try Recogniser(configuration, dictionary: vocabulary?.path ?? configuration.dictionary))
    }

    /// The dictionary cut to `configuration.vocabulary` words; nil when that is every word anyway.
    /// The lab's `words` are checked against the dictionary either way.
    private static func vocabulary(_ configuration: SpeechConfiguration) throws(SpeechError) -> DictionaryFile? {
        guard configuration.vocabulary > 0 || !configuration.words.isEmpty else { return nil }
        let dictionary: [UInt8]
        do {
            dictionary = try [UInt8](Data(contentsOf: URL(fileURLWithPath: configuration.dictionary)))
        } catch {
            throw SpeechError("cannot read the pronunciation dictionary \(configuration.dictionary): \(error.localizedDescription)")
        }
        let vocabulary = try Vocabulary(configuration: configuration, dictionary: dictionary)
        return configuration.vocabulary > 0 && vocabulary.known > configuration.vocabulary ? try vocabulary.file() : nil
    }

    /// `container`: what the file is said to be (its stream's content type); it is read as that and nothing else.
    public func transcribe(path: String, container: AudioContainer, progress: (Double) -> Void, isCancelled: () -> Bool) throws(SpeechError)
        -> [RecognisedSegment]
    {
        let pool = WorkerPool(configuration: configuration, dictionary: dictionary, spare: spare.withLock { $0.take() })
        defer { pool.finish() }
        var pending: [Int16] = []
        var consumed = 0  // samples before `pending`
        var duration = 0.0
        var reported = -1.0
        var decodeFailure: SpeechError?
        func report() {
            let total = max(duration, Double(consumed + pending.count) / 16_000)
            let fraction = total > 0 ? min(1, pool.secondsDone / total) : 0
            if fraction - reported >= 0.01 {
                reported = fraction
                progress(fraction)
            }
        }
        let status = withoutActuallyEscaping({ (samples: UnsafeBufferPointer<Int16>, total: Double) -> Bool in
            if isCancelled() { return false }
            duration = total
            pending.append(contentsOf: samples)
            while pending.count >= Self.pieceSamples + Self.cutWindow {
                let cut = SpeechRegions.quietestCut(in: pending[..<(Self.pieceSamples + Self.cutWindow)], window: 2 * Self.cutWindow)
                pool.submit(Piece(offset: consumed, samples: Array(pending[..<cut])))
                pending.removeFirst(cut)
                consumed += cut
                report()
            }
            if let failure = pool.failure { decodeFailure = failure; return false }
            return true
        }) { block in
            AudioFile.decode(path: path, container: container, block: block)
        }
        switch status {
        case .failure(let error): throw error
        case .stopped where decodeFailure != nil: throw decodeFailure!
        case .stopped: return []
        case .done: break
        }
        if !pending.isEmpty { pool.submit(Piece(offset: consumed, samples: pending)) }
        consumed += pending.count
        pending = []
        duration = Double(consumed) / 16_000
        let segments = try pool.wait { report() }
        progress(1)
        return segments.sorted { ($0.start, $0.end) < ($1.start, $1.end) }
    }
}

/// A stretch of the recording for one worker, with where it starts (in samples).
struct Piece: Sendable {
    var offset: Int
    var samples: [Int16]
}

/// The containers audio is accepted in (docs/PROTOCOL.md, Media): each is read by its own demuxer
/// only, never by one FFmpeg guesses from the content (docs/SPEECH.md).
public enum AudioContainer: Sendable, CaseIterable {
    /// PCM in RIFF/WAVE.
    case wav
    /// AAC in MP4 or M4A.
    case mp4

    /// The container of a stream's content type (`audio/wav`, `audio/mp4`); nil for any other.
    public init?(contentType: String) {
        switch contentType {
        case "audio/wav": self = .wav
        case "audio/mp4": self = .mp4
        default: return nil
        }
    }

    var decoder: mueval_audio_container {
        switch self {
        case .wav: MUEVAL_AUDIO_WAV
        case .mp4: MUEVAL_AUDIO_MP4
        }
    }
}

/// The decoding of an audio file through CAudioDecode.
enum AudioFile {
    enum Status {
        case done
        case stopped
        case failure(SpeechError)
    }

    private final class Context {
        let block: (UnsafeBufferPointer<Int16>, Double) -> Bool
        /// Written by the C decoder before the first block, read by each block: memory of its own,
        /// not a Swift property (which the decoder's inout access would hold for the whole call).
        let duration = UnsafeMutablePointer<Double>.allocate(capacity: 1)
        init(_ block: @escaping (UnsafeBufferPointer<Int16>, Double) -> Bool) {
            self.block = block
            duration.initialize(to: 0)
        }
        deinit { duration.deallocate() }
    }

    /// Hands the file's audio, 16 kHz mono, to `block` in pieces with the file's duration in seconds
    /// (0 when the container does not say); `block` returns false to stop.
    static func decode(path: String, container: AudioContainer, block: @escaping (UnsafeBufferPointer<Int16>, Double) -> Bool) -> Status {
        let context = Context(block)
        var error = [CChar](repeating: 0, count: 256)
        let result = withExtendedLifetime(context) {
            mueval_decode_audio(path, container.decoder, { opaque, samples, count in
                guard let opaque, let samples else { return 0 }
                let context = Unmanaged<Context>.fromOpaque(opaque).takeUnretainedValue()
                return context.block(UnsafeBufferPointer(start: samples, count: count), context.duration.pointee) ? 0 : 1
            }, Unmanaged.passUnretained(context).toOpaque(), context.duration, &error, error.count)
        }
        switch result {
        case 0: return .done
        case 1: return .stopped
        default: return .failure(SpeechError("\(path): \(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))"))
        }
    }
}
