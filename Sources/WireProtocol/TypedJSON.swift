public import MuEvalWire
internal import OrderedCollections

/// The stored form of an event: JSON that keeps every plist type apart.
///
/// - dict → object (keys in document order; a key starting with `$` gets one more `$`), array → array,
///   string → string, integer → integer, true/false → true/false.
/// - real → a number that always has a `.` or an exponent; NaN and infinities → `{"$real":"nan"|"inf"|"-inf"}`.
/// - date → `{"$date":"2011-02-19T22:43:06Z"}` (UTC, fractional seconds only when non-zero, at most six digits).
/// - data → `{"$data":"<sha256 hex>","$size":N}`; the bytes are kept as a `Blob`.
/// - No whitespace.
public enum TypedJSON {
    /// The typed JSON of `value` and the blobs its `data` values refer to (each content once).
    public static func encode(_ value: PlistValue) -> (json: [UInt8], blobs: [Blob]) {
        var writer = TypedJSONWriter()
        value.emit(into: &writer)
        return (writer.json, writer.blobs)
    }

    /// Reads typed JSON back into a value; `blob` returns the bytes of a `$data` SHA-256.
    ///
    /// Hand-written rather than Foundation's JSONSerialization, which does not keep `1` and `1.0` apart.
    public static func decode(_ json: some Collection<UInt8>, blob: (String) throws -> [UInt8]) throws -> PlistValue {
        if let value = try json.withContiguousStorageIfAvailable({ try decode(buffer: $0, blob: blob) }) {
            return value
        }
        return try Array(json).withUnsafeBufferPointer { try decode(buffer: $0, blob: blob) }
    }

    /// Reads typed JSON back without loading blobs: a `data` value stays the dictionary that names it,
    /// `["$data": sha256, "$size": N]`. For readers (analysis) that need to know which blob, not its bytes.
    public static func decodeLeavingBlobs(_ json: some Collection<UInt8>) throws -> PlistValue {
        try decode(json, blob: { _ in throw BlobLeftOut() })
    }

    /// The SHA-256 names of the blobs a typed JSON payload refers to, in order of first mention:
    /// `{"$data":"<sha>"` appears nowhere else, since a key of the event's own that starts with `$`
    /// is stored with one more. A byte scan, without decoding (imports, replication). A mention whose
    /// name is not 64 lower-case hex digits (a crafted file's) names no blob and is left out.
    public static func blobReferences(in json: UnsafeBufferPointer<UInt8>) -> [String] {
        let marker = Array(#"{"$data":""#.utf8)
        var found: [String] = []
        var index = 0
        while index + marker.count + 64 < json.count {
            if json[index] == marker[0], zip(marker.indices, marker).allSatisfy({ json[index + $0] == $1 }) {
                let start = index + marker.count
                let name = UnsafeBufferPointer(rebasing: json[start..<(start + 64)])
                if json[start + 64] == ASCII.quote, BlobName.isValid(name) {
                    let text = String(decoding: name, as: UTF8.self)
                    if !found.contains(text) { found.append(text) }
                }
                index = start
            } else {
                index += 1
            }
        }
        return found
    }

    /// Thrown by `decodeLeavingBlobs`'s blob function; the reader answers it with the `$data` dictionary.
    struct BlobLeftOut: Error {}

    private static func decode(buffer: UnsafeBufferPointer<UInt8>, blob: (String) throws -> [UInt8]) throws -> PlistValue {
        try withoutActuallyEscaping(blob) { blob in
            var reader = JSONValueReader(buffer, typed: true, blob: blob)
            let value = try reader.value(depth: 0)
            reader.skipWhitespace()
            guard reader.atEnd else { throw reader.failure("unexpected content after the value") }
            return value
        }
    }
}

/// Why typed JSON could not be read back.
public struct TypedJSONError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// Byte offset in the JSON where reading stopped.
    public var offset: Int

    public var description: String { "typed JSON, byte \(offset): \(message)" }
}

/// Standard JSON (RFC 8259) read into property list values, for files other programs wrote (an
/// import's IMUT log, the lines of a jsonl export): objects become dicts with their keys in order, a
/// number with a `.` or an exponent a real, any other an integer. `$` keys are ordinary keys here.
/// The same reader as typed JSON's, whose byte offsets in errors let an import say where a file breaks.
public enum PlainJSON {
    /// The value of `json`, which must hold exactly one. `null` has no property list type: refused.
    public static func decode(_ json: UnsafeBufferPointer<UInt8>) throws(TypedJSONError) -> PlistValue {
        try reading(json) { reader in
            let value = try reader.value(depth: 0)
            reader.skipWhitespace()
            guard reader.atEnd else { throw reader.failure("unexpected content after the value") }
            return value
        }
    }

    /// The members of the object `json` holds, each with the byte range of its value, checked as JSON
    /// but not decoded: so that a caller can keep one value's bytes as they are (a typed JSON payload).
    public static func members(_ json: UnsafeBufferPointer<UInt8>) throws(TypedJSONError) -> [(key: String, value: Range<Int>)] {
        try reading(json) { reader in
            let members = try reader.members()
            reader.skipWhitespace()
            guard reader.atEnd else { throw reader.failure("unexpected content after the object") }
            return members
        }
    }

    /// Plain JSON names no blobs, so the reader's only errors are its own.
    private static func reading<T>(_ json: UnsafeBufferPointer<UInt8>, _ body: (inout JSONValueReader) throws -> T) throws(TypedJSONError) -> T {
        var reader = JSONValueReader(json, typed: false, blob: { _ in [] })
        do {
            return try body(&reader)
        } catch let error as TypedJSONError {
            throw error
        } catch {
            throw reader.failure("\(error)")
        }
    }
}

/// Reads JSON into `PlistValue`s: typed JSON (exactly the format `TypedJSONWriter` produces, and JSON
/// whitespace) or, with `typed` false, plain JSON, where `$` keys mean nothing.
private struct JSONValueReader {
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
