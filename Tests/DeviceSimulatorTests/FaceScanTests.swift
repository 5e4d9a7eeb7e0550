@testable import DeviceSimulator
import Foundation
@testable import ReportCritique
import Testing

/// The face scan (OpenCV's Haar cascades from Debian, docs/REPORTS.md "Face") against the simulator's face video:
/// the face is found where it is drawn facing the phone, and not where the simulated tester looks away.
@Suite struct FaceScanTests {
    /// Encodes `seconds` of the camera's frames as the simulator sends them: H.264 in fragmented MP4.
    private func video(_ camera: FaceCamera, seconds: Double, to file: String) throws {
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        ffmpeg.arguments = ["-y", "-loglevel", "error"] + FaceCamera.encoderArguments
            + ["-movflags", "frag_keyframe+empty_moov+default_base_moof", "-f", "mp4", file]
        let input = Pipe()
        ffmpeg.standardInput = input
        try ffmpeg.run()
        try input.fileHandleForWriting.write(contentsOf: camera.frames(from: 0, to: seconds) { Int($0) % 3 == 0 })
        try input.fileHandleForWriting.close()
        ffmpeg.waitUntilExit()
        #expect(ffmpeg.terminationStatus == 0)
    }

    @Test func findsTheDrawnFaceAndNotWhereTheTesterLooksAway() throws {
        let scanner = FaceScanner()
        #expect(FileManager.default.fileExists(atPath: scanner.cascades + "/haarcascade_frontalface_default.xml"),
                "opencv-data is missing: apt install python3-opencv opencv-data (make test-deps)")
        // The first seed whose tester looks away within the 30 seconds.
        let camera = try #require((0..<100).lazy.map { FaceCamera(seed: $0) }.first { camera in
            stride(from: 10.0, to: 28.0, by: 0.5).contains { camera.isLookingAway(at: $0) }
        })
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-face-\(UUID().uuidString.prefix(8)).mp4").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try video(camera, seconds: 30, to: file)

        guard case .scanned(let scan) = scanner.scan(video: file) else {
            Issue.record("no scan: \(scanner.scan(video: file))")
            return
        }
        #expect(scan.samples.count == 60, "two frames a second of 30 s")
        #expect(scan.complete)
        for sample in scan.samples {
            let away = camera.isLookingAway(at: sample.time)
            #expect((sample.kind == .frontal) == !away, "at \(sample.time) s: \(sample.kind), drawn \(away ? "looking away" : "facing the phone")")
        }
        let expected = stride(from: 0.0, to: 30, by: 0.5).filter { camera.isLookingAway(at: $0) }
        #expect(scan.lookAways(interval: 0.5).reduce(0) { $0 + $1.upperBound - $1.lowerBound } == Double(expected.count) * 0.5)
        #expect(scan.facingShare == 1 - Double(expected.count) / 60)
    }

    @Test func theScriptsOutputIsCheckedBeforeItIsBelieved() throws {
        let limits = FaceScanner()
        func parse(_ json: String) -> String {
            do {
                return "\(try FaceScan.parse(Data(json.utf8), limits: limits))"
            } catch {
                return "refused: \(error)"
            }
        }
        #expect(parse(#"{"samples": [[0, "frontal", 0.1, 0.2, 0.5, 0.6], [0.5, "none"], [1, "profile", 0, 0, 1, 1]]}"#).hasPrefix("scanned"))
        #expect(parse(#"{"unavailable": "no face scan: python3-opencv is not installed"}"#).hasPrefix("unavailable"))
        #expect(parse("[1, 2]").hasPrefix("refused"))
        #expect(parse(#"{"samples": [[1, "frontal", 0, 0, 1, 1], [0.5, "none"]]}"#).hasPrefix("refused"), "time going back")
        #expect(parse(#"{"samples": [[0, "smiling"]]}"#).hasPrefix("refused"), "an unknown kind")
        #expect(parse(#"{"samples": [[0, "frontal", 0, 0, 2, 1]]}"#).hasPrefix("refused"), "a box beyond the frame")
        #expect(parse(#"{"samples": [[0, "frontal"]]}"#).hasPrefix("refused"), "a face without its box")
        #expect(parse(#"{"samples": [["0", "none"]]}"#).hasPrefix("refused"), "a time that is text")
        let tooMany = "{\"samples\": [" + Array(repeating: "[0, \"none\"]", count: limits.maxSamples + 1).joined(separator: ",") + "]}"
        #expect(parse(tooMany).hasPrefix("refused"))
    }

    @Test func saysSoInOneLineWhenOpenCVIsMissing() {
        var scanner = FaceScanner()
        scanner.cascades = "/nonexistent"
        guard case .unavailable(let reason) = scanner.scan(video: "/nonexistent.mp4") else {
            Issue.record("expected unavailable")
            return
        }
        #expect(reason.contains("opencv-data") && !reason.contains("\n"))
    }
}
