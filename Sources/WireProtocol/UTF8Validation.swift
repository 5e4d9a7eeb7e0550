/// Strict UTF-8 check (no overlongs, surrogates or code points above U+10FFFF), because the bytes go into JSON as is.
func isValidUTF8(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = p.baseAddress else { return true }
    let n = p.count
    var i = 0
    while i < n {
        // ASCII fast path, eight bytes at a time.
        if i + 8 <= n && UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
            i += 8
            continue
        }
        let b0 = p[i]
        if b0 < 0x80 {
            i += 1
            continue
        }
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xED: length = 3; high = 0x9F
        case 0xE1...0xEF: length = 3
        case 0xF0: length = 4; low = 0x90
        case 0xF4: length = 4; high = 0x8F
        case 0xF1...0xF3: length = 4
        default: return false
        }
        guard i + length <= n else { return false }
        let b1 = p[i + 1]
        guard b1 >= low && b1 <= high else { return false }
        for k in 2..<max(length, 2) where p[i + k] & 0xC0 != 0x80 {
            return false
        }
        i += length
    }
    return true
}

/// Appends the UTF-8 encoding of a scalar value already checked to be valid.
func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
    switch scalar {
    case ..<0x80:
        out.append(UInt8(scalar))
    case ..<0x800:
        out.append(UInt8(0xC0 | scalar >> 6))
        out.append(UInt8(0x80 | scalar & 0x3F))
    case ..<0x10000:
        out.append(UInt8(0xE0 | scalar >> 12))
        out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
        out.append(UInt8(0x80 | scalar & 0x3F))
    default:
        out.append(UInt8(0xF0 | scalar >> 18))
        out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
        out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
        out.append(UInt8(0x80 | scalar & 0x3F))
    }
}
