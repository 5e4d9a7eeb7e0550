internal import Foundation
internal import MuEvalWire
internal import SpeechRecognition
internal import WireProtocol

// Times the transcription of think-aloud audio (issue 17: an hour of audio within 10 minutes on the
// project's 2-core machine, both passes: what was said and the exclamations).
//   SpeechBenchmark hour [--minutes 60] [--workers 2]   one hour of espeak-ng speech with pauses: seconds,
//                                                        CPU seconds, word error rate against the script
//   SpeechBenchmark exclamations [--voice en-us+f2] [--wpm 160]   the corpus of Corpus.swift: exclamations found
//                                                        within ±1 s, false ones per 10 minutes, word error rate
//   SpeechBenchmark transcribe FILE [--workers 2]        any audio file: its segments as JSON lines
// Each takes --decoder "-fwdflat no …": PocketSphinx search options instead of the tuned ones, and
// --dictionary FILE instead of Debian's, --vocabulary N words instead of 20,000 (for tuning).
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

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("SpeechBenchmark: \(message)\n".utf8))
    exit(1)
}

/// Think-aloud as a tester says it: commentary, now and then an exclamation.
let lines = [
    "okay so I am on the start screen now", "let me open the blog first", "where is the publish button",
    "this list looks fine, I can read the titles", "I will tap on the first post", "oh no, what happened",
    "the text is a bit small but it works", "now I want to write a new post", "I can't find the settings",
    "typing the title now, this keyboard is okay", "why did it go back to the list", "I think that was the right button",
    "scrolling down to see more entries", "the map opens and the room is on the second floor", "good, that is done",
]

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

/// This process's CPU seconds so far (user and system, all threads; espeak-ng's are its own).
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// The file's segments, and the seconds transcribing took: on the clock (the models' loading included)
/// and of CPU (which other work on the machine disturbs less).
func transcribe(_ path: String) -> (segments: [RecognisedSegment], wall: Double, cpu: Double) {
    let clock = ContinuousClock()
    let cpuBefore = cpuSeconds()
    var segments: [RecognisedSegment] = []
    let elapsed = clock.measure {
        do {
            let transcriber = try Transcriber(configuration: SpeechConfiguration(dictionary: dictionary, exclamations: exclamations, workers: workers, vocabulary: vocabulary,
                                                                                   decoderOptions: decoderOptions))
            segments = try transcriber.transcribe(path: path, container: .wav, progress: { _ in }, isCancelled: { false })
        } catch {
            fail("\(error)")
        }
    }
    return (segments, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, cpuSeconds() - cpuBefore)
}

/// `said`: the script, for the word error rate.
func run(_ path: String, seconds: Double?, said: [String] = []) {
    let (segments, wall, cpu) = transcribe(path)
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
    let (segments, _, _) = transcribe(path)
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
    print(String(format: "exclamations (%@, %d words/min): %d of %d found within ±1 s (%.0f %%; %@), %d false in %.1f min of ordinary speech (%.1f per 10 min); %@",
                 voice, wordsPerMinute, found.count, spoken.count, 100 * Double(found.count) / Double(spoken.count), report.joined(separator: ", "),
                 falseAlarms.count, minutes, Double(falseAlarms.count) / minutes * 10,
                 WordErrorRate(said: said.map(\.text), heard: segments.map(\.text)).description))
case "hour", nil:
    let minutes = option("--minutes").flatMap(Double.init) ?? 60
    let voices = ["en-us", "en-us+m3", "en-us+f2"]
    let spoken = voices.flatMap { voice in lines.map { (text: $0, pcm: speak($0, voice: voice)) } }
    let rate = 22_050
    var pcm: [UInt8] = []
    pcm.reserveCapacity(Int(minutes * 60) * rate * 2)
    var said: [String] = []
    // Speech about half the time, pauses of 1 to 6 s between lines: a tester thinking aloud. The same
    // pauses on every run (1, 6, 5, 4, 3, 2 s…), so that runs compare word for word.
    while pcm.count < Int(minutes * 60) * rate * 2 {
        pcm += [UInt8](repeating: 0, count: (1 + said.count * 5 % 6) * rate * 2)
        let line = spoken[said.count % spoken.count]
        pcm += line.pcm
        said.append(line.text)
    }
    let path = writeWAV(pcm, name: "mueval-speech-hour.wav")
    defer { try? FileManager.default.removeItem(atPath: path) }
    run(path, seconds: Double(pcm.count / 2) / Double(rate), said: said)
default:
    fail("usage: SpeechBenchmark [hour [--minutes M]] | exclamations [--voice V] | transcribe FILE [--workers N]")
}
