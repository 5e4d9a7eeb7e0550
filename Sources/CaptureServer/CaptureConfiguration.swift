public import SessionCore
public import GroupCommit
internal import JournalStorage
internal import NIOConcurrencyHelpers
public import SessionModel
public import WireProtocol

/// Everything the capture server needs to know, resolved from flags, environment and config file.
public struct CaptureConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var wireLimits: WireLimits
    /// Open device connections at once; further connections get `<error>` and are closed.
    public var maxConnections: Int
    /// Open connections from one IP address.
    public var maxConnectionsPerAddress: Int
    /// Bytes all device connections together may hold in partially received messages; beyond
    /// it they take turns (`PartialMessageBudget`). Read at start-up.
    public var maxPartialBytes: Int
    /// A connection that sends nothing for this long is closed (seconds; 0 disables).
    public var idleTimeout: Double
    /// A connection that has not sent one whole message (a hello, or an event from a device that
    /// sends none) this long after it opened, TLS handshake included, is closed (seconds; 0 disables).
    public var helloTimeout: Double
    public var unknownDevicePolicy: UnknownDevicePolicy
    public var journal: JournalWriterLimits
    /// When set, a device must present it in `<hello>` (`token`); a session with a pairing code
    /// needs that too (`pairing`).
    public var deviceToken: String?
    /// How many wrong pairing codes an address, and a session, get (`PairingGuard`).
    public var pairing: PairingLimits
    /// Bytes of media (think-aloud audio, face video) one session may hold; chunks beyond it are refused.
    public var maxMediaBytes: Int
    /// Lines a live tail may have undelivered before it skips (a paused terminal never slows ingest).
    public var tailBuffer: Int
    /// TLS for devices: with `tlsListen` nil the listener on `host`:`port` requires it; with
    /// `tlsListen` a second listener there does, and `host`:`port` stays plaintext (docs/SECURITY.md).
    public var tls: CaptureTLSFiles?
    public var tlsListen: (host: String, port: Int)?
    /// Browsers as devices, over a WebSocket (`capture.web_*`).
    public var web = WebCaptureSettings()

    /// Where devices connect: one listener, or a plaintext and a TLS one side by side.
    public var listeners: [CaptureListener] {
        guard tls != nil else { return [CaptureListener(host: host, port: port, tls: false)] }
        guard let tlsListen else { return [CaptureListener(host: host, port: port, tls: true)] }
        return [CaptureListener(host: host, port: port, tls: false), CaptureListener(host: tlsListen.host, port: tlsListen.port, tls: true)]
    }

    /// The registered-looking default port: unassigned by IANA, easy to remember ("mu" = 0x6D75 = 28021).
    public static let defaultPort = 28021

    public init(host: String = "0.0.0.0", port: Int = CaptureConfiguration.defaultPort,
                wireLimits: WireLimits = WireLimits(), maxConnections: Int = 4096, maxConnectionsPerAddress: Int = 256,
                maxPartialBytes: Int = 64 << 20, idleTimeout: Double = 1800, helloTimeout: Double = 30, unknownDevicePolicy: UnknownDevicePolicy = .reject,
                journal: JournalWriterLimits = JournalWriterLimits(), tailBuffer: Int = 10_000,
                deviceToken: String? = nil, pairing: PairingLimits = PairingLimits(), maxMediaBytes: Int = EvaluationSession.defaultMaxMediaBytes,
                tls: CaptureTLSFiles? = nil, tlsListen: (host: String, port: Int)? = nil) {
        self.tls = tls
        self.tlsListen = tlsListen
        self.maxMediaBytes = maxMediaBytes
        self.host = host
        self.port = port
        self.wireLimits = wireLimits
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.maxPartialBytes = maxPartialBytes
        self.idleTimeout = idleTimeout
        self.helloTimeout = helloTimeout
        self.unknownDevicePolicy = unknownDevicePolicy
        self.journal = journal
        self.tailBuffer = tailBuffer
        self.deviceToken = deviceToken
        self.pairing = pairing
    }
}

/// One address devices connect to, with or without TLS.
public struct CaptureListener: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var tls: Bool

    public init(host: String, port: Int, tls: Bool) {
        self.host = host
        self.port = port
        self.tls = tls
    }
}

/// The capture configuration in effect. A reload (SIGHUP) replaces it; each new connection and
/// each new tail reads it once, so limits change for what comes next, never mid-message.
public final class CaptureSettings: Sendable {
    private let box: NIOLockedValueBox<CaptureConfiguration>

    public init(_ configuration: CaptureConfiguration) {
        box = NIOLockedValueBox(configuration)
    }

    public var current: CaptureConfiguration { box.withLockedValue { $0 } }

    public func update(_ configuration: CaptureConfiguration) {
        box.withLockedValue { $0 = configuration }
    }
}
