internal import OrderedCollections

/// The messages of the wire protocol (docs/PROTOCOL.md): what a device sends and what the server replies.

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
public struct DeviceHello: DeviceDescribing, Sendable, Equatable {
    public var deviceId: String
    public var protocolVersion: Int64?
    public var device: DeviceDescription
    /// The server's device token, when the server asks for one (a device from before `pairing`
    /// sends a session's pairing code here; a server without a device token still takes it).
    public var token: String?
    /// A session's pairing code (`muevalctl start --pairing-code`).
    public var pairing: String?
    /// A study invitation's code (`/i/CODE`): the server opens, or reopens for this device, the
    /// invited participant's session.
    public var invitation: String?

    public init(deviceId: String, protocolVersion: Int64? = nil, device: DeviceDescription = DeviceDescription(),
                token: String? = nil, pairing: String? = nil, invitation: String? = nil) {
        self.deviceId = deviceId
        self.protocolVersion = protocolVersion
        self.device = device
        self.token = token
        self.pairing = pairing
        self.invitation = invitation
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
    /// A study session's tasks, in the order the participant does them; empty outside a study.
    public var tasks: [WelcomeTask]
    /// Where the participant answers the study's questionnaire on the phone (the console's
    /// invitation page), for an invited session when the console is on.
    public var questionnaire: String?

    public init(sessionId: String, sensors: [String], tasks: [WelcomeTask] = [], questionnaire: String? = nil) {
        self.sessionId = sessionId
        self.sensors = sensors
        self.tasks = tasks
        self.questionnaire = questionnaire
    }
}

/// One of a study's tasks as `<welcome>` tells it to the participant's phone.
public struct WelcomeTask: Sendable, Equatable {
    /// The task's name: what the app's and the tester's task marks name.
    public var name: String
    /// What the participant is told.
    public var instructions: String?
    /// Seconds after which an attempt counts as failed, when set.
    public var timeLimit: Double?
    /// 1, 2, 3… in the order the participant does them.
    public var order: Int64

    public init(name: String, instructions: String? = nil, timeLimit: Double? = nil, order: Int64) {
        self.name = name
        self.instructions = instructions
        self.timeLimit = timeLimit
        self.order = order
    }

    /// The `<dict>` of `<welcome>`'s `tasks` array.
    public var plist: PlistValue {
        var dict: OrderedDictionary<String, PlistValue> = ["name": .string(name)]
        dict["instructions"] = instructions.map(PlistValue.string)
        dict["timeLimit"] = timeLimit.map(PlistValue.real)
        dict["order"] = .integer(order)
        return .dict(dict)
    }

    /// Reads one `tasks` entry; nil unless it is a `<dict>` with a non-empty `name` string, an `order`
    /// integer, and, when present, an `instructions` string and a finite, non-negative `timeLimit`
    /// number. Unknown keys are ignored, so the server can add fields.
    public init?(plist: PlistValue) {
        guard case .dict(let dict) = plist, case .string(let name)? = dict["name"], !name.isEmpty,
              case .integer(let order)? = dict["order"] else { return nil }
        var instructions: String?
        switch dict["instructions"] {
        case nil: break
        case .string(let text)?: instructions = text
        default: return nil
        }
        var timeLimit: Double?
        switch dict["timeLimit"] {
        case nil: break
        case .real(let seconds)? where seconds.isFinite && seconds >= 0: timeLimit = seconds
        case .integer(let seconds)? where seconds >= 0: timeLimit = Double(seconds)
        default: return nil
        }
        self.init(name: name, instructions: instructions, timeLimit: timeLimit, order: order)
    }

    /// `<welcome>`'s `tasks` value: none when absent, nil when it or any entry does not read.
    public static func list(_ value: PlistValue?) -> [WelcomeTask]? {
        guard let value else { return [] }
        guard case .array(let items) = value else { return nil }
        var tasks: [WelcomeTask] = []
        for item in items {
            guard let task = WelcomeTask(plist: item) else { return nil }
            tasks.append(task)
        }
        return tasks
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
