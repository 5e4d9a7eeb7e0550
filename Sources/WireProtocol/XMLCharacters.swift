#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// ASCII bytes the scanner and parser compare against.
enum ASCII {
    static let tab: UInt8 = 0x09
    static let newline: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let exclamation: UInt8 = 0x21
    static let quote: UInt8 = 0x22
    static let dollar: UInt8 = 0x24
    static let ampersand: UInt8 = 0x26
    static let apostrophe: UInt8 = 0x27
    static let plus: UInt8 = 0x2B
    static let comma: UInt8 = 0x2C
    static let minus: UInt8 = 0x2D
    static let dot: UInt8 = 0x2E
    static let slash: UInt8 = 0x2F
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let lessThan: UInt8 = 0x3C
    static let equals: UInt8 = 0x3D
    static let greaterThan: UInt8 = 0x3E
    static let question: UInt8 = 0x3F
    static let leftBracket: UInt8 = 0x5B
    static let backslash: UInt8 = 0x5C
    static let rightBracket: UInt8 = 0x5D
    static let leftBrace: UInt8 = 0x7B
    static let rightBrace: UInt8 = 0x7D
}

@inline(__always)
func isXMLWhitespace(_ b: UInt8) -> Bool {
    b == ASCII.space || b == ASCII.newline || b == ASCII.tab || b == ASCII.carriageReturn
}

/// First byte of an XML name. Every non-ASCII byte is accepted: names are compared as bytes, never interpreted.
@inline(__always)
func isNameStart(_ b: UInt8) -> Bool {
    // Bit sets over bytes 0–63 and 64–127: ':' and 'A'–'Z' '_' 'a'–'z'.
    b < 64 ? (0x0400_0000_0000_0000 as UInt64) >> b & 1 != 0
        : b < 128 ? (0x07FF_FFFE_87FF_FFFE as UInt64) >> (b & 63) & 1 != 0 : true
}

@inline(__always)
func isNameByte(_ b: UInt8) -> Bool {
    // As `isNameStart`, plus '-' '.' '0'–'9'.
    b < 64 ? (0x07FF_6000_0000_0000 as UInt64) >> b & 1 != 0
        : b < 128 ? (0x07FF_FFFE_87FF_FFFE as UInt64) >> (b & 63) & 1 != 0 : true
}

@inline(__always)
func isDigit(_ b: UInt8) -> Bool { b &- ASCII.zero < 10 }

/// Index of the first `byte` in `p[from...]`, or `p.count`. Short runs (indentation, numbers) are checked inline;
/// longer ones go to memchr, because long text and base64 are where the bytes are.
@inline(__always)
func firstIndex(of byte: UInt8, in p: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
    var i = from
    let inlineEnd = min(from + 16, p.count)
    while i < inlineEnd {
        if p[i] == byte { return i }
        i += 1
    }
    guard i < p.count, let base = p.baseAddress else { return p.count }
    guard let found = memchr(base + i, Int32(byte), p.count - i) else { return p.count }
    return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
}

/// Whether `p` at `index` starts with `literal`, does not, or might once more bytes arrive.
enum PrefixMatch { case yes, no, needMore }

func matchPrefix(_ p: UnsafeBufferPointer<UInt8>, at index: Int, _ literal: StaticString) -> PrefixMatch {
    let lit = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
    for k in 0..<lit.count {
        guard index + k < p.count else { return .needMore }
        if p[index + k] != lit[k] { return .no }
    }
    return .yes
}

@inline(__always)
func bytesEqual(_ a: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
    bytesEqual(a, UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
}

/// Element names and keys are short: a plain loop beats a call to memcmp for those.
@inline(__always)
func bytesEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    guard a.count > 16 else {
        for k in 0..<a.count where a[k] != b[k] { return false }
        return true
    }
    return memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
}

/// Printable excerpt of raw bytes for error messages: ASCII as is, other bytes as `\xNN`, cut after `limit` bytes.
func excerpt(_ p: UnsafeBufferPointer<UInt8>, limit: Int = 24) -> String {
    var text = ""
    for b in p.prefix(limit) {
        if b >= 0x20 && b < 0x7F && b != ASCII.quote && b != ASCII.backslash {
            text.unicodeScalars.append(Unicode.Scalar(b))
        } else {
            let hex = String(b, radix: 16)
            text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
        }
    }
    if p.count > limit { text += "…" }
    return "\"" + text + "\""
}

/// One byte for an error message: `'x'` when printable ASCII, else `0xNN`.
func describeByte(_ b: UInt8) -> String {
    if b >= 0x21 && b < 0x7F { return "'" + String(Unicode.Scalar(b)) + "'" }
    let hex = String(b, radix: 16, uppercase: true)
    return "0x" + (hex.count == 1 ? "0" + hex : hex)
}
