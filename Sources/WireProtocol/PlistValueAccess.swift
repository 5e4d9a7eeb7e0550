// Typed access to decoded payloads, shared by the analysis, the live tail and the payload summaries.

/// A `data` value of a payload: the blob it names, not its bytes.
public struct BlobReference: Hashable, Sendable {
    public var sha256: String
    public var size: Int64

    public init(sha256: String, size: Int64) {
        self.sha256 = sha256
        self.size = size
    }
}

extension PlistValue {
    public subscript(key: String) -> PlistValue? {
        if case .dict(let dict) = self { return dict[key] }
        return nil
    }

    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// Integers and reals alike: capture libraries send coordinates either way.
    public var number: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var array: [PlistValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The keys under which a UserInterfaceEvent carries the screen's picture (docs/REPORTS.md).
    public static let screenshotKeys = ["screenshot", "image"]

    /// The screenshot a payload carries, as a blob reference.
    public var screenshot: BlobReference? {
        Self.screenshotKeys.lazy.compactMap { self[$0]?.blobReference }.first
    }

    /// A `data` value as `TypedJSON.decodeLeavingBlobs` leaves it.
    public var blobReference: BlobReference? {
        guard let sha = self["$data"]?.string, case .integer(let size)? = self["$size"] else { return nil }
        return BlobReference(sha256: sha, size: size)
    }
}
