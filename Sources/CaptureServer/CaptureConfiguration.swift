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
    public var unknownDevicePolicy: UnknownDevicePolicy
    public var journal: JournalWriterLimits
    /// When set, a device must present it in `<hello>` (`token`), or a session's pairing code.
    public var deviceToken: String?
    /// Bytes of media (think-aloud audio, face video) one session may hold; chunks beyond it are refused.
    public var maxMediaBytes: Int
    /// 4 GiB: an hour of face video at 4 Mbit/s plus its audio, or days of speech.
    public static let defaultMaxMediaBytes = 4 << 30
    /// Lines a live tail may have undelivered before it skips (a paused terminal never slows ingest).
    public var tailBuffer: Int

    /// The registered-looking default port: unassigned by IANA, easy to remember ("mu" = 0x6D75 = 28021).
    public static let defaultPort = 28021

    public init(host: String = "0.0.0.0", port: Int = CaptureConfiguration.defaultPort,
                wireLimits: WireLimits = WireLimits(), maxConnections: Int = 4096, maxConnectionsPerAddress: Int = 256,
                maxPartialBytes: Int = 64 << 20, idleTimeout: Double = 1800, unknownDevicePolicy: UnknownDevicePolicy = .reject,
                journal: JournalWriterLimits = JournalWriterLimits(), tailBuffer: Int = 10_000,
                deviceToken: String? = nil, maxMediaBytes: Int = CaptureConfiguration.defaultMaxMediaBytes) {
        self.maxMediaBytes = maxMediaBytes
        self.host = host
        self.port = port
        self.wireLimits = wireLimits
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.maxPartialBytes = maxPartialBytes
        self.idleTimeout = idleTimeout
        self.unknownDevicePolicy = unknownDevicePolicy
        self.journal = journal
        self.tailBuffer = tailBuffer
        self.deviceToken = deviceToken
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
