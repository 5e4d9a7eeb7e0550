import ControlProtocol
import DaemonTestSupport
import Foundation
import MuEvalWire
import WireProtocol
import XCTest

/// Issue 38's face-video attack against the real muevald: a phone sends a `video/mp4` stream whose part 0 is an HLS
/// playlist naming a FIFO on the lab machine. Neither the automatic report after the session stops nor a lab member's
/// `muevalctl report` opens it; and the lab member's scan imports no `cv2.py` from where they run it, nor from a
/// PYTHONPATH of theirs (docs/SECURITY.md, "Names and media from files and devices").
final class FaceVideoGateIntegrationTests: XCTestCase {
    /// Records `bytes` as one session's face video (one part) and stops the session; returns its id.
    private func recordFaceVideo(_ bytes: [UInt8], named name: String, on daemon: TestDaemon) async throws -> Int64 {
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: name, sensors: ["faceCamera", "UserInputEvent"]))
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "phone-\(name)"))
        let media = WireMedia(stream: "face-1", format: .h264MP4, part: 0, start: 1_700_000_000, duration: 2, seq: 1, bytes: bytes)
        try await device.send(WireEncoder.media(media))
        try await device.waitForAck(1)
        XCTAssertEqual(device.errors.count, 0, "\(device.errors)")
        await device.close()
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
        return session.id
    }

    func testAPlaylistNamingAFIFOIsNeverOpenedAndTheScanIgnoresItsCallersPython() async throws {
        for tool in ["/usr/bin/ffmpeg", "/usr/bin/python3", "/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml"]
        where !FileManager.default.fileExists(atPath: tool) {
            throw XCTSkip("CANNOT RUN HERE: \(tool) is missing (make test-deps installs ffmpeg, python3-opencv and opencv-data)")
        }
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        // `.ts`: FFmpeg's HLS demuxer opens segments with a media extension only.
        let fifo = daemon.directory + "/segment.ts"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let watch = FIFOWatch(fifo)
        let playlist = Array("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n\(fifo)\n#EXT-X-ENDLIST\n".utf8)
        let attack = try await recordFaceVideo(playlist, named: "playlist", on: daemon)

        // The automatic report runs the face scan once the session stops.
        try await eventually(timeout: 300, "the automatic report of session \(attack) (log: \(daemon.log))") {
            daemon.log.contains("report of session \(attack) (default) written") || daemon.log.contains("report of session \(attack) (default) failed")
                ? true : nil
        }
        XCTAssertFalse(watch.wasOpened, "muevald's automatic report opened the FIFO the phone's playlist names")

        // A lab member's report, run where a cv2.py waits, with their own PYTHONPATH and muevald's device token.
        let member = daemon.directory + "/member"
        try FileManager.default.createDirectory(atPath: member, withIntermediateDirectories: true)
        let marker = member + "/imported"
        try Data("open(\(Self.pythonLiteral(marker)), 'w').write('cv2.py was imported')\nraise ImportError('not OpenCV')\n".utf8)
            .write(to: URL(fileURLWithPath: member + "/cv2.py"))
        func report(_ session: Int64) throws -> String {
            let out = member + "/report-\(session)"
            let run = try runProcess("/bin/sh", ["-c", #"cd "$1" && shift && exec "$@""#, "sh", member,
                                                 TestDaemon.executable("muevalctl"), "report", String(session), "--out", out,
                                                 "--sections", "face", "--socket", daemon.socketPath],
                                     environment: ["PYTHONPATH": member, "MUEVAL_SERVER_DEVICE_TOKEN": "lab-secret"], timeout: 300)
            XCTAssertEqual(run.status, 0, run.stderr)
            let html = try String(contentsOfFile: out + "/index.html", encoding: .utf8)
            guard let start = html.range(of: "<section id=\"face\"") else { return "no face section" }
            return String(html[start.lowerBound..<(html[start.upperBound...].range(of: "</section>")?.upperBound ?? html.endIndex)])
        }
        let refused = try report(attack)
        XCTAssertTrue(refused.contains("The face scan failed: cannot open the face video as MP4"), refused)
        XCTAssertFalse(watch.wasOpened, "muevalctl report opened the FIFO the phone's playlist names")

        // A real H.264 video: the scan runs (OpenCV's cv2, not the member's) and reads its four frames.
        let video = member + "/face.mp4"
        let encode = try runProcess("/usr/bin/ffmpeg", ["-y", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10",
                                                        "-t", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                                                        "-movflags", "frag_keyframe+empty_moov+default_base_moof", "-f", "mp4", video])
        XCTAssertEqual(encode.status, 0, encode.stderr)
        let real = try await recordFaceVideo(Array(try Data(contentsOf: URL(fileURLWithPath: video))), named: "real", on: daemon)
        let scanned = try report(real)
        XCTAssertTrue(scanned.contains("over 4 frames"), scanned)
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "the scan imported the cv2.py of the directory muevalctl ran in")

        // Before: OpenCV's own reader, given the same bytes, opens the FIFO (the attack is real on this machine).
        try Data(playlist).write(to: URL(fileURLWithPath: member + "/playlist.mp4"))
        _ = try runProcess("/usr/bin/python3", ["-I", "-c", "import cv2, sys; cv2.VideoCapture(sys.argv[1])", member + "/playlist.mp4"])
        XCTAssertTrue(watch.release(fifo))
        XCTAssertTrue(watch.wasOpened, "OpenCV's reader opened the FIFO")
    }

    /// `reports.face_*` reach the automatic report's scan: frames wider than `face_max_width` are refused.
    func testTheConfiguredFrameLimitReachesTheAutomaticReport() async throws {
        for tool in ["/usr/bin/ffmpeg", "/usr/bin/python3"] where !FileManager.default.fileExists(atPath: tool) {
            throw XCTSkip("CANNOT RUN HERE: \(tool) is missing (make test-deps installs ffmpeg and python3-opencv)")
        }
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("face-\(UUID().uuidString.prefix(8)).toml").path
        try "[reports]\nface_max_width = 100\n".write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        defer { daemon.cleanUp() }
        let video = daemon.directory + "/face.mp4"
        let encode = try runProcess("/usr/bin/ffmpeg", ["-y", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10",
                                                        "-t", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                                                        "-movflags", "frag_keyframe+empty_moov+default_base_moof", "-f", "mp4", video])
        XCTAssertEqual(encode.status, 0, encode.stderr)
        let session = try await recordFaceVideo(Array(try Data(contentsOf: URL(fileURLWithPath: video))), named: "wide", on: daemon)
        try await eventually(timeout: 300, "the automatic report of session \(session) (log: \(daemon.log))") {
            daemon.log.contains("report of session \(session) (default) written") ? true : nil
        }
        let html = try String(contentsOfFile: daemon.dataDirectory + "/reports/\(session)/default/index.html", encoding: .utf8)
        XCTAssertTrue(html.contains("reports.face_max_width"), "the report does not say the configured limit refused the frames")
    }

    private static func pythonLiteral(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
