internal import MuEvalWire
public import NIOCore
internal import NIOPosix
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// TLS for the library's connections: the app's implementation makes the first handler of each new
/// connection (muevalsim's uses swift-nio-ssl; an iOS app would use NIOTransportServices' TLS). The
/// library itself stays free of a TLS stack.
public protocol ConnectionSecurity: Sendable {
    /// The handler a new connection to `host` starts with.
    func handler(host: String) throws -> any ChannelHandler
}

/// One TCP connection to the capture server: writes wire messages, hands the replies to `received`
/// and says when it is gone (`closed`, once).
final class CaptureConnection: Sendable {
    private let channel: any Channel

    private init(channel: any Channel) {
        self.channel = channel
    }

    static func connect(to server: ServerAddress, security: (any ConnectionSecurity)?, timeout: Double,
                        received: @escaping @Sendable (WireMessage) -> Void,
                        closed: @escaping @Sendable () -> Void) async throws -> CaptureConnection {
        if server.tls, security == nil { throw CaptureError.securityNeeded(server.description) }
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.capped(seconds: timeout))
                .channelOption(.socketOption(.so_keepalive), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if server.tls, let security { try channel.pipeline.syncOperations.addHandler(try security.handler(host: server.host)) }
                        try channel.pipeline.syncOperations.addHandler(ReplyReader(received: received, closed: closed))
                    }
                }
                .connect(host: server.host, port: server.port).get()
            return CaptureConnection(channel: channel)
        } catch let error as NIOConnectionError {
            // "connection refused" rather than the attempts' structure.
            let reasons = error.connectionErrors.map { failure in
                (failure.error as? IOError).map { String(cString: strerror($0.errnoCode)).lowercased() } ?? "\(failure.error)"
            }
            throw CaptureError.cannotConnect(server.description, reasons.isEmpty ? "\(error)" : Set(reasons).sorted().joined(separator: ", "))
        }
    }

    /// Writes the messages and waits until they are handed to the kernel: a server that reads slowly
    /// slows the writer, never the app (which only fills the bounded queue). A write not done within
    /// `timeout` seconds (a peer gone without a word) closes the connection.
    func write(_ messages: [[UInt8]], timeout: Double) async throws {
        guard !messages.isEmpty else { return }
        var buffer = channel.allocator.buffer(capacity: messages.reduce(0) { $0 + $1.count })
        for message in messages { buffer.writeBytes(message) }
        let channel = channel
        let watchdog = channel.eventLoop.scheduleTask(in: .capped(seconds: timeout)) { channel.close(promise: nil) }
        let written = channel.eventLoop.makePromise(of: Void.self)
        channel.writeAndFlush(buffer, promise: written)
        // Cancelled on the event loop as the write ends: this task may resume much later (a busy
        // thread pool), and a watchdog cancelled only then closed connections whose write had ended.
        written.futureResult.whenComplete { _ in watchdog.cancel() }
        do {
            try await written.futureResult.get()
        } catch {
            try? await channel.close()
            throw error
        }
    }

    func close() async {
        try? await channel.close()
    }
}

/// Reads the server's replies.
final class ReplyReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let received: @Sendable (WireMessage) -> Void
    private let closed: @Sendable () -> Void
    private var reader = WireReplyReader()

    init(received: @escaping @Sendable (WireMessage) -> Void, closed: @escaping @Sendable () -> Void) {
        self.received = received
        self.closed = closed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        unwrapInboundIn(data).withUnsafeReadableBytes { reader.append($0) }
        // A reply the reader cannot read changes nothing: the device keeps its events until acked.
        while let message = reader.next() { received(message) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

// ReplyReader lives on its channel's event loop only.
@available(*, unavailable)
extension ReplyReader: Sendable {}
