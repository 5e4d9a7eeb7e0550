internal import Foundation
internal import Logging
internal import NIOConcurrencyHelpers
public import NIOCore
internal import NIOHTTP1
internal import NIOWebSocket
internal import SessionCore
public import SessionModel

/// `capture.web_*`: browsers, PWAs and WebViews as devices, over a WebSocket (docs/PROTOCOL.md "WebSocket").
public struct WebCaptureSettings: Sendable {
    /// Origins (`https://app.example.org`) whose pages may connect, besides the console's own.
    public var origins: [String] = []
    /// A web device gets a session only by an invitation or a pairing code.
    public var requireCode = true
    /// Its own address, for when the console (which serves `/capture` too) is off; nil: none.
    public var listen: (host: String, port: Int)?
    /// The largest WebSocket frame read: one frame is held whole before it is decoded, so this bounds
    /// each connection's buffer (the library's frames stay far below: an audio chunk is ~44 KB).
    public var maxFrameBytes = 1 << 20
    /// What `maxFrameBytes` may be: room for a hello, at most what `limits.max_message_bytes` allows by default.
    public static let frameBytesRange = 1024...(64 << 20)
    /// Web devices per address (`capture.web_max_per_address`, `capture.web_connections_per_minute`).
    public var limits = WebDeviceLimits()

    public init() {}

    /// Why a browser page from `origin` may not connect to `host` (the request's `Host`), or nil.
    /// No `Origin`: no browser's page (a native client can claim any origin anyway, so it proves nothing).
    public func refusal(origin: String?, host: String?) -> Refusal? {
        guard let origin else { return nil }
        if origins.contains(origin) { return nil }
        if let host, origin == "http://" + host || origin == "https://" + host { return nil }
        return Refusal(.origin, "pages from \(origin) may not capture here: add it to capture.web_origins")
    }
}

/// Where browsers connect as devices: a WebSocket at `/capture`, served by the console's listener
/// (`handOff`) and, with `capture.web_listen`, by a listener of its own (`CaptureServer`). Either way the
/// connection ends up as [WebSocket frames → `WebSocketDeviceFrames` → `DeviceConnectionHandler`].
public final class WebCaptureEndpoint: Sendable {
    public static let path = "/capture"
    public static let libraryPath = "/capture.js"
    /// Where the modules `capture.js` imports are served (`/capture/plist.js`): beside the WebSocket at exactly `/capture`.
    public static let modulesPath = "/capture/"

    private let settings: CaptureSettings
    private let makeDeviceHandler: @Sendable (DeviceTransport) -> DeviceConnectionHandler
    /// The library, `capture.js` and its modules; none when its folder is missing (a build without it).
    public let library: WebCaptureLibrary
    /// The web devices of each address, on both ways in (the console's `/capture` and `capture.web_listen`).
    private let admissions = NIOLockedValueBox(WebDeviceAdmission())
    private let refusals: Refusals
    private let logger: Logger

    init(settings: CaptureSettings, library: WebCaptureLibrary, refusals: Refusals, logger: Logger,
         makeDeviceHandler: @escaping @Sendable (DeviceTransport) -> DeviceConnectionHandler) {
        self.settings = settings
        self.library = library
        self.refusals = refusals
        self.logger = logger
        self.makeDeviceHandler = makeDeviceHandler
    }

    public var web: WebCaptureSettings { settings.current.web }

    /// Whether a page from `origin` (sent to `host`) may connect a web device from `address` (the client a trusted
    /// proxy names, or the peer): nil admits it, and it counts against its address until `release(address)`; a
    /// refusal says why, for the caller to answer, count and log (`Refusals`).
    public func admit(origin: String?, host: String?, address: String) -> Refusal? {
        admit(origin: origin, host: host, address: address, now: Date().timeIntervalSince1970)
    }

    func admit(origin: String?, host: String?, address: String, now: Double) -> Refusal? {
        let web = web
        if let refusal = web.refusal(origin: origin, host: host) { return refusal }
        return admissions.withLockedValue { $0.admit(address, limits: web.limits, now: now) }
    }

    /// A web device `admit` let in has gone (its connection closed, upgraded or not).
    public func release(address: String) {
        admissions.withLockedValue { $0.closed(address) }
    }

    /// For the console: before it upgrades `channel` (a request to `/capture` from `address`, the client a
    /// trusted proxy names or the peer), a handler that puts the device handlers right after the WebSocket
    /// frame decoder once the upgrade is done, before the first frame is read: the console's own WebSocket
    /// handler then sees only the pongs to its pings. The console counted the connection in the descriptor budget.
    public func handOff(_ channel: any Channel, address: String) async throws {
        let handlers = deviceHandlers(address: address, behindConsole: true)
        try await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.addHandler(WebSocketHandOff(handlers: handlers))
        }.get()
    }

    /// `behindConsole`: the console's WebSocket handler follows, and its frames go around the device handler.
    func deviceHandlers(address: String?, behindConsole: Bool) -> @Sendable () -> [any ChannelHandler] {
        let transport = DeviceTransport(address: address, mustPresentCode: web.requireCode, admitted: behindConsole, web: true)
        return { [makeDeviceHandler] in
            let frames = WebSocketDeviceFrames()
            let device = makeDeviceHandler(transport)
            return behindConsole ? [frames, device, WebSocketControlLane(frames: frames)] : [frames, device]
        }
    }

    /// The pipeline of the endpoint's own listener: HTTP/1 with the WebSocket upgrade at `/capture`;
    /// other requests get the library's files or a short answer (`WebCaptureHTTPAnswers`), a refused upgrade
    /// its status and why (`refused`, which the upgrade's decision leaves for it).
    func configureOwnListener(_ channel: any Channel) throws {
        let web = web
        let refused = NIOLockedValueBox<Refusal?>(nil)
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: web.maxFrameBytes,
            shouldUpgrade: { [self] channel, head in
                guard Self.path(of: head.uri) == Self.path else { return channel.eventLoop.makeSucceededFuture(nil) }
                let address = channel.remoteAddress?.ipAddress ?? "unknown"
                if let refusal = admit(origin: head.headers.first(name: "origin"), host: head.headers.first(name: "host"), address: address) {
                    refused.withLockedValue { $0 = refusal }
                    refusals.record(refusal, of: "a web device", from: address, http: true, now: Date().timeIntervalSince1970, logger: logger)
                    return channel.eventLoop.makeSucceededFuture(nil)
                }
                channel.closeFuture.whenComplete { _ in self.release(address: address) }
                return channel.eventLoop.makeSucceededFuture(HTTPHeaders())
            },
            upgradePipelineHandler: { [self] channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(deviceHandlers(address: nil, behindConsole: false)())
                }
            })
        let answers = WebCaptureHTTPAnswers(library: library, refused: refused)
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
            withServerUpgrade: (upgraders: [upgrader], completionHandler: { context in
                context.pipeline.syncOperations.removeHandler(name: WebCaptureHTTPAnswers.name, promise: nil)
            }))
        try channel.pipeline.syncOperations.addHandler(answers, name: WebCaptureHTTPAnswers.name)
    }
}

/// Waits, after the console's upgrade handler, for the upgrade to complete, then puts the device's handlers
/// after the WebSocket frame decoder the upgrade added (before the frames buffered meanwhile are read) and goes.
final class WebSocketHandOff: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let handlers: @Sendable () -> [any ChannelHandler]

    init(handlers: @escaping @Sendable () -> [any ChannelHandler]) {
        self.handlers = handlers
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case HTTPServerUpgradeEvents.upgradeComplete = event else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        do {
            let pipeline = context.pipeline.syncOperations
            let decoder = try pipeline.context(handlerType: ByteToMessageHandler<WebSocketFrameDecoder>.self)
            try pipeline.addHandlers(handlers(), position: .after(decoder.handler))
            pipeline.removeHandler(context: context, promise: nil)
        } catch {
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
    }
}

/// The endpoint's own listener, for requests that are no WebSocket upgrade to `/capture`: the library, or why not.
final class WebCaptureHTTPAnswers: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let name = "WebCaptureHTTPAnswers"

    private let library: WebCaptureLibrary
    /// Why the upgrade was refused, when it was.
    private let refused: NIOLockedValueBox<Refusal?>

    init(library: WebCaptureLibrary, refused: NIOLockedValueBox<Refusal?>) {
        self.library = library
        self.refused = refused
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let path = WebCaptureEndpoint.path(of: head.uri)
        var headers = HTTPHeaders([("Cache-Control", "no-cache"), ("X-Content-Type-Options", "nosniff")])
        let status: HTTPResponseStatus
        var body: ByteBuffer
        if head.method == .GET || head.method == .HEAD, let file = library.file(at: path) {
            status = .ok
            body = file
            headers.add(name: "Content-Type", value: "text/javascript; charset=utf-8")
            WebCaptureEndpoint.libraryHeaders.forEach { headers.add(name: $0.0, value: $0.1) }
        } else {
            let reason: String
            if path == WebCaptureEndpoint.path, let refusal = refused.withLockedValue({ $0 }) {
                (status, reason) = (HTTPResponseStatus(statusCode: refusal.reason.httpStatus), refusal.message)
                if let retryAfter = refusal.retryAfter { headers.add(name: "Retry-After", value: String(retryAfter)) }
            } else if path == WebCaptureEndpoint.path {
                (status, reason) = (.upgradeRequired, "connect with a WebSocket (docs/PROTOCOL.md, \"WebSocket\")")
            } else if path.hasPrefix(WebCaptureEndpoint.modulesPath) {
                (status, reason) = (.notFound, "\(path) is no module of muEval's web capture library")
            } else {
                (status, reason) = (.notFound, "this address serves muEval's web capture: \(WebCaptureEndpoint.path), \(WebCaptureEndpoint.libraryPath) and its modules under \(WebCaptureEndpoint.modulesPath)")
            }
            body = context.channel.allocator.buffer(string: reason + "\n")
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        }
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Connection", value: "close")
        if head.method == .HEAD { body.clear() }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

extension WebCaptureEndpoint {
    /// A request target's path, without its query.
    static func path(of uri: String) -> String {
        uri.firstIndex(of: "?").map { String(uri[..<$0]) } ?? uri
    }

    /// The library is a module any page imports across origins: CORS lets it, and nothing in it is secret.
    public static let libraryHeaders = [("Access-Control-Allow-Origin", "*"), ("Cross-Origin-Resource-Policy", "cross-origin")]

    /// The library's folder (`capture.js`, `capture/`): where `make install` and the Debian package put it
    /// (PREFIX/share/mueval/web, beside the executable's bin/), else the repository's (a build from source);
    /// none when neither has `capture.js`.
    static func loadLibrary(logger: Logger) -> WebCaptureLibrary {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [
            executable.appendingPathComponent("../share/mueval/web").standardizedFileURL,
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../CaptureLibrary/Web").standardizedFileURL,
        ]
        for candidate in candidates {
            if let library = WebCaptureLibrary.load(from: candidate, logger: logger) { return library }
        }
        logger.warning("capture.js is not installed (looked in \(candidates.map(\.path).joined(separator: ", "))): web apps cannot load it from here")
        return .notInstalled
    }
}
