internal import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix
internal import NIOWebSocket

/// Why a WebSocket to `/capture` was not opened: the status the upgrade was answered with (0: the connection
/// closed without an answer), its `Retry-After`, and its body (muevald's one-line reason).
public struct WebSocketRefused: Error, CustomStringConvertible {
    public let status: Int
    public var retryAfter: String?
    public var reason = ""
    public var description: String { "the WebSocket upgrade was answered \(status): \(reason)" }
}

extension TestDevice {
    /// A browser's device: a WebSocket to `url`'s host and port at its path (`/capture`), sending `origin` as a
    /// page would; each message it sends is one text frame; from the loopback address `source` when given.
    /// Throws `WebSocketRefused` when no upgrade happens.
    public static func connectWebSocket(host: String = "127.0.0.1", port: Int, path: String = "/capture", origin: String?,
                                        source: String? = nil) async throws -> TestDevice {
        let inbox = ReplyInbox()
        let upgraded = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: Void.self)
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        let channel = try await bootstrap
            .channelInitializer { channel in
                let upgrader = NIOWebSocketClientUpgrader(requestKey: Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString(),
                                                          maxFrameSize: 1 << 24) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        // Bytes are frames from now on: the refusal's watch (before the frame decoder) goes.
                        channel.pipeline.syncOperations.removeHandler(name: UpgradeRefusal.name, promise: nil)
                        try channel.pipeline.syncOperations.addHandlers([TextFrames(), ReplyCollector(inbox: inbox)])
                        upgraded.succeed()
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                    try channel.pipeline.syncOperations.addHandler(UpgradeRefusal(upgraded: upgraded), name: UpgradeRefusal.name)
                }
            }
            .connect(host: host, port: port).get()
        var headers = HTTPHeaders([("Host", "\(host):\(port)"), ("Content-Length", "0")])
        if let origin { headers.add(name: "Origin", value: origin) }
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        do {
            try await upgraded.futureResult.get()
        } catch {
            try? await channel.close()
            throw error
        }
        return TestDevice(channel: channel, inbox: inbox)
    }
}

/// Before the upgrade: a response that is no upgrade fails it with its status, `Retry-After` and body, once whole.
private final class UpgradeRefusal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    static let name = "UpgradeRefusal"
    private let upgraded: EventLoopPromise<Void>
    private var refused = WebSocketRefused(status: 0)

    init(upgraded: EventLoopPromise<Void>) {
        self.upgraded = upgraded
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            refused = WebSocketRefused(status: Int(head.status.code), retryAfter: head.headers.first(name: "retry-after"))
        case .body(let body):
            refused.reason += String(buffer: body)
        case .end:
            upgraded.fail(refused)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        upgraded.fail(refused)
        context.fireChannelInactive()
    }
}

/// Bytes out as masked text frames (a client masks), text frames' payloads in as bytes; the rest is dropped.
private final class TextFrames: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if frame.opcode == .text { context.fireChannelRead(wrapInboundOut(frame.unmaskedData)) }
        if frame.opcode == .connectionClose { context.close(promise: nil) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: unwrapOutboundIn(data))
        context.write(wrapOutboundOut(frame), promise: promise)
    }
}
