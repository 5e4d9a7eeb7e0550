/// The simulated front camera (`muevalsim --face-video`): a drawn face, 160×120 at 10 frames a second,
/// whose mouth is open while the tester speaks, so that a replay shows at a glance that picture and
/// voice are in sync, and which now and then turns aside for a few seconds (the tester looks away from
/// the phone), at times fixed by the seed. The face is one OpenCV's frontal-face Haar cascade finds, and
/// the turned head one it does not (checked against Debian's opencv-data, docs/REPORTS.md "Face").
/// Frames are raw RGB for ffmpeg to encode as H.264.
package struct FaceCamera {
    package static let width = 160
    package static let height = 120
    package static let framesPerSecond = 10
    static let stream = "face-1"

    /// The face with the mouth shut, with it open, and the head turned aside: the only pictures there are.
    private let frames: (shut: [UInt8], open: [UInt8], away: [UInt8]) =
        (Self.draw(mouthOpen: false), Self.draw(mouthOpen: true), Self.drawTurnedAside())
    private let seed: UInt64

    package init(seed: UInt64) {
        self.seed = seed
    }

    /// The camera of the device `id`: the same device looks away at the same times in every run.
    init(device id: String) {
        // FNV-1a: a hash that does not change between runs (Swift's Hasher does).
        self.init(seed: id.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 })
    }

    /// The frames of `start..<end` on the simulated clock (frame `n` shows time `n / framesPerSecond`).
    package func frames(from start: Double, to end: Double, speaking: (Double) -> Bool) -> [UInt8] {
        let rate = Double(Self.framesPerSecond)
        var bytes: [UInt8] = []
        var frame = Int((start * rate).rounded())
        while Double(frame) < (end * rate).rounded() {
            let time = Double(frame) / rate
            bytes += isLookingAway(at: time) ? frames.away : speaking(time) ? frames.open : frames.shut
            frame += 1
        }
        return bytes
    }

    /// Whether the tester looks away at `time`: in each ten seconds, two in five times, for 2 to 4 s from
    /// a second 1 to 5 into them (never in the first ten, so that every recording starts facing the phone).
    package func isLookingAway(at time: Double) -> Bool {
        guard time >= 10, let window = UInt64(exactly: (time / 10).rounded(.down)) else { return false }
        var state = seed ^ (window &* 0x9e37_79b9_7f4a_7c15)
        func next() -> UInt64 {  // SplitMix64
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
        guard next() % 5 < 2 else { return false }
        let from = Double(window) * 10 + 1 + Double(next() % 5)
        return time >= from && time < from + 2 + Double(next() % 3)
    }

    /// ffmpeg's options for these frames on its standard input, encoded as phones do (H.264, a key
    /// frame each second, so that each fragment of a second starts with one).
    package static let encoderArguments = [
        "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "\(width)x\(height)", "-r", "\(framesPerSecond)", "-i", "pipe:0",
        "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "\(framesPerSecond)", "-pix_fmt", "yuv420p",
    ]

    private static func draw(mouthOpen: Bool) -> [UInt8] {
        paint { x, y in
            if mouthOpen ? inEllipse(x, y, 80, 84, 12, 8) : inEllipse(x, y, 80, 84, 12, 2) { return (120, 30, 40) }  // mouth
            if inEllipse(x, y, 64, 48, 5, 6) || inEllipse(x, y, 96, 48, 5, 6) { return (40, 40, 50) }  // eyes
            return inEllipse(x, y, 80, 62, 42, 50) ? (236, 196, 150) : nil  // face
        }
    }

    /// The head turned aside: narrower, off centre, hair over its back, one eye at its edge.
    private static func drawTurnedAside() -> [UInt8] {
        paint { x, y in
            if inEllipse(x, y, 118, 50, 3, 5) { return (40, 40, 50) }  // the far eye
            if x < 84, inEllipse(x, y, 76, 58, 30, 50) { return (60, 40, 30) }  // hair
            return inEllipse(x, y, 92, 62, 34, 50) ? (236, 196, 150) : nil  // face
        }
    }

    /// A frame: each pixel the colour `figure` gives, else the room behind.
    private static func paint(_ figure: (Int, Int) -> (UInt8, UInt8, UInt8)?) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let colour = figure(x, y) ?? (70, 90, 120)
                let index = (y * width + x) * 3
                (pixels[index], pixels[index + 1], pixels[index + 2]) = colour
            }
        }
        return pixels
    }

    private static func inEllipse(_ x: Int, _ y: Int, _ cx: Double, _ cy: Double, _ rx: Double, _ ry: Double) -> Bool {
        let dx = (Double(x) - cx) / rx, dy = (Double(y) - cy) / ry
        return dx * dx + dy * dy <= 1
    }
}
