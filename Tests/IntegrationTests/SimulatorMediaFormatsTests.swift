import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// The formats phones record in, through the whole chain: muevalsim encodes the tester's voice as AAC
/// and the front camera as H.264, both in fragmented MP4, with ffmpeg; muevald stores the fragments;
/// `muevalctl media` writes each stream as one file that ffprobe reads at the length that was sent.
final class SimulatorMediaFormatsTests: XCTestCase {
    func testAACVoiceAndFaceVideoExportPlayable() async throws {
        for tool in ["/usr/bin/espeak-ng", "/usr/bin/ffmpeg", "/usr/bin/ffprobe"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw XCTSkip("CANNOT RUN HERE: \(tool) is missing (make test-deps installs espeak-ng and ffmpeg)")
        }
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "formats", sensors: ["microphone", "faceCamera", "UserInputEvent"]))
        let run = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "wordpress", "--seed", "3", "--speed", "8",
            "--events", "60", "--think-aloud", "--audio-format", "aac", "--face-video",
        ], timeout: 120)
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))

        let streams = try SessionReader(path: session.path).mediaStreams()
        let voice = try XCTUnwrap(streams.first { $0.stream == "voice-1" }, "\(streams)")
        let face = try XCTUnwrap(streams.first { $0.stream == "face-1" }, "\(streams)")
        XCTAssertEqual(voice.contentType, "audio/mp4")
        XCTAssertEqual(face.contentType, "video/mp4")
        XCTAssertEqual(voice.missingParts, 0)
        XCTAssertEqual(face.missingParts, 0)
        XCTAssertGreaterThan(voice.parts, 3, "the voice arrives fragment by fragment while recording")
        let sent = try XCTUnwrap(voice.duration, "every part says its duration")
        let video = try XCTUnwrap(face.duration)
        XCTAssertEqual(video, sent, accuracy: 1.0, "camera and microphone record the same stretch of time")

        let out = daemon.directory + "/media"
        let media = try daemon.muevalctl(["media", String(session.id), "--out", out])
        XCTAssertEqual(media.status, 0, media.stderr)
        func probe(_ file: String) throws -> (codec: String, duration: Double) {
            let result = try runProcess("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_name:format=duration",
                                                             "-of", "default=noprint_wrappers=1", out + "/" + file])
            XCTAssertEqual(result.status, 0, result.stderr)
            let fields = Dictionary(result.stdout.split(separator: "\n").compactMap { line -> (String, String)? in
                let parts = line.split(separator: "=", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }) { first, _ in first }
            return (fields["codec_name"] ?? "", Double(fields["duration"] ?? "") ?? -1)
        }
        let audio = try probe("voice-1.m4a")
        XCTAssertEqual(audio.codec, "aac")
        XCTAssertEqual(audio.duration, sent, accuracy: sent * 0.01, "ffprobe's duration within 1 % of what was sent")
        let camera = try probe("face-1.mp4")
        print("simulator media: voice \(voice.parts) parts, \(sent) s sent, ffprobe \(audio.codec) \(audio.duration) s; face \(face.parts) parts, \(video) s sent, ffprobe \(camera.codec) \(camera.duration) s")
        XCTAssertEqual(camera.codec, "h264")
        XCTAssertEqual(camera.duration, video, accuracy: max(0.2, video * 0.01))

        // The Mobile Monitor's replay plays both, in sync with the playhead, in Chromium.
        if let missing = try BrowserRequirement.missing() { throw XCTSkip(missing) }
        let link = try await daemon.consoleLink()
        let script = try runProcess(BrowserRequirement.python, [
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Browser/replay_face_browser.py").path,
        ], environment: ["CONSOLE_LOGIN_URL": link.url, "SESSION_ID": String(session.id), "REPLAY_T": "30"], timeout: 180)
        print(script.stdout)
        XCTAssertEqual(script.status, 0, script.stdout + script.stderr)
    }

    /// An encoder that dies mid-run: the events still arrive, muevalsim says why the recording failed and exits 1 (no SIGPIPE).
    func testAFailingEncoderEndsTheRecordingNotTheRun() async throws {
        if !FileManager.default.isExecutableFile(atPath: "/usr/bin/espeak-ng") {
            throw XCTSkip("CANNOT RUN HERE: /usr/bin/espeak-ng is missing (make test-deps installs espeak-ng)")
        }
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "broken encoder"))
        // An "ffmpeg" first on PATH that reads a little and exits with status 3.
        let bin = daemon.directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try "#!/bin/sh\nhead -c 1000 > /dev/null\nexit 3\n".write(toFile: bin + "/ffmpeg", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/ffmpeg")
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let run = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "wordpress", "--seed", "3", "--speed", "8",
            "--events", "40", "--think-aloud", "--audio-format", "aac",
        ], environment: ["PATH": path], timeout: 120)
        XCTAssertEqual(run.status, 1, "a run whose recording failed is not complete: " + run.stderr + run.stdout)
        XCTAssertTrue((run.stdout + run.stderr).contains("recording failed: ffmpeg"), run.stdout + run.stderr)
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
        XCTAssertEqual(try SessionReader(path: session.path).eventCount(), 40, "every event arrived")
    }

    func testFaceVideoNeedsThinkAloud() throws {
        let run = try runProcess(TestDaemon.executable("muevalsim"), ["--connect", "127.0.0.1:1", "--face-video"], timeout: 30)
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("--think-aloud"), run.stderr)
    }
}
