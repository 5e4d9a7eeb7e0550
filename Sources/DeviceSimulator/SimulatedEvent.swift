public import OrderedCollections
public import WireProtocol

/// An event as the simulated capture library produces it, before it gets its `seq` and wall-clock timestamp.
public struct SimulatedEvent: Sendable, Equatable {
    public var eventClass: EventClass
    /// Seconds since the device's run started, on the simulated clock.
    public var time: Double
    /// Every key but `class`, `timestamp` and `seq`.
    public var fields: OrderedDictionary<String, PlistValue>

    public init(_ eventClass: EventClass, at time: Double, _ fields: OrderedDictionary<String, PlistValue>) {
        self.eventClass = eventClass
        self.time = time
        self.fields = fields
    }

    /// The event's dictionary as it goes on the wire; `timestamp` is a `<real>` for millisecond precision.
    public func wireFields(seq: Int64, epoch: Double) -> OrderedDictionary<String, PlistValue> {
        var dict: OrderedDictionary<String, PlistValue> = [
            "class": .string(eventClass.rawValue),
            "timestamp": .real(((epoch + time) * 1000).rounded() / 1000),
            "seq": .integer(seq),
        ]
        dict.merge(fields) { current, _ in current }
        return dict
    }
}
