public import MuEvalWire
public import OrderedCollections

/// Limits the decoder enforces on every message; both are configurable in muevald.
public struct WireLimits: Sendable, Equatable {
    /// Largest message accepted, in bytes, from its `<` to its closing `>` (16 MiB: a screenshot fits).
    public var maxMessageBytes: Int
    /// Deepest nesting of values: an `<event>` with a flat key/value list has depth 1; each `<dict>`/`<array>` adds one.
    public var maxDepth: Int
    /// Largest `<data>` of one `<media>` chunk, decoded (2 MiB: a second of phone video fits many times).
    public var maxMediaChunkBytes: Int
    /// An event or media chunk with a value outside these is refused (docs/PROTOCOL.md, "Value ranges").
    public var valueRanges: ValueRanges

    public init(maxMessageBytes: Int = 16 << 20, maxDepth: Int = 64, maxMediaChunkBytes: Int = 2 << 20,
                valueRanges: ValueRanges = .default) {
        self.maxMessageBytes = maxMessageBytes
        self.maxDepth = maxDepth
        self.maxMediaChunkBytes = maxMediaChunkBytes
        self.valueRanges = valueRanges
    }
}

extension WireEvent {
    /// The event a dict makes, as if a device had sent it: `class` (a string, required), `timestamp`
    /// (a date, or a real or integer of seconds since 1970), `seq` (an integer) and `sensor` read as
    /// the wire decoder reads them, every value in its range (`ranges`), the whole dict as typed JSON.
    /// How an import stores the records it reads (an exported plist's events, IMUT and GPX records
    /// turned into events).
    public init(fields: OrderedDictionary<String, PlistValue>, ranges: ValueRanges = .default) throws(WireError) {
        guard let classValue = fields["class"] else {
            throw WireError(.missingClass, "the event has no \"class\"")
        }
        guard case .string(let eventClass) = classValue else {
            throw WireError(.invalidValue, "\"class\" must be a string")
        }
        var timestamp: Double?
        switch fields["timestamp"] {
        case nil: timestamp = nil
        case .date(let time)?: timestamp = time
        case .real(let time)? where time.isFinite: timestamp = time
        case .integer(let time)?: timestamp = Double(time)
        default: throw WireError(.invalidValue, "\"timestamp\" must be a date or a number of seconds since 1970")
        }
        var seq: Int64?
        switch fields["seq"] {
        case nil: seq = nil
        case .integer(let value)?: seq = value
        default: throw WireError(.invalidValue, "\"seq\" must be an integer")
        }
        var sensor: String?
        if case .string(let name)? = fields["sensor"] { sensor = name }
        if let problem = ranges.problem(inEvent: fields) { throw WireError(.invalidValue, problem.description, seq: seq) }
        let (json, blobs) = TypedJSON.encode(.dict(fields))
        self.init(eventClass: eventClass, timestamp: timestamp, seq: seq, sensor: sensor, payload: json, blobs: blobs)
    }
}
