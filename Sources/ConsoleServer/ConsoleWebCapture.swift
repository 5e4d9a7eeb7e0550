internal import HTTPTypes
internal import Hummingbird
internal import HummingbirdWebSocket
public import NIOCore
public import SessionModel

/// The capture server's way in for browsers, as the console serves it (the capture server is a peer module:
/// muevald hands its parts over). `handOff` readies a channel about to be upgraded at `path` for the
/// device handlers; `admit` says whether a page's origin (sent to a host) may connect a web device from an
/// address now, which then counts until `release` (docs/SECURITY.md, "Refusals that say why").
public struct ConsoleWebCapture: Sendable {
    public var path: String
    public var libraryPath: String
    /// Where the modules `capture.js` imports are served (`/capture/`); `path` itself is the WebSocket's alone.
    public var modulesPath: String
    /// The library's files by the path each is served at (`/capture.js`, `/capture/plist.js`); empty when not installed.
    public var library: [String: ByteBuffer]
    public var libraryHeaders: [(String, String)]
    public var maxFrameBytes: Int
    /// nil: admitted, and counted against `address` until `release(address)`.
    public var admit: @Sendable (_ origin: String?, _ host: String?, _ address: String) -> Refusal?
    public var release: @Sendable (_ address: String) -> Void
    public var handOff: @Sendable (_ channel: any Channel, _ address: String) async throws -> Void
    /// `capture.web_origins` now: the apps whose images and fonts a page replay may fetch (`replay.remote_assets`).
    public var origins: @Sendable () -> [String]

    public init(path: String, libraryPath: String, modulesPath: String, library: [String: ByteBuffer], libraryHeaders: [(String, String)], maxFrameBytes: Int,
                admit: @escaping @Sendable (String?, String?, String) -> Refusal?,
                release: @escaping @Sendable (String) -> Void,
                handOff: @escaping @Sendable (any Channel, String) async throws -> Void,
                origins: @escaping @Sendable () -> [String] = { [] }) {
        self.origins = origins
        self.path = path
        self.libraryPath = libraryPath
        self.modulesPath = modulesPath
        self.library = library
        self.libraryHeaders = libraryHeaders
        self.maxFrameBytes = maxFrameBytes
        self.admit = admit
        self.release = release
        self.handOff = handOff
    }
}

extension ConsoleServer {
    /// Browsers as devices (docs/PROTOCOL.md, "WebSocket"): the library, and the WebSocket whose frames
    /// the capture server's device handlers take over as the upgrade completes (`ConsoleWebCapture.handOff`).
    /// This handler only holds the connection open; it sees no device's message.
    func registerWebCapture(_ web: ConsoleWebCapture, on devices: RouterGroup<ConsoleContext>, library: Router<ConsoleContext>) {
        // Looked up by the request's exact path (not decoded), so `/capture/../x` or `%2e%2e` finds nothing. The
        // wildcard needs a component after `/capture/`: `/capture` itself stays the WebSocket's.
        let serve: @Sendable (Request, ConsoleContext) async throws -> Response = { request, _ in
            guard !web.library.isEmpty else { throw ConsoleError.notFound("capture.js is not installed on this server") }
            guard let script = web.library[request.uri.path] else { throw ConsoleError.notFound("\(request.uri.path) is no module of muEval's web capture library") }
            var headers: HTTPFields = [.contentType: "text/javascript; charset=utf-8", .cacheControl: "no-cache"]
            for (name, value) in web.libraryHeaders { if let name = HTTPField.Name(name) { headers[name] = value } }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: script))
        }
        library.get(RouterPath(web.libraryPath), use: serve)
        library.get(RouterPath(web.modulesPath + "**"), use: serve)
        // `WebDeviceGate` admitted the device (its origin, its address's caps) before this router saw the request.
        devices.ws(RouterPath(web.path), shouldUpgrade: { _, context in
            try await web.handOff(context.channel, context.address)
            return .upgrade([:])
        }) { [shutdown, connections, logger] inbound, _, context in
            let channel = context.requestContext.channel
            connections.upgraded(channel)
            // The device's handlers take every data frame: one here means the hand-off did not happen, and the
            // device's events would vanish unacknowledged. Closed loudly instead; the device resends them.
            try await LiveStream.untilClosed(inbound, channel: channel, or: shutdown, onMessage: {
                logger.error("a web device's message reached the console's own WebSocket handler: the capture hand-off failed; closing the connection")
                channel.close(promise: nil)
            }) { try await channel.closeFuture.get() }
        }
    }
}
