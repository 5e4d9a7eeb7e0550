internal import Crypto
internal import MuEvalWire
internal import SessionModel

/// Writes typed JSON (see `TypedJSON`) as sink calls arrive, collecting `data` values as blobs.
struct TypedJSONWriter: PlistSink {
    private(set) var json: [UInt8] = []
    private(set) var blobs: [Blob] = []

    init() {}

    /// Writes into `buffer`'s storage (emptied first), so that its capacity is reused; `buffer` is
    /// left empty, so that the writer owns the storage alone and emptying it does not copy it.
    init(reusing buffer: inout [UInt8]) {
        swap(&json, &buffer)
        json.removeAll(keepingCapacity: true)
    }

    /// The buffer, emptied, for the next writer; released instead when it grew past `limit` bytes.
    mutating func emptied(keepingAtMost limit: Int) -> [UInt8] {
        if json.capacity > limit { return [] }
        json.removeAll(keepingCapacity: true)
        return json
    }

    /// Separates from the previous value unless this is the first item of a container or a dict value.
    @inline(__always)
    private mutating func separate() {
        if let last = json.last, last != ASCII.leftBrace, last != ASCII.leftBracket, last != ASCII.colon {
            json.append(ASCII.comma)
        }
    }

    private mutating func append(_ literal: StaticString) {
        json.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    mutating func beginDict() { separate(); json.append(ASCII.leftBrace) }
    mutating func endDict() { json.append(ASCII.rightBrace) }
    mutating func beginArray() { separate(); json.append(ASCII.leftBracket) }
    mutating func endArray() { json.append(ASCII.rightBracket) }

    mutating func key(_ utf8: UnsafeBufferPointer<UInt8>) {
        separate()
        // Keys starting with `$` get one more, so a single `$` always marks a typed value.
        writeString(utf8, extraDollar: utf8.first == ASCII.dollar)
        json.append(ASCII.colon)
    }

    mutating func string(_ utf8: UnsafeBufferPointer<UInt8>) {
        separate()
        writeString(utf8, extraDollar: false)
    }

    mutating func integer(_ value: Int64) {
        separate()
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = ASCII.zero + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { json.append(ASCII.minus) }
            json.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    mutating func real(_ value: Double) {
        separate()
        if value.isNaN {
            append(#"{"$real":"nan"}"#)
        } else if value.isInfinite {
            append(value > 0 ? #"{"$real":"inf"}"# : #"{"$real":"-inf"}"#)
        } else {
            WireEncoder.writeReal(value, into: &json)
        }
    }

    mutating func bool(_ value: Bool) {
        separate()
        append(value ? "true" : "false")
    }

    mutating func date(_ secondsSince1970: Double) {
        separate()
        append(#"{"$date":""#)
        ISO8601.format(secondsSince1970, into: &json)
        append(#""}"#)
    }

    mutating func data(_ bytes: [UInt8]) {
        separate()
        let hex = sha256Hex(bytes)
        append(#"{"$data":""#)
        json.append(contentsOf: hex.utf8)
        append(#"","$size":"#)
        json.append(contentsOf: String(bytes.count).utf8)
        json.append(ASCII.rightBrace)
        if !blobs.contains(where: { $0.sha256 == hex }) {
            blobs.append(Blob(sha256: hex, bytes: bytes))
        }
    }

    /// Keys starting with `$` get one more, so that a single `$` always marks a typed value.
    private mutating func writeString(_ utf8: UnsafeBufferPointer<UInt8>, extraDollar: Bool) {
        json.append(ASCII.quote)
        if extraDollar { json.append(ASCII.dollar) }
        JSONString.appendEscaped(utf8, to: &json, scriptSafe: false)
        json.append(ASCII.quote)
    }
}

/// Lower-case hex SHA-256, the name of a blob.
func sha256Hex(_ bytes: [UInt8]) -> String {
    lowercaseHex(SHA256.hash(data: bytes))
}
