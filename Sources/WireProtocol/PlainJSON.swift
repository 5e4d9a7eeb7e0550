public import MuEvalWire

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
