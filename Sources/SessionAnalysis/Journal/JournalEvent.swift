public import MuEvalWire
public import SessionModel
internal import WireProtocol

/// One event with its payload decoded: the dictionary the device sent.
public struct JournalEvent: Sendable {
    public var id: Int64
    public var eventClass: String
    /// Device time, seconds since 1970.
    public var time: Double
    public var payload: PlistValue

    public subscript(key: String) -> PlistValue? { payload[key] }

    /// `type` for most events; sensor events name their `sensor`, custom events their `name`.
    public var type: String? { self["type"]?.string ?? self["sensor"]?.string ?? self["name"]?.string }
    public var view: String? { self["view"]?.string }
}

extension PlistValue {
    /// A frame as the UI state tree gives it (`{x, y, width, height}`), or as `[x, y, width, height]`; nil
    /// when a part is missing or not plausible.
    public var rect: Rect? {
        let parts: (x: Double?, y: Double?, width: Double?, height: Double?)
        if let values = array?.compactMap(\.number), values.count == 4 {
            parts = (values[0], values[1], values[2], values[3])
        } else {
            parts = (self["x"]?.number, self["y"]?.number, self["width"]?.number, self["height"]?.number)
        }
        guard let x = parts.x.flatMap(Plausible.coordinate), let y = parts.y.flatMap(Plausible.coordinate),
              let width = parts.width.flatMap(Plausible.length), let height = parts.height.flatMap(Plausible.length) else { return nil }
        return Rect(x: x, y: y, width: width, height: height)
    }

    /// A point as `[x, y]` (gesture paths); nil when a coordinate is missing or not plausible.
    public var point: Point? {
        guard let values = array?.compactMap(\.number), values.count == 2 else { return nil }
        return Point(at: values[0], values[1])
    }
}
