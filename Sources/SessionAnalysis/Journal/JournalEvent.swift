import WireProtocol

/// One event with its payload decoded: the dictionary the device sent.
public struct JournalEvent: Sendable {
    public var id: Int64
    public var eventClass: String
    /// Device time, seconds since 1970.
    public var time: Double
    public var payload: PlistValue

    public init(id: Int64, eventClass: String, time: Double, payload: PlistValue) {
        self.id = id
        self.eventClass = eventClass
        self.time = time
        self.payload = payload
    }

    public subscript(key: String) -> PlistValue? { payload[key] }

    /// `type` for most events; sensor events name their `sensor`, custom events their `name`.
    public var type: String? { self["type"]?.string ?? self["sensor"]?.string ?? self["name"]?.string }
    public var view: String? { self["view"]?.string }
}

/// A `data` value of a payload: the blob it names, not its bytes.
public struct BlobReference: Hashable, Sendable {
    public var sha256: String
    public var size: Int64
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

    /// A `data` value as `TypedJSON.decodeLeavingBlobs` leaves it.
    public var blobReference: BlobReference? {
        guard let sha = self["$data"]?.string, case .integer(let size)? = self["$size"] else { return nil }
        return BlobReference(sha256: sha, size: size)
    }

    /// A frame as the UI state tree gives it (`{x, y, width, height}`), or as `[x, y, width, height]`.
    public var rect: Rect? {
        if let values = array?.compactMap(\.number), values.count == 4 {
            return Rect(x: values[0], y: values[1], width: values[2], height: values[3])
        }
        guard let x = self["x"]?.number, let y = self["y"]?.number, let width = self["width"]?.number,
              let height = self["height"]?.number else { return nil }
        return Rect(x: x, y: y, width: width, height: height)
    }

    /// A point as `[x, y]` (gesture paths).
    public var point: Point? {
        guard let values = array?.compactMap(\.number), values.count == 2 else { return nil }
        return Point(x: values[0], y: values[1])
    }
}
