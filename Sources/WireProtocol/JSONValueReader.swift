internal import MuEvalWire
internal import OrderedCollections

/// Reads JSON into `PlistValue`s: typed JSON (exactly the format `TypedJSONWriter` produces, and JSON
/// whitespace) or, with `typed` false, plain JSON, where `$` keys mean nothing.
struct JSONValueReader {
    private let p: UnsafeBufferPointer<UInt8>
    private var i = 0
    private let typed: Bool
    private let blob: (String) throws -> [UInt8]
    /// Well beyond any `WireLimits.maxDepth`; stops hostile input from exhausting the stack.
    private static let maxDepth = 512

    init(_ p: UnsafeBufferPointer<UInt8>, typed: Bool, blob: @escaping (String) throws -> [UInt8]) {
        self.p = p
        self.typed = typed
        self.blob = blob
    }

    var atEnd: Bool { i >= p.count }

    func failure(_ message: String) -> TypedJSONError { TypedJSONError(message: message, offset: i) }

    private func peek() -> UInt8 { i < p.count ? p[i] : 0 }

    mutating func skipWhitespace() {
        while i < p.count, isXMLWhitespace(p[i]) { i += 1 }  // JSON's whitespace is the same four bytes
    }

    private mutating func expect(_ byte: UInt8) throws {
        skipWhitespace()
        guard peek() == byte else { throw failure("expected '\(Character(Unicode.Scalar(byte)))'") }
        i += 1
    }

    private mutating func literal(_ text: StaticString) -> Bool {
        guard matchPrefix(p, at: i, text) == .yes else { return false }
        i += text.utf8CodeUnitCount
        return true
    }

    mutating func value(depth: Int) throws -> PlistValue {
        guard depth < Self.maxDepth else { throw failure("nesting too deep") }
        skipWhitespace()
        switch peek() {
        case ASCII.leftBrace: return try object(depth: depth)
        case ASCII.leftBracket:
            i += 1
            var items: [PlistValue] = []
            skipWhitespace()
            if peek() == ASCII.rightBracket {
                i += 1
                return .array(items)
            }
            while true {
                items.append(try value(depth: depth + 1))
                skipWhitespace()
                if peek() == ASCII.comma {
                    i += 1
                } else {
                    try expect(ASCII.rightBracket)
                    return .array(items)
                }
            }
        case ASCII.quote: return .string(try string())
        case 0x74 where literal("true"): return .bool(true)
        case 0x66 where literal("false"): return .bool(false)
        case ASCII.minus, ASCII.zero...ASCII.nine: return try number()
        case 0x6E where matchPrefix(p, at: i, "null") == .yes: throw failure("null has no property list type")
        default: throw failure("expected a value")
        }
    }

    /// A top-level object's members and where each value lies (plain JSON only).
    mutating func members() throws -> [(key: String, value: Range<Int>)] {
        skipWhitespace()
        guard peek() == ASCII.leftBrace else { throw failure("expected an object") }
        i += 1
        var members: [(key: String, value: Range<Int>)] = []
        skipWhitespace()
        if peek() == ASCII.rightBrace {
            i += 1
            return members
        }
        while true {
            skipWhitespace()
            let keyOffset = i
            let key = try string()
            try expect(ASCII.colon)
            skipWhitespace()
            let start = i
            _ = try value(depth: 1)
            if members.contains(where: { $0.key == key }) {
                i = keyOffset
                throw failure("duplicate key \"\(key)\"")
            }
            members.append((key, start..<i))
            skipWhitespace()
            if peek() == ASCII.comma {
                i += 1
                continue
            }
            try expect(ASCII.rightBrace)
            return members
        }
    }

    private mutating func object(depth: Int) throws -> PlistValue {
        i += 1
        var dict = OrderedDictionary<String, PlistValue>()
        skipWhitespace()
        if peek() == ASCII.rightBrace {
            i += 1
            return .dict(dict)
        }
        while true {
            skipWhitespace()
            let keyOffset = i
            var key = try string()
            try expect(ASCII.colon)
            if typed, key.hasPrefix("$") {
                guard key.hasPrefix("$$") else {
                    guard dict.isEmpty else {
                        i = keyOffset
                        throw failure("a key starting with a single '$' is reserved for typed values")
                    }
                    let typed = try typedValue(key)
                    try expect(ASCII.rightBrace)
                    return typed
                }
                key.removeFirst()
            }
            guard dict.updateValue(try value(depth: depth + 1), forKey: key) == nil else {
                i = keyOffset
                throw failure("duplicate key")
            }
            skipWhitespace()
            if peek() == ASCII.comma {
                i += 1
                continue
            }
            try expect(ASCII.rightBrace)
            return .dict(dict)
        }
    }

    /// The rest of `{"$date":…}`, `{"$real":…}` or `{"$data":…,"$size":N}` after its first key.
    private mutating func typedValue(_ key: String) throws -> PlistValue {
        skipWhitespace()
        let valueOffset = i
        switch key {
        case "$date":
            var text = try string()
            guard let t = text.withUTF8({ ISO8601.parse($0) }) else {
                i = valueOffset
                throw failure("invalid $date")
            }
            return .date(t)
        case "$real":
            switch try string() {
            case "nan": return .real(.nan)
            case "inf": return .real(.infinity)
            case "-inf": return .real(-.infinity)
            default:
                i = valueOffset
                throw failure("$real must be \"nan\", \"inf\" or \"-inf\"")
            }
        case "$data":
            let sha = try string()
            // The name becomes a file name and a URL (reports, the console): a SHA-256 and nothing else.
            guard BlobName.isValid(sha.utf8) else {
                i = valueOffset
                throw failure("$data must name a blob by its SHA-256 in 64 lower-case hex digits")
            }
            try expect(ASCII.comma)
            skipWhitespace()
            guard try string() == "$size" else { throw failure("expected \"$size\" after \"$data\"") }
            try expect(ASCII.colon)
            skipWhitespace()
            guard case .integer(let size) = try number() else { throw failure("$size must be an integer") }
            let bytes: [UInt8]
            do {
                bytes = try blob(sha)
            } catch is TypedJSON.BlobLeftOut {
                return .dict(["$data": .string(sha), "$size": .integer(size)])
            }
            guard bytes.count == size else {
                throw failure("blob \(sha) has \(bytes.count) bytes, expected \(size)")
            }
            return .data(bytes)
        default:
            throw failure("unknown typed value \(key)")
        }
    }

    private mutating func string() throws -> String {
        guard peek() == ASCII.quote else { throw failure("expected a string") }
        i += 1
        var bytes: [UInt8] = []
        var runStart = i
        while true {
            guard i < p.count else { throw failure("unterminated string") }
            let b = p[i]
            if b == ASCII.quote { break }
            if b < 0x20 { throw failure("control character in a string") }
            if b != ASCII.backslash {
                i += 1
                continue
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<i]))
            i += 1
            let escape = peek()
            i += 1
            switch escape {
            case ASCII.quote, ASCII.backslash, ASCII.slash: bytes.append(escape)
            case 0x62: bytes.append(0x08)
            case 0x66: bytes.append(0x0C)
            case 0x6E: bytes.append(ASCII.newline)
            case 0x72: bytes.append(ASCII.carriageReturn)
            case 0x74: bytes.append(ASCII.tab)
            case 0x75:
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar), literal("\\u") {
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw failure("invalid surrogate pair") }
                    scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                }
                guard !(0xD800..<0xE000).contains(scalar) else { throw failure("lone surrogate") }
                appendUTF8(scalar, to: &bytes)
            default:
                throw failure("invalid escape")
            }
            runStart = i
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<i]))
        i += 1
        guard let text = bytes.withUnsafeBufferPointer({ isValidUTF8($0) ? String(decoding: $0, as: UTF8.self) : nil })
        else { throw failure("string is not valid UTF-8") }
        return text
    }

    private mutating func hex4() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = peek() | 0x20
            let digit: UInt8
            switch b {
            case ASCII.zero...ASCII.nine: digit = b - ASCII.zero
            case 0x61...0x66: digit = b - 0x61 + 10
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            i += 1
        }
        return value
    }

    private mutating func number() throws -> PlistValue {
        let start = i
        var isReal = false
        while i < p.count {
            let b = p[i]
            if b == ASCII.dot || b == 0x65 || b == 0x45 {
                isReal = true
            } else if !(isDigit(b) || b == ASCII.minus || b == ASCII.plus) {
                break
            }
            i += 1
        }
        let token = UnsafeBufferPointer(rebasing: p[start..<i])
        if isReal {
            guard let value = parseReal(token) else {
                i = start
                throw failure("invalid number")
            }
            return .real(value)
        }
        guard let value = parseInteger(token) else {
            i = start
            throw failure("invalid or out-of-range integer")
        }
        return .integer(value)
    }
}
