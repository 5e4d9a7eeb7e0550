internal import Foundation
internal import HTTPTypes
internal import Logging
internal import NIOCore
internal import NIOHTTP1
internal import SessionCore
internal import SessionModel

/// Whether a request may become a web device (docs/PROTOCOL.md, "WebSocket"): a WebSocket upgrade at `/capture`
/// whose `Host` names the console, from a page of an allowed origin, from an address under its web devices' caps
/// (`ConsoleWebCapture.admit`). Any other request is not this door's to decide. A refusal is counted and logged
/// here (once a minute per address and reason, `Refusals`); `WebDeviceGate` answers it.
struct WebDeviceDoor: Sendable {
    enum Decision: Equatable {
        /// Not an upgrade at `/capture`: the router decides.
        case pass
        /// A web device from `address`: it counts there until its connection closes.
        case admitted(address: String)
        case refused(Refusal)
    }

    let web: ConsoleWebCapture
    let hosts: ConsoleHosts
    let proxies: ConsoleProxies
    let refusals: Refusals
    let logger: Logger

    /// `peer`: the connection's remote address.
    func decide(_ head: HTTPRequestHead, peer: String) -> Decision {
        let path = head.uri.firstIndex(of: "?").map { String(head.uri[..<$0]) } ?? head.uri
        guard path == web.path, head.headers[canonicalForm: "upgrade"].contains(where: { $0.lowercased() == "websocket" }) else { return .pass }
        var fields = HTTPFields()
        for (name, value) in head.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        let address = proxies.client(peer: peer, headers: fields)
        let host = head.headers.first(name: "host")
        let refusal = hosts.allows(host)
            ? web.admit(head.headers.first(name: "origin"), host, address)
            : Refusal(.host, "this server does not answer to that host name: reach it by the address the lab gave, or add the name to console.allowed_hosts")
        guard let refusal else { return .admitted(address: address) }
        refusals.record(refusal, of: "a web device", from: address, http: true, now: Date().timeIntervalSince1970, logger: logger)
        return .refused(refusal)
    }
}

/// Before the console's WebSocket upgrade handler, for the first request of a connection: a web device's upgrade
/// that `WebDeviceDoor` refuses is answered here with the refusal's status, `Retry-After` for a cap, and its reason
/// as one line of text, then the connection closes. Hummingbird answers every upgrade its router turns down with
/// an empty 400 and no log line, which told a lab's 150 phones behind one address nothing (issue 52). Anything
/// else goes on to Hummingbird untouched, and the gate leaves the pipeline: a later request on the connection
/// cannot be an upgrade (Hummingbird sends those to a new connection). `answered` says whether the gate answered,
/// so that the connection is not also served.
final class WebDeviceGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let decide: @Sendable (HTTPRequestHead, String) -> WebDeviceDoor.Decision
    private let release: @Sendable (String) -> Void
    private let answered: EventLoopPromise<Bool>
    private var refusing = false

    init(decide: @escaping @Sendable (HTTPRequestHead, String) -> WebDeviceDoor.Decision, release: @escaping @Sendable (String) -> Void,
         answered: EventLoopPromise<Bool>) {
        self.decide = decide
        self.release = release
        self.answered = answered
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The rest of a refused request (its end) goes nowhere: the upgrade handler never saw its head.
        guard !refusing else { return }
        guard case .head(let head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        switch decide(head, context.channel.remoteAddress?.ipAddress ?? "unknown") {
        case .pass:
            break
        case .admitted(let address):
            context.channel.closeFuture.whenComplete { [release] _ in release(address) }
        case .refused(let refusal):
            refusing = true
            answered.succeed(true)
            answer(context, refusal, version: head.version)
            return
        }
        answered.succeed(false)
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        answered.succeed(false)
        context.fireErrorCaught(error)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Never left pending: closed before a request, the connection has nothing to serve anyway.
        answered.succeed(false)
    }

    private func answer(_ context: ChannelHandlerContext, _ refusal: Refusal, version: HTTPVersion) {
        let body = context.channel.allocator.buffer(string: refusal.message + "\n")
        var headers = HTTPHeaders([
            ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(body.readableBytes)), ("Connection", "close"),
            ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
        ])
        if let retryAfter = refusal.retryAfter { headers.add(name: "Retry-After", value: String(retryAfter)) }
        let status = HTTPResponseStatus(statusCode: refusal.reason.httpStatus)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
