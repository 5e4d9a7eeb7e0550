public import SessionCore
public import GroupCommit
internal import JournalStorage
internal import MemberwiseInit
internal import NIOConcurrencyHelpers
public import SessionModel
public import WireProtocol

/// Everything the capture server needs to know, resolved from flags, environment and config file.
@MemberwiseInit
public struct CaptureConfiguration: Sendable {
    public var host: String = "0.0.0.0"
    public var port: Int = CaptureConfiguration.defaultPort
    public var wireLimits: WireLimits = WireLimits()
    /// Open device connections at once; further connections get `<error>` and are closed.
    public var maxConnections: Int = 4096
    /// Open connections from one IP address.
    public var maxConnectionsPerAddress: Int = 256
    /// Bytes all device connections together may hold in partially received messages; beyond
    /// it they take turns (`PartialMessageBudget`). Read at start-up.
    public var maxPartialBytes: Int = 64 << 20
    /// A connection that sends nothing for this long is closed (seconds; 0 disables).
    public var idleTimeout: Double = 1800
    public var unknownDevicePolicy: UnknownDevicePolicy = .reject
    public var journal: JournalWriterLimits = JournalWriterLimits()
    /// Lines a live tail may have undelivered before it skips (a paused terminal never slows ingest).
    public var tailBuffer: Int = 10_000
    /// When set, a device must present it in `<hello>` (`token`); a session with a pairing code
    /// needs that too (`pairing`).
    public var deviceToken: String?
    /// How many wrong pairing codes an address, and a session, get (`PairingGuard`).
    public var pairing: PairingLimits = PairingLimits()
    /// Bytes of media (think-aloud audio, face video) one session may hold; chunks beyond it are refused.
    public var maxMediaBytes: Int = EvaluationSession.defaultMaxMediaBytes
    /// TLS for devices: with `tlsListen` nil the listener on `host`:`port` requires it; with
    /// `tlsListen` a second listener there does, and `host`:`port` stays plaintext (docs/SECURITY.md).
    public var tls: CaptureTLSFiles?
    public var tlsListen: (host: String, port: Int)?

    /// Where devices connect: one listener, or a plaintext and a TLS one side by side.
    public var listeners: [CaptureListener] {
        guard tls != nil else { return [CaptureListener(host: host, port: port, tls: false)] }
        guard let tlsListen else { return [CaptureListener(host: host, port: port, tls: true)] }
        return [CaptureListener(host: host, port: port, tls: false), CaptureListener(host: tlsListen.host, port: tlsListen.port, tls: true)]
    }

    /// The registered-looking default port: unassigned by IANA, easy to remember ("mu" = 0x6D75 = 28021).
    public static let defaultPort = 28021
}

/// One address devices connect to, with or without TLS.
@MemberwiseInit
public struct CaptureListener: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var tls: Bool
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
