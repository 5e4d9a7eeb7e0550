import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// Think-aloud through the whole chain: muevalsim speaks with espeak-ng and streams its microphone,
/// muevald stores the audio in the session file, transcribes it after the stop, and the transcript is
/// found by `events --grep`, problems come from its exclamations, the audio exports playable.
final class ThinkAloudEndToEndTests: XCTestCase {
    func testASimulatedTesterThinksAloudAndIsHeard() async throws {
        for tool in ["/usr/bin/espeak-ng", "/usr/bin/ffprobe"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw XCTSkip("CANNOT RUN HERE: \(tool) is missing (make test-deps installs espeak-ng and ffmpeg)")
        }
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "think-aloud"))
        let log = daemon.directory + "/speech.jsonl"
        // Two passes of the Wordpress scenario at 8× speed, with a failed task: lines and exclamations.
        let run = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "wordpress", "--seed", "7", "--speed", "8",
            "--events", "500", "--think-aloud", "--speech-log", log, "--fail-task", "Open the blog",
        ], timeout: 120)
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))

        // The microphone's stream: continuous, in sync with the device clock.
        let streams = try SessionReader(path: session.path).mediaStreams()
        let voice = try XCTUnwrap(streams.first { $0.stream == "voice-1" }, "\(streams)")
        XCTAssertEqual(voice.contentType, "audio/wav")
        XCTAssertEqual(voice.missingParts, 0)
        let sent = try XCTUnwrap(voice.duration)

        // muevald transcribes it by itself once the session stopped.
        let status = try await eventually(timeout: 180, "the transcription of voice-1") { () -> TranscriptionStatus? in
            let status = try SessionReader(path: session.path).transcriptionStatus().first
            return status?.state == .done || status?.state == .failed ? status : nil
        }
        XCTAssertEqual(status.state, .done, status.error ?? "")
        let transcript = try SessionReader(path: session.path).transcript()

        // What was said, and when: the simulator's log on the device clock.
        let said = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map { line in
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        }
        let phrases = ["oh no", "what happened", "where is", "i can't", "why did"]
        let exclamations = said.compactMap { line -> (start: Double, phrase: String)? in
            guard let text = line["text"]?.lowercased(), let start = line["start"].flatMap(Double.init),
                  let phrase = phrases.first(where: text.contains) else { return nil }
            return (start, phrase)
        }
        XCTAssertFalse(exclamations.isEmpty, "the scenario says exclamations")
        let found = exclamations.filter { line in transcript.contains { abs($0.start - line.start) <= 1 && $0.exclamation == line.phrase } }
        let falseAlarms = transcript.filter { segment in
            segment.exclamation != nil && !exclamations.contains { abs(segment.start - $0.start) <= 1 }
        }
        let missed = exclamations.filter { line in !found.contains { $0.start == line.start } }.map { line in
            "\(line.phrase) at \(line.start) (heard: \(transcript.filter { abs($0.start - line.start) <= 2 }.map(\.text).joined(separator: " / ")))"
        }
        let figures = "\(found.count) of \(exclamations.count) scripted exclamations found within ±1 s, \(falseAlarms.count) false, in \(Int(sent)) s of audio"
            + (missed.isEmpty ? "" : "; missed: " + missed.joined(separator: "; "))
        print("think-aloud end to end: \(figures)")
        // The targets: 80 % found within ±1 s, fewer than one false alarm per 10 minutes of audio.
        XCTAssertGreaterThanOrEqual(Double(found.count), 0.8 * Double(exclamations.count), figures)
        XCTAssertLessThan(Double(falseAlarms.count), max(1, sent / 600), figures)

        // Found by `events --grep`, as problems in the analysis, and the audio plays (ffprobe) at its length.
        if let quote = transcript.first(where: { $0.exclamation != nil }) {
            let grep = try daemon.muevalctl(["events", String(session.id), "--grep", quote.exclamation!])
            XCTAssertTrue(grep.stdout.contains("speech"), grep.stdout + grep.stderr)
        }
        let out = daemon.directory + "/media"
        let media = try daemon.muevalctl(["media", String(session.id), "--out", out])
        XCTAssertEqual(media.status, 0, media.stderr)
        let probe = try runProcess("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", out + "/voice-1.wav"])
        let duration = try XCTUnwrap(Double(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), probe.stderr)
        XCTAssertEqual(duration, sent, accuracy: sent * 0.01, "ffprobe's duration within 1 % of what was sent")
    }
}
