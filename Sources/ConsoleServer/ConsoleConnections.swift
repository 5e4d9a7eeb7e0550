internal import HummingbirdCore
internal import Logging
internal import NIOConcurrencyHelpers
internal import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import NIOSSL
internal import NIOTLS
internal import SessionCore

/// How long a console connection may take over each step, and how many there may be
/// (`console.max_connections`, `console.*_timeout`, `console.websocket_ping`; docs/CONSOLE.md).
public struct ConsoleConnectionLimits: Sendable, Equatable {
    /// Console connections at once; clamped to the descriptor budget.
    public var maxConnections = 512
    /// Seconds from the TLS handshake (or the accept, without TLS) to the end of the first request head.
    public var headerTimeout: Double = 30
    /// Seconds from the accept to the end of the TLS handshake.
    public var tlsHandshakeTimeout: Double = 10
    /// Seconds a keep-alive connection may wait for its next request.
    public var idleTimeout: Double = 120
    /// Seconds between the WebSocket pings; a peer that has not answered one by the next is closed.
    public var webSocketPing: Double = 30

    public init() {}
}

/// What one console connection has done before its first request, as a value: which deadline runs,
/// and when the first request head is complete (a blank line, CRLF CRLF or LF LF, in the bytes after
/// TLS). `ConsoleConnectionHandler` carries out what it says; tested without sockets.
struct FirstRequestWatch {
    enum Phase: Sendable, Equatable {
        case handshake
        case head
        case requested
        case ended
    }

    private(set) var phase: Phase
    /// The last bytes seen, newest lowest, to find the blank line across reads.
    private var recent: UInt32 = 0

    init(tls: Bool) {
        phase = tls ? .handshake : .head
    }

    /// The deadline to run now, in seconds; nil when none (the phase has no limit, or is over).
    func deadline(_ limits: ConsoleConnectionLimits) -> Double? {
        let seconds: Double = switch phase {
        case .handshake: limits.tlsHandshakeTimeout
        case .head: limits.headerTimeout
        case .requested, .ended: 0
        }
        return seconds > 0 ? seconds : nil
    }

    /// The TLS handshake completed: the header deadline starts.
    mutating func handshakeCompleted() -> Bool {
        guard phase == .handshake else { return false }
        phase = .head
        return true
    }

    /// Bytes of the request stream; true when they complete the first request head.
    mutating func received(_ bytes: some Sequence<UInt8>) -> Bool {
        guard phase == .head else { return false }
        for byte in bytes {
            recent = recent << 8 | UInt32(byte)
            if recent == 0x0D0A_0D0A || recent & 0xFFFF == 0x0A0A {
                phase = .requested
                return true
            }
        }
        return false
    }

    /// The deadline of `expired` passed: the reason to close, or nil when the connection has moved on.
    mutating func expired(_ expired: Phase) -> String? {
        guard phase == expired, expired == .handshake || expired == .head else { return nil }
        phase = .ended
        return expired == .handshake ? "no TLS handshake within the console.tls_handshake_timeout" : "no request head within the console.header_timeout"
    }

    /// The connection closed; true when it never completed a request head.
    mutating func closed() -> Bool {
        defer { phase = .ended }
        return phase != .requested
    }
}

/// What the console's connections share: the daemon's ledger, the limits, and which admission each
/// open channel has, so that a WebSocket route can say its connection was upgraded.
final class ConsoleConnections: Sendable {
    let ledger: ConnectionLedger
    let limits: ConsoleConnectionLimits
    let logger: Logger
    /// Where a connection refused at accept is counted and logged.
    let refusals: Refusals
    private let admissions = NIOLockedValueBox<[ObjectIdentifier: ConnectionAdmission.ID]>([:])

    init(ledger: ConnectionLedger, limits: ConsoleConnectionLimits, refusals: Refusals, logger: Logger) {
        self.ledger = ledger
        self.limits = limits
        self.refusals = refusals
        self.logger = logger
    }

    func admitted(_ channel: any Channel, as id: ConnectionAdmission.ID) {
        admissions.withLockedValue { $0[ObjectIdentifier(channel)] = id }
    }

    func closed(_ channel: any Channel, id: ConnectionAdmission.ID) {
        admissions.withLockedValue { $0[ObjectIdentifier(channel)] = nil }
        ledger.closed(id)
    }

    /// A WebSocket route runs on `channel` (counted apart from plain HTTP until it closes).
    func upgraded(_ channel: any Channel) {
        guard let id = admissions.withLockedValue({ $0[ObjectIdentifier(channel)] }) else { return }
        ledger.became(id, .consoleWebSocket)
    }
}

/// First in a console connection's pipeline after TLS: admits it against the descriptor budget
/// (closes it at once when refused), closes it when its TLS handshake or first request head takes
/// too long, and tells `firstRequest` whether a request came, so that Hummingbird serves only
/// connections that asked for something (and logs no error for those closed here).
final class ConsoleConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private struct Expired: Sendable {
        var phase: FirstRequestWatch.Phase
    }

    private let connections: ConsoleConnections
    private let firstRequest: EventLoopPromise<Bool>
    private var watch: FirstRequestWatch
    private var admission: ConnectionAdmission.ID?
    private var activated = false
    private var timer: Scheduled<Void>?

    init(connections: ConsoleConnections, tls: Bool, firstRequest: EventLoopPromise<Bool>) {
        self.connections = connections
        self.firstRequest = firstRequest
        watch = FirstRequestWatch(tls: tls)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { activate(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        firstRequest.succeed(false)
    }

    func channelActive(context: ChannelHandlerContext) {
        activate(context)
        context.fireChannelActive()
    }

    private func activate(_ context: ChannelHandlerContext) {
        guard !activated else { return }
        activated = true
        let channel = context.channel
        switch connections.ledger.admit(.console, close: { channel.close(promise: nil) }) {
        case .refused(let refusal):
            // At accept, before a request: nothing to answer yet, and holding the descriptor to read one is what the cap forbids.
            connections.refusals.record(refusal, of: "a console connection", from: context.remoteAddress?.ipAddress ?? "unknown", http: false,
                                        now: Date().timeIntervalSince1970, logger: connections.logger)
            context.close(promise: nil)
        case .admitted(let id):
            admission = id
            connections.admitted(channel, as: id)
            schedule(context)
        }
    }

    private func schedule(_ context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        guard let seconds = watch.deadline(connections.limits) else { return }
        let channel = context.channel
        let phase = watch.phase
        timer = channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) {
            channel.pipeline.fireUserInboundEventTriggered(Expired(phase: phase))
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if watch.phase == .head, watch.received(unwrapInboundIn(data).readableBytesView) {
            timer?.cancel()
            timer = nil
            if let admission { connections.ledger.became(admission, .consoleHTTP) }
            firstRequest.succeed(true)
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let expired as Expired:
            guard let reason = watch.expired(expired.phase) else { return }
            connections.ledger.timedOut()
            connections.logger.debug("closing a console connection from \(context.remoteAddress.map { "\($0)" } ?? "?"): \(reason)")
            context.close(promise: nil)
        case is ChannelShouldQuiesceEvent where watch.phase != .requested:
            // Shutdown: Hummingbird closes idle HTTP connections, but its handler is not in place before a first request.
            context.close(promise: nil)
        case TLSUserEvent.handshakeCompleted:
            if watch.handshakeCompleted() { schedule(context) }
            context.fireUserInboundEventTriggered(event)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if watch.closed() { firstRequest.succeed(false) }
        if let admission {
            connections.closed(context.channel, id: admission)
            self.admission = nil
        }
        context.fireChannelInactive()
    }
}

/// A Hummingbird child channel with the console's guard in front: TLS (when configured), then
/// `ConsoleConnectionHandler`, then `base` (HTTP/1 with the WebSocket upgrade), with `WebDeviceGate` between
/// its request decoder and its upgrade handler when web devices connect here (`door`). `handle` waits for
/// the first request head before the base serves; a connection closed before it, or whose upgrade the gate
/// refused and answered, has nothing to serve.
struct GuardedConsoleChannel<Base: ServerChildChannel>: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let base: Base.Value
        let firstRequest: EventLoopFuture<Bool>
        let answered: EventLoopFuture<Bool>
        var channel: any Channel { base.channel }
    }

    let base: Base
    let tls: NIOSSLContext?
    let connections: ConsoleConnections
    let door: WebDeviceDoor?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let firstRequest = channel.eventLoop.makePromise(of: Bool.self)
        let answered = channel.eventLoop.makePromise(of: Bool.self)
        return channel.eventLoop.makeCompletedFuture {
            if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
            try channel.pipeline.syncOperations.addHandler(
                ConsoleConnectionHandler(connections: connections, tls: tls != nil, firstRequest: firstRequest))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }.flatMapThrowing { value in
            if let door {
                let pipeline = channel.pipeline.syncOperations
                let decoder = try pipeline.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
                try pipeline.addHandler(WebDeviceGate(decide: { door.decide($0, peer: $1) }, release: { door.web.release($0) }, answered: answered),
                                        position: .after(decoder.handler))
            } else {
                answered.succeed(false)
            }
            return Value(base: value, firstRequest: firstRequest.futureResult, answered: answered.futureResult)
        }.flatMapErrorThrowing { error in
            // Never left pending: a promise nobody completes is a leak NIO reports.
            firstRequest.succeed(false)
            answered.succeed(false)
            throw error
        }
    }

    func handle(value: Value, logger: Logger) async {
        guard (try? await value.firstRequest.get()) == true, (try? await value.answered.get()) == false else { return }
        await base.handle(value: value.base, logger: logger)
    }
}
