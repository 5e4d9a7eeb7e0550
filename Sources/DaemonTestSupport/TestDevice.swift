internal import Foundation
public import MuEvalWire
internal import NIOConcurrencyHelpers
internal import NIOCore
internal import NIOPosix
public import OrderedCollections
internal import WireProtocol

/// A device's TCP connection to a test daemon: sends wire messages, collects the replies.
public final class TestDevice: Sendable {
    private let channel: Channel
    private let inbox: ReplyInbox

    init(channel: Channel, inbox: ReplyInbox) {
        self.channel = channel
        self.inbox = inbox
    }

    /// `source`: the local address to connect from, e.g. "127.0.0.2" (Linux's loopback takes all of 127/8).
    static func connect(host: String = "127.0.0.1", port: Int, source: String? = nil) async throws -> TestDevice {
        let inbox = ReplyInbox()
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        let channel = try await bootstrap
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ReplyCollector(inbox: inbox))
                }
            }
            .connect(host: host, port: port).get()
        return TestDevice(channel: channel, inbox: inbox)
    }

    public func send(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
    }

    public func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    public func hello(_ hello: DeviceHello) async throws {
        try await send(WireEncoder.hello(hello))
    }

    public func event(_ fields: OrderedDictionary<String, PlistValue>) async throws {
        try await send(WireEncoder.event(fields))
    }

    public func goodbye() async throws {
        try await send(WireEncoder.goodbye())
    }

    /// Every reply received so far.
    public var replies: [WireMessage] { inbox.messages.withLockedValue { $0 } }

    /// The highest acknowledged seq so far.
    public var acknowledged: Int64? {
        replies.compactMap { if case .ack(let seq) = $0 { seq } else { nil } }.max()
    }

    public var errors: [WireReplyError] {
        replies.compactMap { if case .error(let error) = $0 { error } else { nil } }
    }

    public var welcome: Welcome? {
        replies.compactMap { if case .welcome(let welcome) = $0 { welcome } else { nil } }.last
    }

    /// Whether the server closed the connection.
    public var isClosed: Bool { !channel.isActive }

    /// Waits until `condition` holds for the replies, or fails after `timeout`.
    @discardableResult
    public func waitFor<T>(timeout: Double = 10, _ what: String, _ condition: @escaping ([WireMessage]) -> T?) async throws -> T {
        try await eventually(timeout: timeout, "\(what); replies so far: \(replies)") { condition(self.replies) }
    }

    /// Waits until the daemon acknowledged `seq`.
    public func waitForAck(_ seq: Int64, timeout: Double = 10) async throws {
        try await waitFor(timeout: timeout, "ack of seq \(seq)") { _ in (self.acknowledged ?? .min) >= seq ? true : nil }
    }

    public func close() async {
        try? await channel.close()
    }
}

final class ReplyInbox: Sendable {
    let messages = NIOLockedValueBox<[WireMessage]>([])
}

/// Decodes the daemon's replies with the same decoder the daemon uses for devices.
final class ReplyCollector: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let inbox: ReplyInbox
    private var decoder = WireDecoder()

    init(inbox: ReplyInbox) {
        self.inbox = inbox
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        unwrapInboundIn(data).withUnsafeReadableBytes { decoder.append($0) }
        while let result = decoder.next() {
            if case .success(let message) = result { inbox.messages.withLockedValue { $0.append(message) } }
        }
    }
}
