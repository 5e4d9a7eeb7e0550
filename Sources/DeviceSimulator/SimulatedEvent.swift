public import MuEvalCapture
public import MuEvalWire
public import OrderedCollections
internal import WireProtocol

/// An event as the simulated app records it, on the simulated clock.
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

    /// The event for the capture library, stamped with the simulated device time (the library writes
    /// it to the millisecond).
    public func captureEvent(epoch: Double) -> CaptureEvent {
        CaptureEvent(eventClass, fields, timestamp: epoch + time)
    }
}
