/// Compares secrets (device tokens, pairing codes, the console's CSRF tokens, the pool's enrolment key) in time
/// independent of where they differ, so that timing does not reveal how much of a guess was right.
public func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let (x, y) = (Array(a.utf8), Array(b.utf8))
    guard x.count == y.count else { return false }
    return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
}

/// Lower-case hex of bytes: blob names, the console's tokens, the pool's hashed secrets.
@inlinable
public func lowercaseHex(_ bytes: some Sequence<UInt8>) -> String {
    var hex = [UInt8]()
    hex.reserveCapacity(bytes.underestimatedCount * 2)
    for b in bytes {
        hex.append(hexDigit(b >> 4))
        hex.append(hexDigit(b & 0xF))
    }
    return String(decoding: hex, as: UTF8.self)
}

/// The lower-case hex digit of a nibble (0...15), in ASCII; JSON's `\u00XX` escapes use it too.
@inlinable
public func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10 }
