public import MuEvalWire

/// Where an evaluation session is in its life.
public enum SessionState: String, Codable, Sendable, CaseIterable {
    /// Started by the developer; no device has connected yet.
    case waiting
    /// A device is streaming events into it.
    case recording
    /// Was recording when the daemon went down, or its device disconnected; records again when the device reconnects.
    case interrupted
    /// Finished by the developer (or by the end of an `auto` session's connection); its file is final.
    case stopped

    /// Whether the session still accepts events.
    public var isOpen: Bool { self != .stopped }
}

/// What the catalog and the session file know about one evaluation session (one test user, one device).
public struct SessionRecord: Codable, Sendable, Equatable {
    public var id: Int64
    /// Unique across machines, so that copied session files never clash.
    public var uuid: String
    public var name: String
    public var testUser: String?
    public var notes: String?
    /// Event classes or sensor names to record; empty records everything.
    public var sensors: [String]
    /// The device id given at start; nil lets the next device that connects claim the session.
    public var boundDevice: String?
    /// The device recording into the session, once one has connected.
    public var device: String?
    public var state: SessionState
    /// When the developer started the session (seconds since 1970).
    public var created: Double
    /// When its device first connected.
    public var started: Double?
    public var stopped: Double?
    /// The session's SQLite file.
    public var path: String
    /// Events stored.
    public var events: Int64
    /// Events not stored because the session did not select their sensor.
    public var filtered: Int64
    /// Events received again with a (device, seq) already stored.
    public var duplicates: Int64
    /// The code a device must present in `<hello>` to record into this session. Kept in the
    /// catalog only, never in the session file that travels with bug reports.
    public var pairingCode: String?
    /// The study, iteration and participant the session records, when it is part of a study (docs/STUDIES.md).
    public var study: String?
    public var iteration: Int?
    public var participant: String?
    /// The files the session was imported from (`muevalctl import`); nil for a session recorded live.
    public var imports: [SessionImportRecord]?

    public init(id: Int64, uuid: String, name: String, testUser: String? = nil, notes: String? = nil,
                sensors: [String] = [], boundDevice: String? = nil, device: String? = nil,
                state: SessionState = .waiting, created: Double, started: Double? = nil, stopped: Double? = nil,
                path: String, events: Int64 = 0, filtered: Int64 = 0, duplicates: Int64 = 0, pairingCode: String? = nil,
                assignment: StudyAssignment? = nil) {
        self.id = id
        self.uuid = uuid
        self.name = name
        self.testUser = testUser
        self.notes = notes
        self.sensors = sensors
        self.boundDevice = boundDevice
        self.device = device
        self.state = state
        self.created = created
        self.started = started
        self.stopped = stopped
        self.path = path
        self.events = events
        self.filtered = filtered
        self.duplicates = duplicates
        self.pairingCode = pairingCode
        self.assignment = assignment
    }

    /// The study, iteration and participant together, when all three are set.
    public var assignment: StudyAssignment? {
        get {
            guard let study, let iteration, let participant else { return nil }
            return StudyAssignment(study: study, iteration: iteration, participant: participant)
        }
        set {
            study = newValue?.study
            iteration = newValue?.iteration
            participant = newValue?.participant
        }
    }
}

/// A device as it introduced itself, and where it was last seen. Its description's fields are stored beside
/// `id` (flat in JSON, as columns in the `devices` table).
public struct DeviceRecord: DeviceDescribing, Codable, Sendable, Equatable {
    public var id: String
    /// What its last hello said about it.
    public var device: DeviceDescription
    public var address: String?
    public var firstSeen: Double
    /// When it last connected or disconnected.
    public var lastSeen: Double
    /// Whether it records into a session now: set in muevald's device list (`muevalctl devices`);
    /// nil where it is not known (session files, the catalog's table).
    public var connected: Bool?

    public init(id: String, device: DeviceDescription = DeviceDescription(), address: String? = nil, firstSeen: Double,
                lastSeen: Double, connected: Bool? = nil) {
        self.id = id
        self.device = device
        self.address = address
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.connected = connected
    }

    private enum CodingKeys: String, CodingKey {
        case id, address, firstSeen, lastSeen, connected
    }

    /// The description's keys sit in the record's own object, as they did before it had one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try container.decode(String.self, forKey: .id), device: try DeviceDescription(from: decoder),
                  address: try container.decodeIfPresent(String.self, forKey: .address),
                  firstSeen: try container.decode(Double.self, forKey: .firstSeen),
                  lastSeen: try container.decode(Double.self, forKey: .lastSeen),
                  connected: try container.decodeIfPresent(Bool.self, forKey: .connected))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try device.encode(to: encoder)
        try container.encodeIfPresent(address, forKey: .address)
        try container.encode(firstSeen, forKey: .firstSeen)
        try container.encode(lastSeen, forKey: .lastSeen)
        try container.encodeIfPresent(connected, forKey: .connected)
    }
}

/// A time during which a recording session could not record (the daemon was down, the device was away).
public struct SessionGap: Codable, Sendable, Equatable {
    public var start: Double
    public var end: Double?
    public var reason: String

    public init(start: Double, end: Double?, reason: String) {
        self.start = start
        self.end = end
        self.reason = reason
    }
}

/// One event as stored in a session file's `events` table.
public struct StoredEvent: Codable, Sendable, Equatable {
    /// Storage order within the session.
    public var id: Int64
    public var device: String
    public var seq: Int64?
    public var eventClass: String
    /// Device time, or the receive time when the device sent none (then `timestampEstimated`).
    public var timestamp: Double
    public var timestampEstimated: Bool
    public var received: Double
    /// The whole event as typed JSON (docs/STORAGE.md).
    public var payload: String

    public init(id: Int64, device: String, seq: Int64?, eventClass: String, timestamp: Double,
                timestampEstimated: Bool, received: Double, payload: String) {
        self.id = id
        self.device = device
        self.seq = seq
        self.eventClass = eventClass
        self.timestamp = timestamp
        self.timestampEstimated = timestampEstimated
        self.received = received
        self.payload = payload
    }
}
