internal import CPocketSphinx
internal import Foundation

/// One PocketSphinx decoder: either the language-model search (what was said) or the keyphrase
/// search (which exclamations were said). Not thread-safe: one per worker thread.
///
/// Why PocketSphinx: it is the offline recogniser Debian ships with an English model
/// (pocketsphinx-en-us), links as a C library, and runs several times faster than real time on one
/// core; recordings must not leave the lab (thesis 2.5.4). Since issue 53 it is the fallback: Whisper
/// (`WhisperTranscriber`) transcribes where `make speech-model` or the mueval-speech package installed it. Why keyphrase spotting for exclamations: the
/// language model's hypothesis is often wrong on short phrases ("where is the publish button"
/// came out as "where is the probably"), while the keyphrase search is built to find a known
/// phrase in running speech with a tunable threshold (docs/SPEECH.md has the measurements).
final class PocketSphinxDecoder {
    struct Word {
        var text: String
        /// Seconds from the utterance's start.
        var start: Double
        var end: Double
        var probability: Double
    }

    private let decoder: OpaquePointer
    private let config: OpaquePointer

    /// PocketSphinx logs through one FILE for the whole process, which `-logfn` replaces, closing the old one, each
    /// time a decoder starts: a decoder starting on one thread closed the file another was writing its log to (a
    /// crash in the tests, where Swift Testing runs two transcriptions at once). Its log is switched off once instead.
    private static let logOff: Void = err_set_logfp(nil)

    /// `arguments`: PocketSphinx options as on its command line (`-hmm DIR`, `-lm FILE`…).
    init(arguments: [String]) throws(SpeechError) {
        _ = Self.logOff
        var argv: [UnsafeMutablePointer<CChar>?] = (["mueval"] + arguments).map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }
        guard let config = cmd_ln_parse_r(nil, ps_args(), Int32(argv.count), &argv, 1) else {
            throw SpeechError("PocketSphinx refused its options \(arguments.joined(separator: " "))")
        }
        guard let decoder = ps_init(config) else {
            cmd_ln_free_r(config)
            throw SpeechError("PocketSphinx cannot load its models (\(arguments.joined(separator: " "))): check that they exist and are readable")
        }
        self.config = config
        self.decoder = decoder
    }

    deinit {
        ps_free(decoder)
        cmd_ln_free_r(config)
    }

    /// Decodes one utterance; the words it found with their times (silences and fillers left out).
    func decode(_ samples: UnsafeBufferPointer<Int16>) throws(SpeechError) -> [Word] {
        guard ps_start_utt(decoder) >= 0 else { throw SpeechError("PocketSphinx cannot start an utterance") }
        let processed = ps_process_raw(decoder, samples.baseAddress, samples.count, 0, 1)
        guard ps_end_utt(decoder) >= 0, processed >= 0 else { throw SpeechError("PocketSphinx cannot decode the audio") }
        let logmath = ps_get_logmath(decoder)
        var words: [Word] = []
        var segment = ps_seg_iter(decoder)
        while let current = segment {
            if let raw = ps_seg_word(current) {
                let text = Self.word(String(cString: raw))
                if !text.isEmpty {
                    var first: Int32 = 0
                    var last: Int32 = 0
                    ps_seg_frames(current, &first, &last)
                    var acoustic: Int32 = 0, language: Int32 = 0, backoff: Int32 = 0
                    let probability = logmath_exp(logmath, ps_seg_prob(current, &acoustic, &language, &backoff))
                    words.append(Word(text: text, start: Double(first) / 100, end: Double(last + 1) / 100,
                                      probability: min(1, max(0, probability))))
                }
            }
            segment = ps_seg_next(current)
        }
        return words
    }

    /// Whether the dictionary has `word` (a phrase with a word it lacks could never be heard).
    func knows(_ word: String) -> Bool {
        guard let pronunciation = ps_lookup_word(decoder, word) else { return false }
        free(pronunciation)  // allocated by the library for the caller
        return true
    }

    /// A word as the dictionary writes it, without its pronunciation variant (`what(2)`); empty for
    /// silence, sentence marks and noise fillers.
    static func word(_ raw: String) -> String {
        // Keyphrases come back as their list line's phrase, with trailing blanks.
        let raw = raw.trimmingCharacters(in: .whitespaces)
        if raw.hasPrefix("<") || raw.hasPrefix("[") || raw.hasPrefix("+") { return "" }
        if let open = raw.firstIndex(of: "("), raw.hasSuffix(")") { return String(raw[..<open]) }
        return raw
    }
}
