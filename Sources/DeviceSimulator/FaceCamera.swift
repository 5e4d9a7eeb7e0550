/// The simulated front camera (`muevalsim --face-video`): a drawn face, 160×120 at 10 frames a second,
/// whose mouth is open while the tester speaks, so that a replay shows at a glance that picture and
/// voice are in sync. Frames are raw RGB for ffmpeg to encode as H.264.
struct FaceCamera {
    static let width = 160
    static let height = 120
    static let framesPerSecond = 10
    static let stream = "face-1"

    /// The frame with the mouth shut, and with it open: the only two pictures there are.
    private let frames: (shut: [UInt8], open: [UInt8]) = (Self.draw(mouthOpen: false), Self.draw(mouthOpen: true))

    /// The frames of `start..<end` on the simulated clock (frame `n` shows time `n / framesPerSecond`).
    func frames(from start: Double, to end: Double, speaking: (Double) -> Bool) -> [UInt8] {
        let rate = Double(Self.framesPerSecond)
        var bytes: [UInt8] = []
        var frame = Int((start * rate).rounded())
        while Double(frame) < (end * rate).rounded() {
            bytes += speaking(Double(frame) / rate) ? frames.open : frames.shut
            frame += 1
        }
        return bytes
    }

    /// ffmpeg's options for these frames on its standard input, encoded as phones do (H.264, a key
    /// frame each second, so that each fragment of a second starts with one).
    static let encoderArguments = [
        "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "\(width)x\(height)", "-r", "\(framesPerSecond)", "-i", "pipe:0",
        "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "\(framesPerSecond)", "-pix_fmt", "yuv420p",
    ]

    private static func draw(mouthOpen: Bool) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        func inEllipse(_ x: Int, _ y: Int, _ cx: Double, _ cy: Double, _ rx: Double, _ ry: Double) -> Bool {
            let dx = (Double(x) - cx) / rx, dy = (Double(y) - cy) / ry
            return dx * dx + dy * dy <= 1
        }
        for y in 0..<height {
            for x in 0..<width {
                var colour: (UInt8, UInt8, UInt8) = (70, 90, 120)  // the room behind
                if inEllipse(x, y, 80, 62, 42, 50) { colour = (236, 196, 150) }  // face
                if inEllipse(x, y, 64, 48, 5, 6) || inEllipse(x, y, 96, 48, 5, 6) { colour = (40, 40, 50) }  // eyes
                if mouthOpen ? inEllipse(x, y, 80, 84, 12, 8) : inEllipse(x, y, 80, 84, 12, 2) { colour = (120, 30, 40) }  // mouth
                let index = (y * width + x) * 3
                (pixels[index], pixels[index + 1], pixels[index + 2]) = colour
            }
        }
        return pixels
    }
}
