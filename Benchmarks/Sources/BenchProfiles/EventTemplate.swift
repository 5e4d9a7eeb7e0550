/// One encoded event with a hole where its `seq` goes, so that a load generator writes millions of
/// distinct events by copying bytes instead of encoding each one.
///
/// A screenshot event also has `uniqueAt`: eight base64 characters inside its `<data>` that are
/// overwritten per copy. Without it every copy would have the same SHA-256 and the server would store
/// the blob once (docs/STORAGE.md), which flatters storage far beyond any real session.
public struct EventTemplate: Sendable {
    /// Everything up to and including the `<integer>` after `<key>seq</key>`.
    public let head: [UInt8]
    /// Everything from `</integer>` on.
    public let tail: [UInt8]
    /// Offset in `tail` of eight base64 characters to make unique, for screenshots.
    public let uniqueAt: Int?

    /// Splits `bytes`, an event encoded with `seq`, at the digits of its seq element. `unique: false` leaves
    /// its data as it is (a profile whose screenshots differ already, and must stay valid PNGs).
    public init(bytes: [UInt8], seq: Int64, unique: Bool = true) {
        let digits = Array(String(seq).utf8)
        guard let key = bytes.firstRange(of: Array("<key>seq</key>".utf8)),
              let integer = bytes[key.upperBound...].firstRange(of: Array("<integer>".utf8)),
              bytes[integer.upperBound...].starts(with: digits) else {
            preconditionFailure("event template without <key>seq</key> <integer>\(seq)</integer>")
        }
        head = Array(bytes[..<integer.upperBound])
        tail = Array(bytes[(integer.upperBound + digits.count)...])
        uniqueAt = unique ? Self.base64Run(in: tail) : nil
    }

    /// Bytes of one copy, without its seq digits.
    public var size: Int { head.count + tail.count }

    /// Appends the event with `seq` to `out`.
    public func write(seq: Int64, into out: inout [UInt8]) {
        out.append(contentsOf: head)
        appendDecimal(seq, to: &out)
        guard let uniqueAt else {
            out.append(contentsOf: tail)
            return
        }
        out.append(contentsOf: tail[..<uniqueAt])
        // The seq is unique in the session, so it makes the blob unique: 48 bits, 6 per character.
        for shift in stride(from: 42, through: 0, by: -6) {
            out.append(Self.alphabet[Int((UInt64(bitPattern: seq) >> UInt64(shift)) & 63)])
        }
        out.append(contentsOf: tail[(uniqueAt + 8)...])
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Eight base64 characters well inside the first `<data>` element (away from its padding), if any.
    private static func base64Run(in bytes: [UInt8]) -> Int? {
        guard let open = bytes.firstRange(of: Array("<data>".utf8))?.upperBound,
              let close = bytes[open...].firstRange(of: Array("</data>".utf8))?.lowerBound,
              close - open > 64 else { return nil }
        let candidate = open + (close - open) / 2 / 4 * 4
        return bytes[candidate..<(candidate + 8)].allSatisfy(alphabet.contains) ? candidate : nil
    }
}

/// Appends the decimal digits of `value` without going through String.
@inline(__always)
func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
    var magnitude = value.magnitude
    if value < 0 { out.append(UInt8(ascii: "-")) }
    var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                 UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    var count = 0
    withUnsafeMutableBytes(of: &digits) { buffer in
        repeat {
            buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            count += 1
        } while magnitude > 0
        out.append(contentsOf: buffer[(20 - count)...])
    }
}
