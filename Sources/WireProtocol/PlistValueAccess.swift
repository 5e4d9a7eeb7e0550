public import MuEvalWire
// Typed access to decoded payloads, shared by the analysis, the live tail and the payload summaries.

/// A `data` value of a payload: the blob it names, not its bytes.
public struct BlobReference: Hashable, Sendable {
    public var name: BlobName
    public var size: Int64

    public init(name: BlobName, size: Int64) {
        self.name = name
        self.size = size
    }

    /// The name as text: 64 lower-case hex digits, safe in a file name or URL.
    public var sha256: String { name.hex }
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

    /// A `data` value as `TypedJSON.decodeLeavingBlobs` leaves it; nil when its name is not a SHA-256
    /// (a crafted file's): such a value is missing, never a file name.
    public var blobReference: BlobReference? {
        guard let sha = self["$data"]?.string, let name = BlobName(sha), case .integer(let size)? = self["$size"] else { return nil }
        return BlobReference(name: name, size: size)
    }
}
