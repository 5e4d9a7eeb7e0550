internal import Foundation
internal import MuEvalWire
internal import SpeechRecognition
internal import WireProtocol

// Times the transcription of think-aloud audio (issue 53: an hour within 60 s on the project's 2-core machine,
// a word error rate of at most 12 % in each voice, 25 % in German, every exclamation found).
//   SpeechBenchmark hour [--minutes 60] [--workers 2]   one hour of espeak-ng speech with pauses: seconds, CPU seconds
//                                                        (the recogniser's child process's included), peak memory, word
//                                                        error rate against the script in all and per voice, the
//                                                        exclamations found within ±1 s and false ones
//   SpeechBenchmark exclamations [--voice en-us+f2] [--wpm 160]   the corpus of Corpus.swift: exclamations found
//                                                        within ±1 s, false ones per 10 minutes, word error rate
//   SpeechBenchmark german [--voice de]                  think-aloud lines in German: word error rate (language de)
//   SpeechBenchmark quiet [--minutes 10]                 silence, then noise: the words heard in each (none, we hope)
//   SpeechBenchmark transcribe FILE [--workers 2]        any audio file: its segments as JSON lines
// Each takes --engine whisper|pocketsphinx (whisper by default), --language en|de|auto (Whisper's, en by default;
// german's is de) and --speech-dir DIR (Whisper's installation); for PocketSphinx --decoder "-fwdflat no …": search
// options instead of the tuned ones, --dictionary FILE instead of Debian's, --vocabulary N words instead of 20,000.
// Release mode: `swift build -c release --product SpeechBenchmark` (make bench runs it).

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}
let workers = option("--workers").flatMap(Int.init) ?? 2
let decoderOptions = option("--decoder").map { $0.split(separator: " ").map(String.init) } ?? SpeechConfiguration.tunedDecoderOptions
/// `--dictionary FILE`: another pronunciation dictionary (for tuning the vocabulary).
let dictionary = option("--dictionary") ?? SpeechConfiguration().dictionary
/// `--vocabulary N`: the likeliest N words (0: every word), as muevald's [transcription] vocabulary.
let vocabulary = option("--vocabulary").flatMap(Int.init) ?? SpeechConfiguration.defaultVocabulary
/// `--exclamations "oh no /1e-20/,where is"`: as muevald's [transcription] exclamations (for tuning).
let exclamations = option("--exclamations").map { $0.split(separator: ",").compactMap { ExclamationPhrase(configText: String($0)) } }
    ?? SpeechConfiguration.defaultExclamations
let engine = option("--engine").flatMap(SpeechEngine.init(rawValue:)) ?? .whisper
let language = option("--language") ?? (arguments.dropFirst().first == "german" ? "de" : "en")
let whisper = WhisperConfiguration(directory: option("--speech-dir"), language: language)

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("SpeechBenchmark: \(message)\n".utf8))
    exit(1)
}

/// 16-bit mono PCM of one line, as espeak-ng speaks it (22,050 Hz).
func speak(_ text: String, voice: String, wordsPerMinute: Int = 155) -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/espeak-ng")
    process.arguments = ["--stdout", "-v", voice, "-s", String(wordsPerMinute), text]
    let pipe = Pipe()
    process.standardOutput = pipe
    do { try process.run() } catch { fail("espeak-ng is needed for the synthetic hour (apt install espeak-ng): \(error)") }
    let wav = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Array(wav.dropFirst(44))
}

/// Writes 16-bit mono PCM at 22,050 Hz as a temporary WAV file.
func writeWAV(_ pcm: [UInt8], name: String) -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(name).path
    guard FileManager.default.createFile(atPath: path, contents: Data(WAVFile.header(sampleRate: 22_050, dataBytes: pcm.count) + pcm)) else {
        fail("cannot write \(path)")
    }
    return path
}

/// CPU seconds so far (user and system, all threads) of this process (`RUSAGE_SELF`: PocketSphinx; espeak-ng's are
/// its own) or of its children waited for (`RUSAGE_CHILDREN`: Whisper's process, and espeak-ng's).
func cpuSeconds(_ who: Int32 = RUSAGE_SELF.rawValue) -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(who), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// The file's transcription, and the seconds it took: on the clock (the models' loading included) and of CPU (which
/// other work on the machine disturbs less), this process's and its children's.
func transcribe(_ path: String) -> (transcription: Transcription, wall: Double, cpu: Double) {
    let clock = ContinuousClock()
    let cpuBefore = cpuSeconds() + cpuSeconds(RUSAGE_CHILDREN.rawValue)
    var transcription = Transcription(segments: [], engine: "")
    let speech = SpeechConfiguration(dictionary: dictionary, exclamations: exclamations, workers: workers, vocabulary: vocabulary,
                                     decoderOptions: decoderOptions)
    let elapsed = clock.measure {
        do {
            let transcriber: any SpeechTranscriber = engine == .whisper
                ? try WhisperTranscriber(configuration: whisper, speech: speech) : try Transcriber(configuration: speech)
            transcription = try transcriber.transcription(path: path, container: .wav, progress: { _ in }, isCancelled: { false })
        } catch {
            fail("\(error)")
        }
    }
    return (transcription, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            cpuSeconds() + cpuSeconds(RUSAGE_CHILDREN.rawValue) - cpuBefore)
}

/// The peak memory of the recognition: Whisper's child's address space and resident set, or this process's resident set.
func peakMemory(_ transcription: Transcription) -> String {
    if let peak = transcription.peakMemoryKiB {
        return String(format: "peak %.0f MiB resident, %.0f MiB of address space (the recogniser's process)",
                      Double(peak.resident) / 1024, Double(peak.address) / 1024)
    }
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return String(format: "peak %.0f MiB resident (this process)", Double(usage.ru_maxrss) / 1024)
}

/// `said`: the script, for the word error rate.
func run(_ path: String, seconds: Double?, said: [String] = []) {
    let (transcription, wall, cpu) = transcribe(path)
    let segments = transcription.segments
    if let seconds {
        let exclamations = segments.filter { $0.exclamation != nil }.count
        print(String(format: "%.0f min of think-aloud audio transcribed in %.1f s with %d workers: %.3f × real time (%.1f min per hour), %.1f s of CPU; %d segments, %d exclamations; %@",
                     seconds / 60, wall, workers, wall / seconds, wall / seconds * 60, cpu, segments.count, exclamations,
                     WordErrorRate(said: said, heard: segments.map(\.text)).description))
    } else {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for segment in segments {
            let line: [String: String] = ["start": String(segment.start), "end": String(segment.end), "text": segment.text,
                                          "exclamation": segment.exclamation ?? ""]
            print(String(decoding: (try? encoder.encode(line)) ?? Data(), as: UTF8.self))
        }
        FileHandle.standardError.write(Data(String(format: "transcribed in %.1f s\n", wall).utf8))
    }
}

switch arguments.dropFirst().first {
case "transcribe":
    guard arguments.count > 2 else { fail("usage: SpeechBenchmark transcribe FILE [--workers N]") }
    run(arguments[2], seconds: nil)
case "exclamations":
    let voice = option("--voice") ?? "en-us+f2"
    let wordsPerMinute = option("--wpm").flatMap(Int.init) ?? 160
    // As the simulator speaks, with pauses of 1 to 3 s.
    var pcm: [UInt8] = []
    var said: [(start: Double, end: Double, text: String, phrase: String?)] = []
    for (index, line) in Corpus.session.enumerated() {
        pcm += [UInt8](repeating: 0, count: (index % 3 + 1) * 22_050 * 2)
        let start = Double(pcm.count / 2) / 22_050
        pcm += speak(line.text, voice: voice, wordsPerMinute: wordsPerMinute)
        said.append((start, Double(pcm.count / 2) / 22_050, line.text, line.phrase))
    }
    pcm += [UInt8](repeating: 0, count: 22_050 * 2)
    let path = writeWAV(pcm, name: "mueval-speech-exclamations.wav")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (transcription, _, _) = transcribe(path)
    let segments = transcription.segments
    let spoken = said.filter { $0.phrase != nil }
    var report: [String] = []
    for (phrase, _) in Corpus.exclamations {
        let lines = spoken.filter { $0.phrase == phrase }
        let found = lines.filter { line in segments.contains { $0.exclamation == phrase && abs($0.start - line.start) <= 1 } }
        report.append("\(phrase) \(found.count)/\(lines.count)")
        for line in lines where !found.contains(where: { $0.start == line.start }) {
            let heard = segments.filter { abs($0.start - line.start) <= 2 }.map(\.text).joined(separator: " ")
            FileHandle.standardError.write(Data("missed \"\(line.text)\": heard \"\(heard)\"\n".utf8))
        }
    }
    let found = spoken.filter { line in segments.contains { $0.exclamation == line.phrase && abs($0.start - line.start) <= 1 } }
    let falseAlarms = segments.filter { segment in
        segment.exclamation != nil && !spoken.contains { $0.phrase == segment.exclamation && abs(segment.start - $0.start) <= 1 }
    }
    for alarm in falseAlarms { FileHandle.standardError.write(Data("false: \(alarm.exclamation!) in \"\(alarm.text)\" at \(alarm.start) s\n".utf8)) }
    // Ordinary speech: the whole recording but the exclamation lines themselves.
    let minutes = (Double(pcm.count / 2) / 22_050 - spoken.reduce(0) { $0 + $1.end - $1.start }) / 60
    print(String(format: "exclamations (%@, %@, %d words/min): %d of %d found within ±1 s (%.0f %%; %@), %d false in %.1f min of ordinary speech (%.1f per 10 min); %@",
                 engine.rawValue, voice, wordsPerMinute, found.count, spoken.count, 100 * Double(found.count) / Double(spoken.count), report.joined(separator: ", "),
                 falseAlarms.count, minutes, Double(falseAlarms.count) / minutes * 10,
                 WordErrorRate(said: said.map(\.text), heard: segments.map(\.text)).description))
case "german":
    let voice = option("--voice") ?? "de"
    let (pcm, lines) = Scripts.recording(Scripts.german.map { ($0, voice) }, minutes: 0)
    let path = writeWAV(pcm, name: "mueval-speech-german.wav")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (transcription, wall, cpu) = transcribe(path)
    for segment in transcription.segments { FileHandle.standardError.write(Data("heard: \(segment.text)\n".utf8)) }
    print(String(format: "German (%@, voice %@, %.1f min): %@; %.1f s, %.1f s of CPU; %@", engine.rawValue, voice, Double(pcm.count / 2) / 22_050 / 60,
                 WordErrorRate(said: lines.map(\.text), heard: transcription.segments.map(\.text)).description, wall, cpu,
                 transcription.engine))
case "quiet":
    let minutes = option("--minutes").flatMap(Double.init) ?? 10
    var results: [String] = []
    for (name, pcm) in [("silence", Scripts.silence(minutes: minutes)), ("noise", Scripts.noise(minutes: minutes))] {
        let path = writeWAV(pcm, name: "mueval-speech-\(name).wav")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (transcription, _, cpu) = transcribe(path)
        let words = transcription.segments.flatMap { WordErrorRate.words($0.text) }
        results.append(String(format: "%@ %d words in %d segments (%.1f CPU s)%@", name, words.count, transcription.segments.count, cpu,
                              words.isEmpty ? "" : ": \"" + words.prefix(12).joined(separator: " ") + "\""))
    }
    print(String(format: "%.0f min of silence and of white noise at -30 dBFS (%@): ", minutes, engine.rawValue) + results.joined(separator: "; "))
case "hour", nil:
    let minutes = option("--minutes").flatMap(Double.init) ?? 60
    let voices = ["en-us", "en-us+m3", "en-us+f2"]
    let (pcm, said) = Scripts.recording(voices.flatMap { voice in Scripts.hour.map { ($0, voice) } }, minutes: minutes)
    let path = writeWAV(pcm, name: "mueval-speech-hour.wav")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let seconds = Double(pcm.count / 2) / 22_050
    let (transcription, wall, cpu) = transcribe(path)
    let segments = transcription.segments
    print(String(format: "%.0f min of think-aloud audio transcribed in %.1f s with %d workers: %.3f × real time (%.1f min per hour), %.1f s of CPU (the recogniser's process's included), %@; %d segments; %@",
                 seconds / 60, wall, workers, wall / seconds, wall / seconds * 60, cpu, peakMemory(transcription), segments.count,
                 WordErrorRate(said: said.map(\.text), heard: segments.map(\.text)).description))
    print("  per voice: " + voices.map { voice in
        let lines = said.filter { $0.voice == voice }
        // A segment is a line's when its middle falls within the line (or the pause after it).
        let heard = segments.filter { segment in
            let middle = (segment.start + segment.end) / 2
            return said.contains { $0.voice == voice && middle >= $0.start - 0.5 && middle < $0.end + 0.9 }
        }
        return "\(voice) " + WordErrorRate(said: lines.map(\.text), heard: heard.map(\.text)).description
    }.joined(separator: "; "))
    let spoken = said.flatMap { line in Scripts.phrases(in: line.text, exclamations: exclamations).map { (line.start, $0) } }
    let found = spoken.filter { line in segments.contains { $0.exclamation == line.1 && abs($0.start - line.0) <= 1 } }
    let falseAlarms = segments.filter { segment in
        segment.exclamation != nil && !spoken.contains { $0.1 == segment.exclamation && abs(segment.start - $0.0) <= 1 }
    }
    for alarm in falseAlarms.prefix(10) { FileHandle.standardError.write(Data("false: \(alarm.exclamation!) in \"\(alarm.text)\" at \(alarm.start) s\n".utf8)) }
    print("  exclamations in the hour: \(found.count) of \(spoken.count) found within ±1 s, \(falseAlarms.count) false; \(transcription.engine)")
default:
    fail("usage: SpeechBenchmark [hour [--minutes M]] | exclamations [--voice V] | german | quiet | transcribe FILE [--workers N]")
}
