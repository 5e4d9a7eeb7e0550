public import MuEvalWire
public import SessionModel
internal import WireProtocol

/// One record to be written: a decoded wire event or media chunk, plus what the server knows about its arrival.
public struct JournalRecord: Sendable {
    public enum Content: Sendable {
        /// A row of `events` (and its `data` values in `blobs`).
        case event(WireEvent)
        /// A row of `media`.
        case media(WireMedia)
    }

    public var device: String
    public var received: Double
    public var content: Content
    /// Opaque id of the connection that sent it, so the commit can be acknowledged to it.
    public var origin: UInt64

    public init(device: String, received: Double, event: WireEvent, origin: UInt64) {
        self.init(device: device, received: received, content: .event(event), origin: origin)
    }

    public init(device: String, received: Double, content: Content, origin: UInt64) {
        self.device = device
        self.received = received
        self.content = content
        self.origin = origin
    }

    /// The record's `seq`: events and media chunks share the device's one sequence.
    public var seq: Int64? {
        switch content {
        case .event(let event): event.seq
        case .media(let media): media.seq
        }
    }

    /// The event, for a record that is one.
    public var event: WireEvent? {
        if case .event(let event) = content { return event }
        return nil
    }

    /// The event as a row of `events` once stored under `id` (what readers and the live tail see);
    /// nil for a media chunk.
    public func stored(as id: Int64) -> StoredEvent? {
        guard case .event(let event) = content else { return nil }
        return StoredEvent(id: id, device: device, seq: event.seq, eventClass: event.eventClass,
                           timestamp: event.timestamp ?? received, timestampEstimated: event.timestamp == nil,
                           received: received, payload: String(decoding: event.payload, as: UTF8.self))
    }

    /// Bytes this record holds in memory, for the writer's backpressure accounting.
    package var footprint: Int {
        switch content {
        case .event(let event):
            var total = 128 + event.payload.count + event.eventClass.utf8.count + device.utf8.count
            for blob in event.blobs { total += blob.bytes.count + 64 }
            return total
        case .media(let media):
            return 128 + media.bytes.count + media.stream.utf8.count + device.utf8.count
        }
    }
}
