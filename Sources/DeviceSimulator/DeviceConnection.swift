internal import NIOConcurrencyHelpers
internal import NIOCore
internal import NIOPosix
internal import WireProtocol

/// What the server said on one connection since the device last looked.
struct ServerReplies {
    /// The highest `<ack>` seq.
    var acknowledged: Int64?
    /// Seqs of `<error>` replies: events the server refused.
    var rejected: [Int64] = []
    var welcome: Welcome?
    /// The last `<error>` reason, for the summary.
    var lastError: String?
}

/// One TCP connection of a simulated device: writes wire messages, collects the server's replies.
final class DeviceConnection: Sendable {
    private let channel: Channel
    private let state: NIOLockedValueBox<(replies: ServerReplies, closed: Bool)>

    private init(channel: Channel, state: NIOLockedValueBox<(replies: ServerReplies, closed: Bool)>) {
        self.channel = channel
        self.state = state
    }

    static func connect(to server: ServerAddress, timeout: TimeAmount) async throws -> DeviceConnection {
        let state = NIOLockedValueBox((replies: ServerReplies(), closed: false))
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls = server.tls { try channel.pipeline.syncOperations.addHandler(try tls.handler(host: server.host)) }
                    try channel.pipeline.syncOperations.addHandler(ReplyReader(state: state))
                }
            }
            .connect(host: server.host, port: server.port).get()
        return DeviceConnection(channel: channel, state: state)
    }

    /// Whether the connection is gone (closed by the server, reset, or failed to write).
    var isClosed: Bool { state.withLockedValue { $0.closed } }

    /// Writes the messages and waits until they are handed to the kernel; that is also the sender's
    /// backpressure: a server that reads slowly slows the device down.
    func write(_ messages: [[UInt8]]) async throws {
        guard !messages.isEmpty else { return }
        var buffer = channel.allocator.buffer(capacity: messages.reduce(0) { $0 + $1.count })
        for message in messages { buffer.writeBytes(message) }
        do {
            try await channel.writeAndFlush(buffer).get()
        } catch {
            state.withLockedValue { $0.closed = true }
            try? await channel.close()
            throw error
        }
    }

    /// The replies since the last call.
    func takeReplies() -> ServerReplies {
        state.withLockedValue { state in
            defer { state.replies = ServerReplies() }
            return state.replies
        }
    }

    func close() async {
        try? await channel.close()
    }
}

/// Decodes the server's replies with the protocol's own decoder.
private final class ReplyReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let state: NIOLockedValueBox<(replies: ServerReplies, closed: Bool)>
    private var decoder = WireDecoder()

    init(state: NIOLockedValueBox<(replies: ServerReplies, closed: Bool)>) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        unwrapInboundIn(data).withUnsafeReadableBytes { decoder.append($0) }
        while let result = decoder.next() {
            // A reply the decoder cannot read changes nothing for the device: it keeps its events until acked.
            guard case .success(let message) = result else { continue }
            state.withLockedValue { state in
                switch message {
                case .ack(let seq): state.replies.acknowledged = max(seq, state.replies.acknowledged ?? seq)
                case .welcome(let welcome): state.replies.welcome = welcome
                case .error(let error):
                    state.replies.lastError = error.reason
                    if let seq = error.seq { state.replies.rejected.append(seq) }
                case .hello, .event, .media, .goodbye: break
                }
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.withLockedValue { $0.closed = true }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}

// ReplyReader lives on its channel's event loop only.
@available(*, unavailable)
extension ReplyReader: Sendable {}
