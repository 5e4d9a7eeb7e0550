public import CaptureServer
public import ConsoleServer
internal import ControlProtocol
package import FaceAnalysis
internal import Foundation
internal import JournalStorage
public import Logging
internal import MuEvalWire
internal import SessionCore
internal import SessionModel
package import SessionReports
internal import SpeechRecognition
public import TesterPool
public import TranscriptionService
public import SessionImport
public import ReplicationArchive
internal import WireProtocol
public import Zeroconf

/// Everything muevald runs with, after flags, environment and the config file are merged.
public struct DaemonConfiguration: Sendable {
    public var capture = CaptureConfiguration()
    public var dataDirectory = "./mueval-data"
    /// nil: `ControlSocketPath.daemonDefault`.
    public var controlSocket: String?
    /// A group whose members may use the control socket besides the daemon's user and root.
    public var controlGroup: String?
    /// The longest request line the control socket reads; a longer one is refused and its connection closed.
    public var controlMaxRequestBytes = ControlLimits.maxRequestBytes
    public var logLevel: Logger.Level = .info
    /// Log lines that may wait for stderr's reader; beyond, lines are dropped and counted.
    public var logQueueLines = 10_000
    /// Lifecycle events (`SessionEvent`) each of the daemon's followers may leave unread; beyond, they are dropped and it reconciles.
    public var lifecycleBuffer = SessionEvents.defaultCapacity
    /// `limits.descriptor_reserve`: open files kept back from connections for everything else (docs/SECURITY.md, "Descriptors").
    public var descriptorReserve = 256
    /// `console.max_connections` and the console's timeouts.
    public var consoleConnections = ConsoleConnectionLimits()
    /// The console's share of the descriptor budget: none when it is off.
    var consoleConnectionCap: Int { console.enabled ? consoleConnections.maxConnections : 0 }
    public var zeroconf = ZeroconfSettings()
    public var console = ConsoleSettings()
    public var transcription = TranscriptionConfiguration()
    /// `studies.completion_command*`: what runs when a recruited study completes.
    package var studyCompletion = StudyCompletionSettings()
    /// `reports.max_concurrent`, `reports.max_queued`: how many reports are written at once, and wait.
    package var reports = ReportLimits()
    /// `reports.face_*`: the face scan's frame size, address space and CPU time.
    package var faceScanner = FaceScanner()
    /// `studies.invitation_lifetime`: seconds a recruited tester's invitation stays usable.
    public var invitationLifetime = Studies.defaultInvitationLifetime
    /// `studies.invited_session_idle`: seconds an invited session waits for its phone to come back before it stops.
    public var invitedSessionIdle: Double = 1800
    /// `capture.reconnect_grace`: seconds an automatic session waits for its device after a drop (config/muevald.toml says why 120).
    public var reconnectGrace: Double = 120
    /// `storage.shared_sync`: with `storage.synchronous = "full"`, the sessions' commits share one sync of the data
    /// directory's file system instead of each syncing its own file (docs/STORAGE.md, "One sync for every session").
    public var sharedSync = true
    /// `pool.max_*`: the tester pool's sizes.
    public var pool = PoolLimits()
    /// Limits of `muevalctl import` (docs/IMPORT.md).
    public var importLimits = ImportLimits()
    /// `storage.postgres.*`, kept whole whatever order its keys come in; in effect only with a URL.
    public var replication = ReplicationSettings(url: "")
    /// Replication into a shared PostgreSQL (docs/POSTGRES.md); nil: none.
    public var postgres: ReplicationSettings? { replication.url.isEmpty ? nil : replication }

    public init() {
        // Under systemd, StateDirectory= says where the data belongs.
        if let state = ProcessInfo.processInfo.environment["STATE_DIRECTORY"]?.split(separator: ":").first {
            dataDirectory = String(state)
        }
    }
}
