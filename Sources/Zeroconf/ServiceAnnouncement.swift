internal import MuEvalWire

/// What the capture server announces: one name, one port, one TXT record, under one or more types.
public struct ServiceAnnouncement: Sendable, Equatable {
    /// The service type the capture library browses for (seed 000, section 4.2.1). At 25
    /// characters it is longer than the 15 that RFC 6763 §7.2 allows; Avahi and Bonjour accept
    /// it, strict DNS-SD libraries may not (configure a short alias in `zeroconf.types`).
    public static let captureServiceType = CaptureService.type

    /// The instance name; Avahi may pick an alternative when another host uses it.
    public var name: String
    /// Service types, the first being the primary one.
    public var types: [String]
    public var port: UInt16
    /// TXT record entries, `key=value`, in order.
    public var txt: [(key: String, value: String)]

    public init(name: String, types: [String], port: UInt16, txt: [(key: String, value: String)]) {
        self.name = name
        self.types = types
        self.port = port
        self.txt = txt
    }

    public static func == (lhs: ServiceAnnouncement, rhs: ServiceAnnouncement) -> Bool {
        lhs.name == rhs.name && lhs.types == rhs.types && lhs.port == rhs.port
            && lhs.txt.map { "\($0.key)=\($0.value)" } == rhs.txt.map { "\($0.key)=\($0.value)" }
    }
}

/// Where an announcement stands, for logs and `muevalctl status`.
public enum AnnouncementState: Sendable, Equatable, CustomStringConvertible {
    case starting
    /// avahi-daemon is not running (or went away); the publisher announces as soon as it is back.
    case waitingForAvahi
    case registering(name: String)
    case announced(name: String)
    case failed(reason: String)
    case withdrawn

    public var description: String {
        switch self {
        case .starting: "starting"
        case .waitingForAvahi: "waiting for avahi-daemon"
        case .registering(let name): "registering \"\(name)\""
        case .announced(let name): "announced as \"\(name)\""
        case .failed(let reason): "failed: \(reason)"
        case .withdrawn: "withdrawn"
        }
    }

    /// The name on the network, once announced.
    public var announcedName: String? {
        if case .announced(let name) = self { name } else { nil }
    }
}
