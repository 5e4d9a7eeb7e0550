public import WireProtocol

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

extension PlistValue {
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
