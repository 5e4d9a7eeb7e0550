internal import Foundation

/// Which recogniser transcribes (`[transcription] engine`).
public enum SpeechEngine: String, Sendable, CaseIterable {
    /// Whisper (CTranslate2 through faster-whisper, in a sandboxed python3 child), falling back to PocketSphinx
    /// when it is not installed (docs/SPEECH.md).
    case whisper
    /// PocketSphinx only: US English, linked in.
    case pocketsphinx
}

/// What the Whisper recogniser uses: the directory `make speech-model` (or the `mueval-speech` package) installs,
/// the language, and the child process's limits (`[transcription]` in muevald.toml).
public struct WhisperConfiguration: Sendable, Equatable {
    /// Where faster-whisper, CTranslate2, onnxruntime and tokenizers are (`site/`) and the models (`models/NAME/`);
    /// nil: the first of `directories` that holds models (`installation`).
    public var directory: String?
    /// A model directory (CTranslate2's `model.bin`, `config.json`, the tokenizer) instead of the one chosen by the language.
    public var model: String?
    /// `en`, `de` (any language Whisper knows, by its two-letter code) or `auto`: detected per piece.
    public var language: String
    /// Debian's interpreter, whose numpy (python3-numpy) the packages are installed against.
    public var python: String
    /// The child's address space in MiB (RLIMIT_AS; `transcription.memory_mib`).
    public var memoryMiB: Int
    /// The child's CPU seconds, all its threads together (RLIMIT_CPU; `transcription.cpu_seconds`): one transcription's.
    public var cpuSeconds: Int
    /// Stretches of speech recognised together (`transcription.batch_size`): more is faster and takes more memory.
    public var batchSize: Int

    /// The lab's installation (`make speech-model`), else the Debian package's (`mueval-speech`).
    public static let directories = ["/usr/local/lib/mueval-speech", "/usr/lib/mueval-speech"]

    /// The installation used: `directory`, or the first of `directories` that holds models.
    public var installation: String {
        directory ?? Self.directories.first { FileManager.default.fileExists(atPath: $0 + "/models") } ?? Self.directories[0]
    }
    /// Two workers with 8 stretches each reserved up to 2.2 GiB of address space on the benchmark hour (docs/SPEECH.md).
    public static let defaultMemoryMiB = 4096
    /// The benchmark hour took about 160 CPU seconds: two hours' CPU is about forty hours of think-aloud.
    public static let defaultCPUSeconds = 7200
    public static let defaultBatchSize = 8
    /// The address space one worker with batches of 8 needs at its peak, for as many workers as `memoryMiB` holds.
    public static let workerMiB = 1100
    public static let batchSizeRange = 1...64

    public init(directory: String? = nil, model: String? = nil, language: String = "en",
                python: String = "/usr/bin/python3", memoryMiB: Int = WhisperConfiguration.defaultMemoryMiB,
                cpuSeconds: Int = WhisperConfiguration.defaultCPUSeconds, batchSize: Int = WhisperConfiguration.defaultBatchSize) {
        self.directory = directory
        self.model = model
        self.language = language
        self.python = python
        self.memoryMiB = memoryMiB
        self.cpuSeconds = cpuSeconds
        self.batchSize = min(max(batchSize, Self.batchSizeRange.lowerBound), Self.batchSizeRange.upperBound)
    }

    /// Whether `text` is a setting of `transcription.language`: `auto` or a two-letter code (the model says whether it knows it).
    public static func isLanguage(_ text: String) -> Bool {
        text == "auto" || (text.count == 2 && text.allSatisfy { $0.isASCII && $0.isLowercase })
    }

    /// The model for the language: Whisper tiny.en for English (faster, and better than the multilingual tiny on
    /// English), Whisper base for every other language and for `auto` (docs/SPEECH.md has the figures).
    public var modelDirectory: String {
        model ?? installation + "/models/" + (language == "en" ? "tiny.en" : "base")
    }

    /// The model's name as the transcript records it: its directory's name.
    public var modelName: String { (modelDirectory as NSString).lastPathComponent }

    /// Why Whisper cannot run here, in a sentence that says what to install; nil when its files are in place.
    public var missing: String? {
        guard FileManager.default.isExecutableFile(atPath: python) else { return "\(python) is missing (apt install python3 python3-numpy)" }
        // Debian's interpreter finds numpy in dist-packages only (`python3 -I`): the wheels are installed without it.
        guard python != "/usr/bin/python3" || FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/numpy") else {
            return "python3-numpy is missing (apt install python3-numpy)"
        }
        guard FileManager.default.fileExists(atPath: installation + "/site/faster_whisper") else {
            return "faster-whisper is not installed in \(installation) (make speech-model, or apt install mueval-speech)"
        }
        guard FileManager.default.isReadableFile(atPath: modelDirectory + "/model.bin") else {
            return "the Whisper model \(modelDirectory) is missing (make speech-model, or apt install mueval-speech)"
        }
        return nil
    }
}
