/// Standard base64 (RFC 4648 alphabet, `=` padding required), hand-written because `<data>` can hold megabytes
/// and Foundation is not used on the hot path.
public enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let invalid: UInt8 = 0xFF
    private static let whitespace: UInt8 = 0xFE
    private static let padding: UInt8 = 0xFD

    /// Byte → sextet, or one of the markers above.
    private static let sextets: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        for byte in [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")] { table[Int(byte)] = whitespace }
        table[Int(UInt8(ascii: "="))] = padding
        return table
    }()

    /// Decodes base64 with XML whitespace allowed anywhere; nil for any other deviation (bad byte, missing or
    /// misplaced padding, a length that is not a multiple of four).
    public static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var out = [UInt8]()
        out.reserveCapacity(text.count / 4 * 3)
        var accumulator: UInt32 = 0
        var sextetCount = 0  // in the current quad
        var padCount = 0
        let ok = sextets.withUnsafeBufferPointer { table -> Bool in
            for byte in text {
                let value = table[Int(byte)]
                if value < 64 {
                    guard padCount == 0 else { return false }
                    accumulator = accumulator << 6 | UInt32(value)
                    sextetCount += 1
                    if sextetCount == 4 {
                        out.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                        out.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                        out.append(UInt8(truncatingIfNeeded: accumulator))
                        accumulator = 0
                        sextetCount = 0
                    }
                } else if value == whitespace {
                    continue
                } else if value == padding {
                    padCount += 1
                    guard sextetCount >= 2, sextetCount + padCount <= 4 else { return false }
                } else {
                    return false
                }
            }
            return true
        }
        guard ok else { return nil }
        switch (sextetCount, padCount) {
        case (0, 0):
            break
        case (2, 2):
            out.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        case (3, 1):
            out.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            out.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        default:
            return nil
        }
        return out
    }

    /// Appends the padded base64 of `bytes` without line breaks.
    public static func encode(_ bytes: [UInt8], into out: inout [UInt8]) {
        out.reserveCapacity(out.count + (bytes.count + 2) / 3 * 4)
        alphabet.withUnsafeBufferPointer { a in
            var i = 0
            while i + 3 <= bytes.count {
                let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
                out.append(a[Int(v >> 18)])
                out.append(a[Int(v >> 12 & 63)])
                out.append(a[Int(v >> 6 & 63)])
                out.append(a[Int(v & 63)])
                i += 3
            }
            switch bytes.count - i {
            case 1:
                let v = UInt32(bytes[i]) << 16
                out.append(a[Int(v >> 18)])
                out.append(a[Int(v >> 12 & 63)])
                out.append(UInt8(ascii: "="))
                out.append(UInt8(ascii: "="))
            case 2:
                let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
                out.append(a[Int(v >> 18)])
                out.append(a[Int(v >> 12 & 63)])
                out.append(a[Int(v >> 6 & 63)])
                out.append(UInt8(ascii: "="))
            default:
                break
            }
        }
    }
}
