public import MuEvalWire

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
