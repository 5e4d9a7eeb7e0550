internal import BuildInfo
public import SessionModel
internal import Foundation
internal import NIOConcurrencyHelpers

/// What the daemon says about itself in `status` and doesn't learn from a service.
public struct DaemonDescription: Sendable {
    public var pid: Int32
    public var started: Double
    public var socket: String
    public var dataDirectory: String
    public var unknownDevicePolicy: UnknownDevicePolicy

    public init(pid: Int32, started: Double, socket: String, dataDirectory: String, unknownDevicePolicy: UnknownDevicePolicy) {
        self.pid = pid
        self.started = started
        self.socket = socket
        self.dataDirectory = dataDirectory
        self.unknownDevicePolicy = unknownDevicePolicy
    }
}

/// The daemon's status, in one place: services post their state here as it becomes known (the
/// capture server its listen addresses; Zeroconf, transcription and replication where their state
/// is read), and the control socket's `status` and the console read it. No reader needs to know the
/// services, and no service the readers.
public final class StatusBoard: Sendable {
    private let daemon: DaemonDescription
    private let registry: SessionRegistry
    private let counters: CaptureCounters
    private let liveTail: LiveTail
    private let health: StorageHealth
    private let posted = NIOLockedValueBox(Posted())

    /// What the services posted; a service that posted nothing is off.
    private struct Posted: Sendable {
        var listen: ListenAddress?
        var listenTLS: ListenAddress?
        var zeroconf: (@Sendable () -> String)?
        var transcriptions: (@Sendable (Double) -> [SessionTranscription])?
        var replication: (@Sendable () -> ReplicationStatus)?
        var descriptors: (@Sendable () -> DescriptorStatus)?
        var reports: (@Sendable () -> ReportQueueStatus)?
    }

    public init(daemon: DaemonDescription, registry: SessionRegistry, counters: CaptureCounters, liveTail: LiveTail,
                health: StorageHealth) {
        self.daemon = daemon
        self.registry = registry
        self.counters = counters
        self.liveTail = liveTail
        self.health = health
    }

    /// The capture server listens at `address`, so that `status` shows the real port: the first
    /// listener is `listen`; a TLS one beside a plaintext one is `listenTLS`.
    public func listening(on address: ListenAddress) {
        posted.withLockedValue { posted in
            if posted.listen == nil { posted.listen = address } else { posted.listenTLS = address }
        }
    }

    /// Where the Zeroconf announcement's state is read ("announced as …", "waiting for avahi-daemon").
    public func postZeroconf(_ state: @escaping @Sendable () -> String) {
        posted.withLockedValue { $0.zeroconf = state }
    }

    /// Where what is being transcribed, and how far, is read (at a time, seconds since 1970).
    public func postTranscriptions(_ progress: @escaping @Sendable (Double) -> [SessionTranscription]) {
        posted.withLockedValue { $0.transcriptions = progress }
    }

    /// Where how far replication into PostgreSQL is, is read.
    public func postReplication(_ status: @escaping @Sendable () -> ReplicationStatus) {
        posted.withLockedValue { $0.replication = status }
    }

    /// Where open files and connections by kind are read (the `ConnectionLedger`).
    public func postDescriptors(_ status: @escaping @Sendable () -> DescriptorStatus) {
        posted.withLockedValue { $0.descriptors = status }
    }

    /// Where the automatic reports' queue is read (`AutomaticReports`).
    public func postReports(_ status: @escaping @Sendable () -> ReportQueueStatus) {
        posted.withLockedValue { $0.reports = status }
    }

    /// The daemon at a glance now (`muevalctl status`, the console's Server page and /metrics).
    public func status() -> StatusReport {
        status(now: Date().timeIntervalSince1970)
    }

    /// The daemon at a glance, with transcription's progress at `now`.
    public func status(now: Double) -> StatusReport {
        let posted = posted.withLockedValue { $0 }
        return StatusReport(
            version: MuEvalVersion.current, pid: daemon.pid, started: daemon.started, listen: posted.listen,
            listenTLS: posted.listenTLS, zeroconf: posted.zeroconf?() ?? "off", socket: daemon.socket,
            dataDirectory: daemon.dataDirectory, unknownDevicePolicy: daemon.unknownDevicePolicy,
            sessions: registry.openSessions().map(\.snapshot), counters: counters.snapshot(), tails: liveTail.followers,
            storageProblem: health.problem, transcriptions: posted.transcriptions?(now) ?? [], replication: posted.replication?(),
            descriptors: posted.descriptors?(), reports: posted.reports?(),
            sharedSync: registry.sharedSync.map { StorageSyncStatus(syncs: $0.done.syncs, failures: $0.done.failures) })
    }
}
