internal import CZlib

/// Writes palette PNG images (colour type 3, 8 bits per pixel), the smallest correct form for screens of a
/// few flat colours. zlib (the system library) does the deflate and the CRC-32; the output depends only on
/// the pixels, so the same screen always gives the same bytes.
public enum PNGEncoder {
    public struct RGB: Sendable, Equatable {
        public var r: UInt8, g: UInt8, b: UInt8

        public init(_ r: UInt8, _ g: UInt8, _ b: UInt8) {
            self.r = r
            self.g = g
            self.b = b
        }
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// `pixels` holds `width × height` palette indices, row by row.
    public static func encode(width: Int, height: Int, palette: [RGB], pixels: [UInt8]) -> [UInt8] {
        precondition(pixels.count == width * height && (1...256).contains(palette.count))
        var png = signature
        var header: [UInt8] = []
        header.appendBigEndian(UInt32(width))
        header.appendBigEndian(UInt32(height))
        header += [8, 3, 0, 0, 0]  // bit depth, colour type "palette", deflate, filter method 0, no interlace
        chunk("IHDR", header, into: &png)
        chunk("PLTE", palette.flatMap { [$0.r, $0.g, $0.b] }, into: &png)
        // Every row starts with its filter type; 0 (none) keeps the encoder simple, and flat rows deflate well anyway.
        var raw = [UInt8]()
        raw.reserveCapacity((width + 1) * height)
        for row in 0..<height {
            raw.append(0)
            raw += pixels[row * width..<(row + 1) * width]
        }
        chunk("IDAT", deflate(raw), into: &png)
        chunk("IEND", [], into: &png)
        return png
    }

    private static func chunk(_ type: String, _ data: [UInt8], into png: inout [UInt8]) {
        png.appendBigEndian(UInt32(data.count))
        let typeAndData = Array(type.utf8) + data
        png += typeAndData
        let crc = typeAndData.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        png.appendBigEndian(UInt32(crc))
    }

    /// A zlib stream (what IDAT holds), at the best compression: screenshots are sent over Wi-Fi.
    private static func deflate(_ input: [UInt8]) -> [UInt8] {
        var length = compressBound(uLong(input.count))
        var output = [UInt8](repeating: 0, count: Int(length))
        let status = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { compress2($0.baseAddress, &length, source.baseAddress, uLong(source.count), Z_BEST_COMPRESSION) }
        }
        // compress2 fails only without memory or with a too small buffer, and compressBound rules out the latter.
        precondition(status == Z_OK, "zlib compress2 failed with status \(status)")
        return Array(output.prefix(Int(length)))
    }
}

extension [UInt8] {
    mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }
}
