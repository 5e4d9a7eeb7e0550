import DeviceSimulator
import Foundation

/// A 640 × 960 palette PNG of a given size: a flat screen with a band of noise (a photo, a map tile)
/// that deflate cannot shrink. The simulator's own wireframes compress to a few KB; real screenshots of
/// the thesis's era were tens of KB, and the issue asks for 48 KB.
enum NoisePNG {
    static func make(targetBytes: Int) -> Data {
        let (width, height) = (640, 960)
        let palette = (0..<16).map { (level: Int) -> PNGEncoder.RGB in
            let shade = UInt8(level * 16)
            return PNGEncoder.RGB(shade, 255 - shade, UInt8(level * 9))
        }
        var random: UInt64 = 0x9E37_79B9_7F4A_7C15
        // Noise pixels of 16 colours cost about half a byte each; start there and correct twice.
        var noisePixels = targetBytes * 2
        var png: [UInt8] = []
        for _ in 0..<3 {
            var pixels = [UInt8](repeating: 3, count: width * height)
            for i in 0..<min(noisePixels, pixels.count) {
                random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                pixels[i] = UInt8(truncatingIfNeeded: random >> 60)
            }
            png = PNGEncoder.encode(width: width, height: height, palette: palette, pixels: pixels)
            noisePixels = noisePixels * targetBytes / max(png.count, 1)
        }
        return Data(png)
    }
}
