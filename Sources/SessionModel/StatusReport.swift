/// `status`: the daemon at a glance.
public struct StatusReport: Codable, Sendable {
    public var version: String
    public var pid: Int32
    /// When the daemon started (seconds since 1970).
    public var started: Double
    public var listen: ListenAddress?
    /// The TLS listener that runs beside the plaintext `listen` (`server.tls_listen`).
    public var listenTLS: ListenAddress?
    /// The Zeroconf announcement: "announced as \"muEval on lab\"", "waiting for avahi-daemon", "off", …
    public var zeroconf: String
    public var socket: String
    public var dataDirectory: String
    public var unknownDevicePolicy: UnknownDevicePolicy
    /// Open sessions (waiting, recording, interrupted), with live counts.
    public var sessions: [SessionRecord]
    public var counters: CounterSnapshot
    /// Live tails (`muevalctl tail`) following now.
    public var tails: Int
    /// nil while commits succeed; else since when and why they fail (a full disk).
    public var storageProblem: StorageProblem?
    /// Audio streams being transcribed or waiting for it.
    public var transcriptions: [SessionTranscription]
    /// Replication into PostgreSQL (`storage.postgres.url`); nil when muevald replicates nowhere.
    public var replication: ReplicationStatus?
    /// Open files against the limit, and connections by kind against their budget; nil from a muevald before issue 38.
    public var descriptors: DescriptorStatus?
    /// Stopped sessions' automatic reports waiting in the durable queue and being written; nil from a muevald before issue 52.
    public var reports: ReportQueueStatus?
    /// The sync every session's commits share; nil where each commit syncs its own file (`storage.shared_sync = false`,
    /// `synchronous = "normal"`, no syncfs) or from a muevald before issue 52.
    public var sharedSync: StorageSyncStatus?

    public init(version: String, pid: Int32, started: Double, listen: ListenAddress?, listenTLS: ListenAddress? = nil, zeroconf: String, socket: String,
                dataDirectory: String, unknownDevicePolicy: UnknownDevicePolicy, sessions: [SessionRecord],
                counters: CounterSnapshot, tails: Int, storageProblem: StorageProblem?, transcriptions: [SessionTranscription] = [],
                replication: ReplicationStatus? = nil, descriptors: DescriptorStatus? = nil, reports: ReportQueueStatus? = nil,
                sharedSync: StorageSyncStatus? = nil) {
        self.descriptors = descriptors
        self.sharedSync = sharedSync
        self.reports = reports
        self.transcriptions = transcriptions
        self.replication = replication
        self.version = version
        self.pid = pid
        self.started = started
        self.listen = listen
        self.listenTLS = listenTLS
        self.zeroconf = zeroconf
        self.socket = socket
        self.dataDirectory = dataDirectory
        self.unknownDevicePolicy = unknownDevicePolicy
        self.sessions = sessions
        self.counters = counters
        self.tails = tails
        self.storageProblem = storageProblem
    }
}

public struct ListenAddress: Codable, Sendable, Equatable {
    public var host: String
    public var port: Int
    /// Devices must speak TLS here; absent (nil) for plaintext.
    public var tls: Bool?

    public init(host: String, port: Int, tls: Bool = false) {
        self.host = host
        self.port = port
        self.tls = tls ? true : nil
    }

    /// `host:port`, with ` (TLS)` where devices must speak TLS.
    public var text: String { "\(host):\(port)" + (tls == true ? " (TLS)" : "") }
}
