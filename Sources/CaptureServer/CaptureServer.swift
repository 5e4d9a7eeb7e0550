public import SessionCore
internal import Foundation
internal import JournalStorage
public import Logging
public import NIOCore
internal import NIOPosix
public import ServiceLifecycle

/// The TCP listener devices connect to. Runs until graceful shutdown, then stops accepting,
/// lets every connection hand its last events to the journal, and closes them.
public final class CaptureServer: Service {
    private let settings: CaptureSettings
    private let registry: SessionRegistry
    private let connections: ConnectionTable
    private let ledger: ConnectionLedger
    private let counters: CaptureCounters
    private let partialBudget: PartialMessageBudget
    private let group: EventLoopGroup
    private let logger: Logger
    private let tls: CaptureTLS?
    private let onListening: @Sendable (SocketAddress, CaptureListener) -> Void
    /// Browsers' way in: at `/capture` on the console, and on `capture.web_listen`.
    public let web: WebCaptureEndpoint

    /// `tls` is the certificate of the configuration's TLS listener (`CaptureConfiguration.listeners`).
    /// `ledger` admits each connection against the daemon's descriptor budget.
    public init(settings: CaptureSettings, registry: SessionRegistry, connections: ConnectionTable, ledger: ConnectionLedger,
                counters: CaptureCounters, group: EventLoopGroup, logger: Logger, tls: CaptureTLS? = nil,
                onListening: @escaping @Sendable (SocketAddress, CaptureListener) -> Void) {
        self.tls = tls
        self.settings = settings
        self.registry = registry
        self.connections = connections
        self.ledger = ledger
        self.counters = counters
        partialBudget = PartialMessageBudget(limit: settings.current.maxPartialBytes)
        self.group = group
        self.logger = logger
        self.onListening = onListening
        let partialBudget = partialBudget
        web = WebCaptureEndpoint(settings: settings, library: WebCaptureEndpoint.loadLibrary(logger: logger),
                                 refusals: counters.refusals, logger: logger) { transport in
            DeviceConnectionHandler(registry: registry, connections: connections, ledger: ledger, counters: counters,
                                    configuration: settings.current, partialBudget: partialBudget, transport: transport, logger: logger)
        }
    }

    /// Binds one listener; fails with a message naming the address when it cannot.
    /// `webSocket`: the web capture's own listener (`capture.web_listen`), else a device listener.
    func bind(_ listener: CaptureListener, webSocket: Bool = false) async throws -> Channel {
        let tls = listener.tls ? tls : nil
        if listener.tls, tls == nil {
            throw CaptureServerError.cannotListen(host: listener.host, port: listener.port, reason: "TLS is asked for without a certificate")
        }
        let settings = settings
        let registry = registry
        let connections = connections
        let ledger = ledger
        let counters = counters
        let partialBudget = partialBudget
        let logger = logger
        let web = web
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.so_keepalive), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            // A device that closes its side (`nc -N`) still has what it sent handled, and replies
            // reach it, before the server closes.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            // Reads of up to 64 KB, one per wakeup: hundreds of small events per journal append, and a
            // connection adds at most 64 KB after the journal says it is full, before backpressure
            // holds its next read. With 1 MB reads (four per wakeup), 256 busy connections overshot
            // the journal's limit by hundreds of MB and each decoder kept a megabyte of buffer
            // (docs/BENCHMARKS.md). The first read is 4 KB: a hello fits, and an idle connection keeps its read buffer
            // (64 KB of 1,000 idle connections' 71 KB each, when the first was 64 KB); a busy one is at 64 KB after a few
            // full reads.
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 4096, initial: 4096, maximum: 1 << 16))
            .childChannelOption(.maxMessagesPerRead, value: 1)
            // Replies are small; a device that does not read them hits this mark and gets none.
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 16 << 10, high: 64 << 10))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let configuration = settings.current
                    let sync = channel.pipeline.syncOperations
                    if let tls { try sync.addHandlers(tls.handlers(counters: counters, logger: logger)) }
                    if configuration.idleTimeout > 0 {
                        try sync.addHandler(IdleStateHandler(readTimeout: .milliseconds(Int64(configuration.idleTimeout * 1000))))
                    }
                    if webSocket { return try web.configureOwnListener(channel) }
                    try sync.addHandler(DeviceConnectionHandler(
                        registry: registry, connections: connections, ledger: ledger, counters: counters,
                        configuration: configuration, partialBudget: partialBudget, logger: logger))
                }
            }
        do {
            return try await bootstrap.bind(host: listener.host, port: listener.port).get()
        } catch {
            throw CaptureServerError.cannotListen(host: listener.host, port: listener.port, reason: "\(error)")
        }
    }

    public func run() async throws {
        var channels: [Channel] = []
        for listener in settings.current.listeners {
            let channel: Channel
            do {
                channel = try await bind(listener)
            } catch {
                for open in channels { try? await open.close() }
                throw error
            }
            channels.append(channel)
            if let address = channel.localAddress {
                logger.notice("capture server listening on \(address.ipAddress ?? "?"):\(address.port ?? 0)\(listener.tls ? " (TLS)" : "")")
                onListening(address, listener)
            }
        }
        if let address = settings.current.web.listen {
            do {
                let channel = try await bind(CaptureListener(host: address.host, port: address.port, tls: tls != nil), webSocket: true)
                channels.append(channel)
                logger.notice("web capture listening on \(tls != nil ? "wss" : "ws")://\(address.host):\(channel.localAddress?.port ?? address.port)\(WebCaptureEndpoint.path)")
            } catch {
                for open in channels { try? await open.close() }
                throw error
            }
        }
        try? await gracefulShutdown()
        for channel in channels { try? await channel.close() }
        await connections.closeAll()
        logger.info("capture server stopped accepting devices")
    }
}

public enum CaptureServerError: Error, CustomStringConvertible {
    case cannotListen(host: String, port: Int, reason: String)

    public var description: String {
        switch self {
        case .cannotListen(let host, let port, let reason):
            "cannot listen for devices on \(host):\(port): \(reason) (choose another with --listen HOST:PORT)"
        }
    }
}
