internal import BuildInfo
internal import CaptureServer
internal import SessionCore
internal import ControlProtocol
internal import ControlService
internal import ConsoleServer
internal import Foundation
internal import GroupCommit
internal import Replication
internal import SessionImport
internal import JournalStorage
internal import Logging
internal import NIOConcurrencyHelpers
internal import SessionModel
internal import SessionReports
internal import TesterPool
internal import TranscriptionService
internal import Zeroconf
internal import NIOPosix
internal import ServiceLifecycle

/// Assembles muevald from its parts and runs it until SIGTERM or SIGINT.
///
/// Shutdown runs in reverse order of `services`: the Zeroconf announcement is withdrawn, the
/// capture server stops accepting and closes
/// device connections (their last events reach the journal), then the control socket closes,
/// then every journal commits and closes. Sessions that were recording stay open in the
/// catalog and resume when their device reconnects after the next start.
public struct MuEvalDaemon {
    public let configuration: DaemonConfiguration
    /// Read again on SIGHUP.
    public let source: ConfigurationSource
    /// Shared with the log handlers, so that a reload changes the level.
    public let logLevel: LogLevelSetting

    public init(configuration: DaemonConfiguration, source: ConfigurationSource, logLevel: LogLevelSetting) {
        self.configuration = configuration
        self.source = source
        self.logLevel = logLevel
    }

    public func run() async throws {
        let logger = Logger(label: "muevald")
        // Recordings are private (thesis 2.5.4): every file muevald makes, SQLite's -wal and -shm
        // included, is for its own user only.
        umask(0o077)
        // A password others may read stops muevald here, with what to change.
        try configuration.postgres?.checkPasswordFile()
        let started = Date().timeIntervalSince1970
        let files = OpenFileLimit.raise()
        let ledger = ConnectionLedger(budget: DescriptorBudget(
            limit: files.soft, reserve: configuration.descriptorReserve, capture: configuration.capture.maxConnections,
            console: configuration.consoleConnectionCap))
        Self.logBudget(ledger.budget, files: files, logger: logger)
        let dataDirectory = URL(fileURLWithPath: configuration.dataDirectory).standardizedFileURL.path
        // One writer per data directory: a second muevald, or an offline import, is told who has it.
        let lock = try DataDirectoryLock(directory: dataDirectory)
        let catalog = try Catalog(directory: dataDirectory)
        for step in catalog.migrated { logger.notice("catalog migrated to \(step)") }
        let counters = CaptureCounters()
        let settings = CaptureSettings(configuration.capture)
        let readiness = ReadinessGate(waitingFor: configuration.console.enabled ? [.captureServer, .controlSocket, .console] : [.captureServer, .controlSocket])
        let connections = ConnectionTable()
        let liveTail = LiveTail()
        let health = StorageHealth()
        let router = CommitRouter(connections: connections, counters: counters, tail: liveTail, health: health, logger: logger)
        // The sessions' lifecycle events, which the services below follow (docs/SESSION-CORE.md).
        let events = SessionEvents(capacity: configuration.lifecycleBuffer)
        // The shared PostgreSQL follows the local files; it never holds up recording.
        let replicator = configuration.postgres.map {
            PostgresReplicator(settings: $0, catalog: catalog, logger: logger, sessionEvents: events.subscribe())
        }
        let registry = SessionRegistry(
            catalog: catalog, policy: configuration.capture.unknownDevicePolicy,
            journalLimits: configuration.capture.journal, sharedSync: Self.sharedSync(configuration, dataDirectory: dataDirectory, logger: logger),
            maxMediaBytes: configuration.capture.maxMediaBytes,
            reconnectGrace: configuration.reconnectGrace, counters: counters, tail: liveTail, logger: logger,
            events: events, commitObserver: { session, report in
                router.route(report, of: session)
                replicator?.committed()
            })
        try await registry.recover(now: started)
        let transcription = TranscriptionService(
            configuration: configuration.transcription, temporaryDirectory: try Self.scratchDirectory(in: dataDirectory),
            logger: logger, onTranscript: { session, segments in
                liveTail.publish(segments.map { TailLine.speech($0, session: session) })
            })
        let transcriptionWorker = TranscriptionWorker(service: transcription, registry: registry, since: started)

        let socketPath = configuration.controlSocket ?? ControlSocketPath.daemonDefault(dataDirectory: dataDirectory)
        // The tester pool's profiles, in their own file apart from the recordings.
        let testers = try TesterStore(directory: dataDirectory, limits: configuration.pool,
                                      codeTakenElsewhere: { try catalog.isParticipantCode($0) })
        let studies = Studies(catalog: catalog, registry: registry, pool: testers, invitationLifetime: configuration.invitationLifetime)
        let board = StatusBoard(daemon: DaemonDescription(
            pid: ProcessInfo.processInfo.processIdentifier, started: started, socket: socketPath,
            dataDirectory: dataDirectory, unknownDevicePolicy: configuration.capture.unknownDevicePolicy),
                                registry: registry, counters: counters, liveTail: liveTail, health: health)
        board.postTranscriptions { transcription.progress(now: $0) }
        board.postDescriptors { ledger.status() }
        let group = MultiThreadedEventLoopGroup.singleton
        let zeroconf = configuration.zeroconf.enabled
            ? ZeroconfService(settings: configuration.zeroconf, registry: registry, logger: logger, capture: {
                let current = settings.current
                return ZeroconfService.Capture(deviceToken: current.deviceToken != nil, tls: current.listeners.first?.tls == true)
            }) : nil
        board.postZeroconf { zeroconf?.state?.description ?? "off" }
        // Every stopped session's default report is the daemon's, console or not.
        // At most reports.max_concurrent reports (and their face scans) at once, session or study.
        let reportSlots = ReportSlots(limits: configuration.reports)
        let reports = SessionReports(dataDirectory: dataDirectory, logger: logger, slots: reportSlots, faceScanner: configuration.faceScanner)
        let automaticReports = AutomaticReports(reports: reports, registry: registry, queue: try ReportQueue(dataDirectory: dataDirectory),
                                                limit: configuration.reports.maxConcurrent, logger: logger)
        board.postReports { automaticReports.status }
        // One writer of study reports, the console's and the completion's, into one folder per study.
        StudyReportFolders(dataDirectory: dataDirectory).upgrade(logger: logger)
        let studyReports = StudyReports(dataDirectory: dataDirectory, logger: logger, slots: reportSlots,
                                        consoleURL: { registry.consoleAddress.current })
        // Recruited studies complete themselves: their report, the lifecycle event, the lab's command.
        let studyCompletion = StudyCompletionService(catalog: catalog, studies: studies, registry: registry, reports: studyReports,
                                                     settings: configuration.studyCompletion, logger: logger)
        let tls = try configuration.capture.tls.map { files in
            guard !files.certificate.isEmpty, !files.key.isEmpty else {
                throw CaptureTLSError(description: "TLS needs both server.tls_certificate and server.tls_key (PEM files)")
            }
            return try CaptureTLS(files: files)
        }
        if tls == nil, configuration.capture.tlsListen != nil {
            throw CaptureTLSError(description: "server.tls_listen needs server.tls_certificate and server.tls_key")
        }
        let listeners = configuration.capture.listeners
        let listening = NIOLockedValueBox(0)
        let capture = CaptureServer(
            settings: settings, registry: registry, connections: connections, ledger: ledger, counters: counters,
            group: group, logger: logger, tls: tls,
            onListening: { address, listener in
                board.listening(on: ListenAddress(host: address.ipAddress ?? "", port: address.port ?? 0, tls: listener.tls))
                // The first listener is the one announced; a TLS one beside it is named in the TXT record.
                if listener == listeners.first { zeroconf?.listening(on: address.port ?? 0) } else { zeroconf?.listeningTLS(on: address.port ?? 0) }
                if listening.withLockedValue({ $0 += 1; return $0 }) == listeners.count { readiness.ready(.captureServer) }
            })
        let console = configuration.console.enabled ? ConsoleServer(
            settings: configuration.console,
            environment: ConsoleEnvironment(registry: registry, liveTail: liveTail, counters: counters, board: board,
                                            dataDirectory: dataDirectory, studies: studies, testers: testers,
                                            reports: Self.consoleReports(reports, studies: studyReports),
                                            pairingLimits: { settings.current.pairing }),
            group: group, logger: logger, ledger: ledger, limits: configuration.consoleConnections, webCapture: Self.consoleWebCapture(capture.web),
            onReady: { readiness.ready(.console) }) : nil
        let commands = ControlCommands(ControlCollaborators(
            registry: registry, studies: studies, liveTail: liveTail, board: board,
            importer: SessionImporter(catalog: catalog, limits: configuration.importLimits, lab: configuration.replication.lab),
            tailBuffer: { settings.current.tailBuffer }, transcription: transcription, console: console))
        let control = ControlServer(path: socketPath, access: try ControlAccess(groupName: configuration.controlGroup),
                                    commands: commands, group: group, logger: logger,
                                    maxRequestBytes: configuration.controlMaxRequestBytes, ledger: ledger, onListening: { readiness.ready(.controlSocket) })
        let reload = ReloadService(source: source, initial: configuration, logger: logger,
                                   onHangup: { control.recreateSocketIfMissing() }) { [logLevel] reloaded in
            logLevel.level = reloaded.logLevel
            StderrLogHandler.setQueueLimit(reloaded.logQueueLines)
            settings.update(reloaded.capture)
            registry.setReconnectGrace(reloaded.reconnectGrace)
            ledger.update(capture: reloaded.capture.maxConnections, console: reloaded.consoleConnectionCap)
            for clamp in ledger.budget.clamped { logger.warning("reload: \(clamp), the descriptor budget") }
            // A renewed certificate in the same files serves the next handshake; open connections keep theirs.
            if let tls {
                if let error = tls.reload() {
                    logger.error("reload: TLS keeps its certificate: \(error)")
                } else {
                    logger.notice("reload: TLS certificate and key read again from \(tls.files.certificate)")
                }
            }
            switch console?.reloadTLS() {
            case .reloaded(let certificate)?: logger.notice("reload: the console's TLS certificate and key read again from \(certificate)")
            case .kept(let reason)?: logger.error("reload: the console keeps its TLS certificate: \(reason)")
            case .notConfigured?, nil: break
            }
            zeroconf?.reloaded(name: reloaded.zeroconf.name)
        }
        // Last in the list: the first to hear of shutdown, so STOPPING=1 goes out at once.
        let systemd = SystemdNotifier().map { notifier in
            SystemdService(notifier: notifier, readiness: readiness, group: group) {
                let sessions = registry.openSessions().map(\.snapshot)
                let recording = sessions.filter { $0.state == .recording }.count
                let c = counters.snapshot()
                let storage = health.problem.map { "; STORAGE FAILING: \($0.reason)" } ?? ""
                return "\(sessions.count) sessions open (\(recording) recording), \(c.connectionsOpen) devices connected, \(c.eventsStored) events stored\(storage)"
            }
        }

        logger.notice("\(BuildInfo.versionLine(program: "muevald")) starting: data in \(dataDirectory), policy for unknown devices: \(configuration.capture.unknownDevicePolicy.rawValue)")
        // Shutdown runs from the last to the first.
        var services: [any Service] = [JournalService(registry: registry),
                                       transcriptionWorker, automaticReports, studyCompletion, control,
                                       // Shut down right after the capture server: the sessions its closing left waiting stop.
                                       ReconnectGraceShutdown(registry: registry), capture,
                                       InvitedSessionTimer(registry: registry, idleAfter: configuration.invitedSessionIdle),
                                       PendingWithdrawals(studies: studies, logger: logger)]
        if let replicator {
            board.postReplication { replicator.current }
            services.append(replicator)
        }
        if let console { services.append(console) }
        if let zeroconf { services.append(zeroconf) }
        services.append(reload)
        if let systemd { services.append(systemd) }
        let serviceGroup = ServiceGroup(configuration: .init(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        defer { withExtendedLifetime(lock) {} }
        try await serviceGroup.run()
        logger.notice("muevald stopped")
    }
}

/// Holds the journals open for the daemon's lifetime and commits and closes them last.
struct JournalService: Service {
    let registry: SessionRegistry

    func run() async throws {
        try? await gracefulShutdown()
        await registry.shutdown()
    }
}

extension MuEvalDaemon {
    /// The web capture endpoint as the console serves it: the console does not import CaptureServer, a peer.
    static func consoleWebCapture(_ web: WebCaptureEndpoint) -> ConsoleWebCapture {
        ConsoleWebCapture(path: WebCaptureEndpoint.path, libraryPath: WebCaptureEndpoint.libraryPath,
                          modulesPath: WebCaptureEndpoint.modulesPath, library: web.library.files,
                          libraryHeaders: WebCaptureEndpoint.libraryHeaders, maxFrameBytes: web.web.maxFrameBytes,
                          admit: { web.admit(origin: $0, host: $1, address: $2) }, release: { web.release(address: $0) },
                          handOff: { try await web.handOff($0, address: $1) }, origins: { web.web.origins })
    }

    /// What the console reads and asks of the reports: the console does not import SessionReports, a peer.
    static func consoleReports(_ sessions: SessionReports, studies: StudyReports) -> ConsoleReportSource {
        ConsoleReportSource(
            sessionState: { sessions.state(of: $0, name: $1) },
            copyingScreenshots: { sessions.copyingScreenshots(of: $0, name: $1) },
            problems: { sessions.problems(of: $0) },
            writeSession: { await sessions.write($0, name: $1, configuration: $2).value },
            follow: { sessions.finished.follow() },
            studyState: { studies.state(of: $0, iteration: $1) },
            startStudy: { studies.start($0, iteration: $1) })
    }

    /// The limit, the budget and each cap it lowered, once at start (docs/SECURITY.md, "Descriptors").
    static func logBudget(_ budget: DescriptorBudget, files: OpenFileLimit, logger: Logger) {
        logger.notice("\(files); \(budget.reserve) kept for session files, SQLite, the control socket and reports (limits.descriptor_reserve), \(budget.connections) for connections: devices up to \(budget.capture), console up to \(budget.console)")
        for clamp in budget.clamped {
            logger.warning("\(clamp), the descriptor budget: raise the open-file limit (LimitNOFILE= in the unit) to allow more")
        }
        if budget.connections < 64 {
            logger.error("only \(budget.connections) connections fit in the open-file limit \(budget.limit) with \(budget.reserve) reserved: raise the limit or lower limits.descriptor_reserve")
        }
    }

    /// The sync the sessions' commits share (`storage.shared_sync`), when it applies and the system has syncfs; else
    /// each session syncs its own file, as it did before the shared sync (docs/STORAGE.md).
    static func sharedSync(_ configuration: DaemonConfiguration, dataDirectory: String, logger: Logger) -> SharedSync? {
        guard configuration.sharedSync, configuration.capture.journal.synchronous == .full else { return nil }
        do {
            return try SharedSync(directory: dataDirectory)
        } catch {
            logger.warning("storage: \(error); each session syncs its own file instead (storage.shared_sync)")
            return nil
        }
    }

    /// Where the recogniser's copy of a stream is written while it runs: inside the data directory,
    /// which only muevald can read, since it is a participant's voice (docs/SECURITY.md).
    static func scratchDirectory(in dataDirectory: String) throws -> String {
        let path = dataDirectory + "/scratch"
        // Whatever a stopped muevald left there is a copy of audio that is in its session file.
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        return path
    }
}
