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

/// One message on the wire, in either direction.
public enum WireMessage: Sendable, Equatable {
    // Device to server.
    /// Boxed: it is rare and large, and keeps every other message small to move around.
    indirect case hello(DeviceHello)
    case event(WireEvent)
    /// A chunk of think-aloud audio or face video.
    case media(WireMedia)
    case goodbye
    // Server to device.
    case welcome(Welcome)
    case ack(seq: Int64)
    case error(WireReplyError)
}

/// What a device says about itself in `<hello>`; only `deviceId` is required.
public struct DeviceHello: Sendable, Equatable {
    public var deviceId: String
    public var protocolVersion: Int64?
    public var deviceName: String?
    public var model: String?
    public var systemVersion: String?
    public var appId: String?
    public var appVersion: String?
    public var screenWidth: Double?
    public var screenHeight: Double?
    public var screenScale: Double?
    /// The server's device token, when the server asks for one (a device from before `pairing`
    /// sends a session's pairing code here; a server without a device token still takes it).
    public var token: String?
    /// A session's pairing code (`muevalctl start --pairing-code`).
    public var pairing: String?

    public init(deviceId: String, protocolVersion: Int64? = nil, deviceName: String? = nil, model: String? = nil,
                systemVersion: String? = nil, appId: String? = nil, appVersion: String? = nil,
                screenWidth: Double? = nil, screenHeight: Double? = nil, screenScale: Double? = nil, token: String? = nil,
                pairing: String? = nil) {
        self.deviceId = deviceId
        self.protocolVersion = protocolVersion
        self.deviceName = deviceName
        self.model = model
        self.systemVersion = systemVersion
        self.appId = appId
        self.appVersion = appVersion
        self.screenWidth = screenWidth
        self.screenHeight = screenHeight
        self.screenScale = screenScale
        self.token = token
        self.pairing = pairing
    }
}

/// A decoded event, ready to be stored: the indexed fields plus the whole event as typed JSON.
public struct WireEvent: Sendable, Equatable {
    /// The `class` value (required).
    public var eventClass: String
    /// Device time in seconds since 1970, from a `date` or `real` `timestamp`; nil when the device sent none.
    public var timestamp: Double?
    /// The optional per-device sequence number, for acknowledgement and de-duplication.
    public var seq: Int64?
    /// The `sensor` value when it is a string, for the session's sensor selection.
    public var sensor: String?
    /// The whole event dictionary as typed JSON (UTF-8), see docs/STORAGE.md.
    public var payload: [UInt8]
    /// Every `data` value of the event, referenced from `payload` by its SHA-256.
    public var blobs: [Blob]

    public init(eventClass: String, timestamp: Double?, seq: Int64?, sensor: String?, payload: [UInt8], blobs: [Blob]) {
        self.eventClass = eventClass
        self.timestamp = timestamp
        self.seq = seq
        self.sensor = sensor
        self.payload = payload
        self.blobs = blobs
    }
}

/// Binary content, stored once per content in a session file.
public struct Blob: Sendable, Hashable {
    /// Lower-case hex SHA-256 of `bytes`.
    public var sha256: String
    public var bytes: [UInt8]

    public init(sha256: String, bytes: [UInt8]) {
        self.sha256 = sha256
        self.bytes = bytes
    }
}

/// The server's answer to `<hello>`.
public struct Welcome: Sendable, Equatable {
    public var sessionId: String
    /// Event classes or sensor names the session records; empty means everything.
    public var sensors: [String]

    public init(sessionId: String, sensors: [String]) {
        self.sessionId = sessionId
        self.sensors = sensors
    }
}

/// The server's `<error>` reply to a rejected message.
public struct WireReplyError: Sendable, Equatable {
    public var reason: String
    /// The refused event's seq; for a range of events, the last.
    public var seq: Int64?
    /// For a range of refused events (a commit that failed), the first seq: every event of the
    /// connection from `fromSeq` through `seq` was refused, whatever a later `<ack>` covers.
    public var fromSeq: Int64?

    public init(reason: String, seq: Int64? = nil, fromSeq: Int64? = nil) {
        self.reason = reason
        self.seq = seq
        self.fromSeq = fromSeq
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
