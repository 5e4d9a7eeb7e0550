import Glibc
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// How a connection attempt ended, as async_websocket.py's `connect` ends: a socket, a refused upgrade, or a
/// failure named as Python names its exception (web_phones.py counts failures by that name).
enum ConnectOutcome {
    case upgraded(PhoneSocket)
    case refused(Refusal)
    case failed(String)
}

/// muevald's WebSocket for phones: ws://HOST:PORT/capture, with the console's Origin.
struct Endpoint {
    var host: String
    var port: Int
    var origin: String
    var path = "/capture"
}

/// One attempt to open a phone's WebSocket. It ends once, within DELIVERY.connectTimeoutMs for the connect
/// and the upgrade together (as async_websocket.py's wait_for around both), whichever handler learns first.
final class ConnectAttempt {
    private var deliver: ((ConnectOutcome) -> Void)?
    private var timeout: Scheduled<Void>?
    /// Known once the channel exists: what the timeout closes.
    var channel: (any Channel)?

    private init(deliver: @escaping (ConnectOutcome) -> Void) {
        self.deliver = deliver
    }

    var isOpen: Bool { deliver != nil }

    func finish(_ outcome: ConnectOutcome) {
        guard let deliver else { return }
        self.deliver = nil
        timeout?.cancel()
        (timeout, channel) = (nil, nil)  // the channel keeps its handlers, and they this attempt, until it closes
        deliver(outcome)
    }

    /// Connects from `source` (bound before connecting: a room's phones come from many loopback addresses)
    /// and asks for the upgrade; `then` hears the outcome on `loop`. Replies and the socket's end go to `events`.
    static func open(_ endpoint: Endpoint, from source: String, on loop: any EventLoop, events: any PhoneSocketEvents,
                     then: @escaping (ConnectOutcome) -> Void) {
        let attempt = ConnectAttempt(deliver: then)
        let isolated = loop.assumeIsolated()
        attempt.timeout = isolated.scheduleTask(in: .seconds(Int64(Delivery.connectTimeout))) {
            let channel = attempt.channel
            attempt.finish(.failed("TimeoutError"))
            channel?.close(promise: nil)
        }
        let local: SocketAddress, remote: SocketAddress
        do {
            local = try SocketAddress(ipAddress: source, port: 0)
            remote = try SocketAddress(ipAddress: endpoint.host, port: endpoint.port)
        } catch {
            isolated.execute { attempt.finish(.failed("OSError")) }
            return
        }
        let boundAttempt = NIOLoopBound(attempt, eventLoop: loop)
        let boundEvents = NIOLoopBound(events, eventLoop: loop)
        ClientBootstrap(group: loop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            // async_websocket.py's `buffered`: a phone stops sending while 1 MiB waits unsent (MAX_BUFFERED).
            .channelOption(.writeBufferWaterMark, value: .init(low: Delivery.maxBuffered, high: Delivery.maxBuffered))
            .connectTimeout(.seconds(Int64(Delivery.connectTimeout)))
            .bind(to: local)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    boundAttempt.value.channel = channel
                    try configure(channel, endpoint: endpoint, attempt: boundAttempt, events: boundEvents)
                }
            }
            .connect(to: remote)
            .assumeIsolated()
            .whenFailure { error in attempt.finish(.failed(failureName(error))) }
    }

    /// HTTP/1.1 with NIO's client upgrader for WebSocket; the handshake handler after it hears a refusal.
    private static func configure(_ channel: any Channel, endpoint: Endpoint, attempt: NIOLoopBound<ConnectAttempt>,
                                  events: NIOLoopBound<any PhoneSocketEvents>) throws {
        let encoder = HTTPRequestEncoder()
        // Bytes after the 101 (a reply in the same segment) go on to the WebSocket decoder.
        let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
        let handshake = HandshakeHandler(endpoint: endpoint, attempt: attempt.value)
        let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: PhoneSocket.maxServerFrame, automaticErrorHandling: false) {
            channel, _ in
            channel.eventLoop.makeCompletedFuture {
                let socket = PhoneSocket(events: events.value)
                try channel.pipeline.syncOperations.addHandler(socket)
                attempt.value.finish(.upgraded(socket))
            }
        }
        let upgrade = NIOHTTPClientUpgradeHandler(upgraders: [upgrader], httpHandlers: [encoder, decoder, handshake],
                                                  upgradeCompletionHandler: { _ in })
        try channel.pipeline.syncOperations.addHandlers([encoder, decoder, upgrade, handshake])
    }

    /// The name of the exception async_websocket.py's `connect` would raise.
    static func failureName(_ error: any Error) -> String {
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return "ConnectionRefusedError"
            case ECONNRESET: return "ConnectionResetError"
            case ECONNABORTED: return "ConnectionAbortedError"
            case EPIPE: return "BrokenPipeError"
            case ETIMEDOUT: return "TimeoutError"
            default: return "OSError"
            }
        }
        if case ChannelError.connectTimeout = error { return "TimeoutError" }
        return "Closed"  // no answer to the upgrade, or a wrong one
    }
}

/// Sends the upgrade request and, when the answer is other than 101, reads its status, body and Retry-After
/// (issue 52 item 2 answers refusals with 429/503 and Retry-After). Removed from the pipeline at the upgrade.
final class HandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let endpoint: Endpoint
    private let attempt: ConnectAttempt
    /// A refusal's head, and its body so far: the body is read up to its Content-Length (at most 64 KB).
    private var refusal: (head: HTTPResponseHead, wanted: Int)?
    private var body: [UInt8] = []

    init(endpoint: Endpoint, attempt: ConnectAttempt) {
        self.endpoint = endpoint
        self.attempt = attempt
    }

    func channelActive(context: ChannelHandlerContext) {
        // NIOHTTPClientUpgradeHandler adds Connection, Upgrade, Sec-WebSocket-Key and -Version.
        let headers = HTTPHeaders([("Host", "\(endpoint.host):\(endpoint.port)"), ("Origin", endpoint.origin)])
        context.write(wrapOutboundOut(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: endpoint.path,
                                                            headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard attempt.isOpen else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            let length = Int(head.headers.first(name: "content-length") ?? "") ?? 0
            refusal = (head, min(max(length, 0), 65536))
            if refusal?.wanted == 0 { refuse(context) }
        case .body(let part):
            body += part.readableBytesView.prefix(max(0, (refusal?.wanted ?? 0) - body.count))
            if body.count >= refusal?.wanted ?? 0 { refuse(context) }
        case .end:
            refuse(context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // The stream ended before the answer was whole: what came of a refusal's body counts, as asyncio's partial read.
        if refusal != nil { refuse(context) } else { attempt.finish(.failed("Closed")) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        attempt.finish(.failed(ConnectAttempt.failureName(error)))
        context.close(promise: nil)
    }

    /// Records the refusal and closes the socket (async_websocket.py aborts it).
    private func refuse(_ context: ChannelHandlerContext) {
        guard let head = refusal?.head, attempt.isOpen else { return }
        // Seconds, as muevald sends it (an HTTP date would be a server this does not measure: nil, as in Python).
        let retryAfter = head.headers.first(name: "retry-after").flatMap {
            Double(String($0.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()))
        }.map { max(0, $0) }
        attempt.finish(.refused(Refusal(status: Int(head.status.code), body: String(decoding: body, as: UTF8.self),
                                        retryAfter: retryAfter)))
        context.close(promise: nil)
    }
}
