public import MuEvalWire
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// How `startCapture` finds the server, who the device says it is, and the limits of its delivery.
/// Every field has a default: `CaptureManager.shared.startCapture()` finds the one capture server on
/// the network and records as this machine.
public struct CaptureConfiguration: Sendable {
    public enum Server: Sendable, Equatable {
        /// Browse `_muEvaluationFramework-capture._tcp` before every connection attempt (a restarted
        /// server may have moved): the server of that name, or the one usable server (`ServerDiscovery`).
        case discover(name: String? = nil)
        case address(ServerAddress)
    }

    public var server = Server.discover()
    /// What `<hello>` says: the device id (stable across launches: the spool and `muevalctl start
    /// --device` go by it), its name, model, system, the app and the screen.
    public var device: DeviceHello
    /// The server's device token, or (to a server without one) a session's pairing code (docs/SECURITY.md).
    public var token: String?
    /// A session's pairing code, sent as `pairing`: with a device token, a paired session needs both.
    public var pairingCode: String?
    /// A study invitation's code (the tester's link `/i/CODE`), sent as `invitation`: the server records this
    /// device into the invited tester's session of the study and sends its tasks (`CaptureManager.studyTasks`).
    public var invitation: String?
    /// Where unsettled messages are kept across launches; nil: in memory only.
    public var spoolDirectory: String?
    public var limits = DeliveryStateMachine.Limits()
    /// The first seq of this launch. nil: microseconds since 1970, so that a relaunch into the same
    /// session never reuses a seq the server would take for a duplicate (a spool's backlog continues
    /// its own numbering after that).
    public var firstSeq: Int64?
    /// Seconds for one TCP (and TLS) connection attempt, and for one Zeroconf browse.
    public var connectTimeout = 5.0
    public var browseTimeout = 3.0
    /// How long `stopCapture` waits for the last acknowledgements.
    public var stopTimeout = 10.0
    /// TLS, when the server announces it (TXT `tls=1`) or `requireTLS`.
    public var security: (any ConnectionSecurity)?
    public var requireTLS = false
    /// Browses for servers where the system has no built-in browser (Apple platforms).
    public var browser: (any ServiceBrowser)?
    /// Platform sensors, switched on and off by the session's selection.
    public var sensors: [any CaptureSensor] = []

    /// This machine as the device: an id derived from its machine id for this app (never the machine id
    /// itself: machine-id(5)), else its host name; the program as the app.
    public init(appId: String? = nil, appVersion: String? = nil) {
        let host = Self.hostName()
        let app = appId ?? CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? "app"
        device = DeviceHello(deviceId: Self.machineId().map { DeviceIdentity.appSpecific(machineID: $0, application: app) } ?? host,
                             protocolVersion: 1, device: DeviceDescription(name: host, appId: app, appVersion: appVersion))
    }

    public init(device: DeviceHello) {
        self.device = device
    }

    /// Whether `<hello>` carries something that opens a server with `auth=token` or `pairing`.
    var hasCredential: Bool {
        [token, device.token, pairingCode, device.pairing, invitation, device.invitation].contains { $0 != nil }
    }

    /// The `<hello>` sent first on every connection.
    var hello: [UInt8] {
        var hello = device
        hello.token = token ?? device.token
        hello.pairing = pairingCode ?? device.pairing
        hello.invitation = invitation ?? device.invitation
        if hello.protocolVersion == nil { hello.protocolVersion = 1 }
        return WireEncoder.hello(hello)
    }

    private static func machineId() -> String? {
        guard let file = fopen("/etc/machine-id", "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .split(whereSeparator: \.isWhitespace).first.map(String.init)
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "device" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
