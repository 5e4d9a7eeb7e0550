/// The name of a blob (a `data` value: a screenshot): the lower-case hex SHA-256 of its bytes, exactly
/// 64 characters of `0-9a-f`. Names read from a session file, an import or PostgreSQL become file
/// names (`shots/NAME.png`) and URLs (`blobs/NAME`); only a name of this shape gets that far, so that
/// none can say `../` or `"` (docs/SECURITY.md).
public struct BlobName: Hashable, Sendable, CustomStringConvertible {
    public let hex: String

    /// Nil unless `text` is 64 lower-case hex digits.
    public init?(_ text: some StringProtocol) {
        guard Self.isValid(text.utf8) else { return nil }
        hex = String(text)
    }

    /// The name of `bytes`.
    public init(of bytes: [UInt8]) {
        hex = sha256Hex(bytes)
    }

    public static func isValid(_ utf8: some Collection<UInt8>) -> Bool {
        utf8.count == 64 && utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    public var description: String { hex }
}
