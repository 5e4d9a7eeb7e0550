internal import Foundation
internal import SpeechRecognition
internal import WireProtocol

// Times the transcription of think-aloud audio (issue 17: an hour of audio within 10 minutes on the
// project's 2-core machine, both passes: what was said and the exclamations).
//   SpeechBenchmark hour [--minutes 60] [--workers 2]   one hour of espeak-ng speech with pauses
//   SpeechBenchmark transcribe FILE [--workers 2]        any audio file: its segments as JSON lines
// Release mode: `swift build -c release --product SpeechBenchmark` (make bench runs it).

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}
let workers = option("--workers").flatMap(Int.init) ?? 2
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
func speak(_ text: String, voice: String) -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/espeak-ng")
    process.arguments = ["--stdout", "-v", voice, "-s", "155", text]
    let pipe = Pipe()
    process.standardOutput = pipe
    do { try process.run() } catch { fail("espeak-ng is needed for the synthetic hour (apt install espeak-ng): \(error)") }
    let wav = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Array(wav.dropFirst(44))
}

func run(_ path: String, seconds: Double?) {
    let transcriber: Transcriber
    do { transcriber = try Transcriber(configuration: SpeechConfiguration(exclamations: exclamations, workers: workers)) } catch { fail("\(error)") }
    let clock = ContinuousClock()
    var segments: [RecognisedSegment] = []
    let elapsed = clock.measure {
        do {
            segments = try transcriber.transcribe(path: path, progress: { _ in }, isCancelled: { false })
        } catch {
            fail("\(error)")
        }
    }
    let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    if let seconds {
        let exclamations = segments.filter { $0.exclamation != nil }.count
        print(String(format: "%.0f min of think-aloud audio transcribed in %.1f s with %d workers: %.3f × real time (%.1f min per hour); %d segments, %d exclamations",
                     seconds / 60, wall, workers, wall / seconds, wall / seconds * 60, segments.count, exclamations))
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
case "hour", nil:
    let minutes = option("--minutes").flatMap(Double.init) ?? 60
    let voices = ["en-us", "en-us+m3", "en-us+f2"]
    let spoken = voices.flatMap { voice in lines.map { speak($0, voice: voice) } }
    let rate = 22_050
    var pcm: [UInt8] = []
    pcm.reserveCapacity(Int(minutes * 60) * rate * 2)
    var generator = SystemRandomNumberGenerator()
    var index = 0
    // Speech about half the time, pauses of 1 to 6 s between lines: a tester thinking aloud.
    while pcm.count < Int(minutes * 60) * rate * 2 {
        pcm += [UInt8](repeating: 0, count: Int.random(in: 1...6, using: &generator) * rate * 2)
        pcm += spoken[index % spoken.count]
        index += 1
    }
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-speech-hour.wav").path
    guard FileManager.default.createFile(atPath: path, contents: Data(WAVFile.header(sampleRate: rate, dataBytes: pcm.count) + pcm)) else {
        fail("cannot write \(path)")
    }
    defer { try? FileManager.default.removeItem(atPath: path) }
    run(path, seconds: Double(pcm.count / 2) / Double(rate))
default:
    fail("usage: SpeechBenchmark [hour [--minutes M]] | transcribe FILE [--workers N]")
}
