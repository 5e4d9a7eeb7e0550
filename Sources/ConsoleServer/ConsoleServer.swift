internal import MuEvalWire
public import SessionCore
internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import HummingbirdCore
internal import HummingbirdTLS
internal import HummingbirdWebSocket
public import Logging
internal import NIOConcurrencyHelpers
public import NIOCore
internal import NIOSSL
public import ServiceLifecycle
public import SessionModel
internal import WireProtocol
internal import ReportCritique

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

    public init(path: String, libraryPath: String, modulesPath: String, library: [String: ByteBuffer], libraryHeaders: [(String, String)], maxFrameBytes: Int,
                admit: @escaping @Sendable (String?, String?, String) -> Refusal?,
                release: @escaping @Sendable (String) -> Void,
                handOff: @escaping @Sendable (any Channel, String) async throws -> Void) {
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

/// The web console, the thesis's "Mobile Monitor" (section 2.7): one HTTP server inside muevald
/// with the pages, their JSON API, two WebSockets and `/metrics` (docs/CONSOLE.md).
public final class ConsoleServer: Service, Sendable {
    private let settings: ConsoleSettings
    private let environment: ConsoleEnvironment
    private let group: any EventLoopGroup
    private let logger: Logger
    /// Called once the console listens, or once it has failed to: either way muevald is ready.
    private let onReady: @Sendable () -> Void
    private let access: ConsoleAccess
    private let rates = SessionRates()
    private let updates = ConsoleUpdates()
    private let metrics = ConsoleMetrics()
    private let reports: ConsoleReports
    private let boundPort = NIOLockedValueBox<Int?>(nil)
    /// Where browsers and phones reach the console, once it listens.
    private let consoleURL: @Sendable () -> String?
    private let shutdown = ConsoleShutdown()
    /// Why the console could not start, for `muevalctl console`.
    private let failure = NIOLockedValueBox<String?>(nil)
    /// The certificate and key, once the console serves HTTPS.
    private let tls = NIOLockedValueBox<ConsoleTLS?>(nil)
    /// Admission against the descriptor budget, and the timeouts before a first request.
    private let connections: ConsoleConnections
    /// Browsers as devices: the WebSocket at `/capture` and the library at `/capture.js` and `/capture/…`.
    private let webCapture: ConsoleWebCapture?

    public init(settings: ConsoleSettings, environment: ConsoleEnvironment, group: any EventLoopGroup, logger: Logger,
                ledger: ConnectionLedger, limits: ConsoleConnectionLimits = ConsoleConnectionLimits(), webCapture: ConsoleWebCapture? = nil,
                onReady: @escaping @Sendable () -> Void = {}) {
        self.webCapture = webCapture
        connections = ConsoleConnections(ledger: ledger, limits: limits, refusals: environment.counters.refusals, logger: logger)
        self.settings = settings
        self.environment = environment
        self.group = group
        self.logger = logger
        self.onReady = onReady
        access = ConsoleAccess(limits: settings.access)
        reports = ConsoleReports(
            source: environment.reports, dataDirectory: environment.dataDirectory,
            configurations: settings.reportConfigurations.map { ReportConfigurationStore(directory: $0) } ?? ReportConfigurationStore(),
            logger: logger)
        consoleURL = { [boundPort, settings] in boundPort.withLockedValue { $0 }.map { Self.baseURL(settings: settings, port: $0) } }
    }

    /// A single-use login link for `muevalctl console`.
    public func issueLoginLink(now: Double) throws -> ConsoleLoginLink {
        let base = try baseURL()
        let (code, expires) = access.issueCode(now: now)
        return ConsoleLoginLink(url: base + "/login?code=" + code, expires: expires)
    }

    /// Where browsers and phones reach the console (no trailing `/`): for login and enrolment links.
    public func baseURL() throws -> String {
        if let failure = failure.withLockedValue({ $0 }) {
            throw ConsoleUnavailable("the web console could not start: \(failure) (see muevald's log)")
        }
        guard let url = consoleURL() else {
            throw ConsoleUnavailable("the web console is still starting; try again in a moment")
        }
        return url
    }

    /// Where browsers reach the console: `console.public_url`, else the address it listens on.
    private static func baseURL(settings: ConsoleSettings, port: Int) -> String {
        if let publicURL = settings.publicURL, !publicURL.isEmpty {
            return publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        }
        let scheme = settings.usesTLS ? "https" : "http"
        var host = settings.host
        if host == "0.0.0.0" || host == "::" || host.isEmpty { host = ProcessInfo.processInfo.hostName }
        if host.contains(":") { host = "[" + host + "]" }
        return "\(scheme)://\(host):\(port)"
    }

    /// Reads the TLS certificate and key again (SIGHUP, `systemctl reload`): the next connection gets
    /// the new certificate; files that cannot be used leave the running one in place.
    public func reloadTLS() -> ConsoleTLSReload {
        tls.withLockedValue { $0 }?.reload() ?? .notConfigured
    }

    /// Serves until shutdown. A console that cannot start (its port taken, a bad certificate) is
    /// logged and reported to `muevalctl console`, never taken down with it: devices and the control
    /// socket keep working, and no session is lost for want of a web page.
    public func run() async throws {
        do {
            try await serve()
        } catch {
            failure.withLockedValue { $0 = "\(error)" }
            logger.error("the web console cannot serve on \(HostPort.text(host: settings.host, port: settings.port)): \(error); muevald goes on without it (console.listen, console.tls_* in the configuration)")
            onReady()
            try? await gracefulShutdown()
        }
    }

    private func serve() async throws {
        let assets = try ConsoleAssets.bundled()
        guard let loginPage = assets[ConsolePage.login.file] else { throw ConsoleError.assetsMissing(ConsolePage.login.file) }
        let visitors = ConsoleVisitors()
        let quotas = VisitorQuotas(limits: settings.visitors)
        let hosts = ConsoleHosts(settings: settings)
        let proxies = ConsoleProxies(settings.trustedProxies)
        let gate = ConsoleGate(hosts: hosts, access: access, loginPage: loginPage, visitors: visitors,
                               quotas: quotas, proxies: proxies, secureCookies: settings.usesTLS)

        let router = Router(context: ConsoleContext.self)
        gate.guardEveryAnswer(of: router)
        registerOpenRoutes(on: router, assets: assets)
        let loggedIn = gate.loggedIn(router)
        registerPages(on: loggedIn, assets: assets)
        let api = ConsoleAPI(environment: environment, settings: settings, rates: rates, reports: reports,
                             publicURL: consoleURL)
        api.register(on: loggedIn)
        ConsoleVisitorAPI(environment: environment, api: api, visitors: visitors, quotas: quotas, assets: assets)
            .register(on: gate.forVisitors(router))

        // Decides whether an upgrade happens (one it refuses gets an empty 400 from the upgrade handler: web devices'
        // refusals are answered before, by `WebDeviceGate`).
        let webSockets = Router(context: ConsoleContext.self)
        gate.guardEveryAnswer(of: webSockets)
        registerWebSockets(on: gate.loggedIn(webSockets))
        if let webCapture { registerWebCapture(webCapture, on: gate.forWebDevices(webSockets), library: router) }

        if (settings.tlsCertificate == nil) != (settings.tlsKey == nil) {
            throw ConsoleError.misconfigured("console.tls_certificate and console.tls_key go together: set both, or neither")
        }
        var sslContext: NIOSSLContext?
        if let certificate = settings.tlsCertificate, let key = settings.tlsKey {
            let tls = try ConsoleTLS(certificate: certificate, key: key)
            sslContext = try NIOSSLContext(configuration: tls.configuration)
            self.tls.withLockedValue { $0 = tls }
        } else if !settings.isLoopbackOnly {
            guard settings.allowPlaintext else {
                throw ConsoleError.misconfigured("console.listen \(settings.host) reaches beyond this machine and the console has no TLS: set console.tls_certificate and console.tls_key, or console.allow_plaintext = true to accept plaintext (docs/SECURITY.md)")
            }
            logger.warning("the web console listens on \(settings.host), beyond this machine, without TLS (console.allow_plaintext): anyone on the network can read what passes, login links included")
        }
        let door = webCapture.map { WebDeviceDoor(web: $0, hosts: hosts, proxies: proxies, refusals: environment.counters.refusals, logger: logger) }
        let server = Self.serverBuilder(webSockets: webSockets, tls: sslContext, connections: connections,
                                        maxFrameBytes: webCapture?.maxFrameBytes, door: door)
        let application = Application(
            router: router, server: server,
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: nil),
            onServerRunning: { [boundPort, onReady, logger, settings, environment] channel in
                let port = channel.localAddress?.port ?? settings.port
                boundPort.withLockedValue { $0 = port }
                // Invited phones' welcome links the questionnaire page here.
                environment.registry.consoleAddress.set(Self.baseURL(settings: settings, port: port))
                logger.notice("web console on \(settings.usesTLS ? "https" : "http")://\(settings.host):\(port) (`muevalctl console` prints a login link)")
                onReady()
            },
            eventLoopGroupProvider: .shared(group), logger: logger)

        // Taken before the server runs, so that the pages hear of every change from then on.
        let lifecycle = environment.registry.events.subscribe()
        let finishedReports = environment.reports.follow()
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { await self.followLifecycle(lifecycle) }
            tasks.addTask { [reports, updates, environment] in
                await reports.follow(finishedReports, updates: updates, registry: environment.registry)
            }
            tasks.addTask { await self.sampleRates() }
            // The application hears the shutdown itself and returns once its connections are done; the
            // open WebSockets end first, told by the live tail and the updates channel.
            try await withGracefulShutdownHandler {
                try await application.run()
            } onGracefulShutdown: { [environment, updates, shutdown] in
                environment.liveTail.closeAll(now: Date().timeIntervalSince1970)
                updates.finishAll()
                shutdown.fire()
            }
            lifecycle.cancel()
            tasks.cancelAll()
        }
    }

    // MARK: Pages

    /// What needs no login: the pages' own code (no data), the login exchange and the counters, each with its own checks.
    private func registerOpenRoutes(on router: Router<ConsoleContext>, assets: ConsoleAssets) {
        router.get("/assets/:file") { _, context in
            guard let name = context.parameters.get("file", as: String.self), let asset = assets[name], !name.hasSuffix(".html") else {
                throw ConsoleError.notFound("no such file")
            }
            return ConsoleResponse.asset(asset)
        }
        router.get("/login") { [access, settings] request, _ in
            let code = request.uri.queryParameters.get("code", as: String.self) ?? ""
            guard case .loggedIn(let login) = access.redeem(code: code, now: Date().timeIntervalSince1970) else {
                return ConsoleResponse.error(.forbidden, "this login link was already used or has expired: run `muevalctl console` for a new one")
                    .withHTML(Self.refusedPage)
            }
            var response = Response(status: .seeOther, headers: [.location: "/"])
            response.setCookie(Self.loginCookie(login.id, maxAge: Int(saturating: settings.access.sessionSeconds), settings: settings))
            return response
        }
        router.get("/metrics") { [metrics, environment] _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.scrape(environment.board.status()))))
        }
    }

    private func registerPages(on router: RouterGroup<ConsoleContext>, assets: ConsoleAssets) {
        for (path, page) in ConsolePage.routed {
            router.get(RouterPath(path)) { _, _ in
                guard let asset = assets[page.file] else { throw ConsoleError.assetsMissing(page.file) }
                return ConsoleResponse.asset(asset)
            }
        }
        // Ends the login on the server, so that the cookie, wherever a copy of it is, gets a 401 from now
        // on; `LoginCheck` and `CSRFCheck` have checked the cookie, the CSRF token and the origin.
        router.post("/api/logout") { [access, settings] _, context in
            if let login = context.login { access.logout(login.id) }
            var response = Response(status: .noContent)
            response.setCookie(Self.loginCookie("", maxAge: 0, settings: settings))
            return response
        }
        router.get("/sessions/:session/reports/:name/**") { [reports] _, context in
            guard let session = context.parameters.get("session", as: Int64.self),
                  let name = context.parameters.get("name", as: String.self), ReportLocations.directoryName(name) == name else {
                throw ConsoleError.notFound("no such report file")
            }
            let parts = context.parameters.getCatchAll()
            // The page is offered before its screenshots are all copied into its folder (docs/REPORTS.md, "When a
            // report is ready"): until then, and for one missing, the session file has the image.
            let blob = ScreenshotCopy.sha256(of: parts).map { "/api/sessions/\(session)/blobs/\($0)" }
            if let blob, reports.source.copyingScreenshots(session, name) { return Self.redirect(to: blob) }
            return try await Self.reportFile(in: reports.locations.session(session, report: name), parts: parts, missing: blob.map(Self.redirect))
        }
        // A study's reports, those asked for here and the one its completion wrote (DATA/reports/studies/NAME/).
        router.get("/studies/:study/report/**") { [reports] _, context in
            guard let study = context.parameters.get("study", as: String.self), (try? StudyError.checkName(study, as: "study name")) != nil else {
                throw ConsoleError.notFound("no such report file")
            }
            return try await Self.reportFile(in: reports.locations.study(study), parts: context.parameters.getCatchAll())
        }
        // Where the completion's report was served before it shared the study's folder: links given out still work.
        router.get("/studies/:study/completed/**") { request, context in
            guard let study = context.parameters.get("study", as: String.self), (try? StudyError.checkName(study, as: "study name")) != nil,
                  request.uri.path.hasPrefix("/studies/\(study)/completed/") else {
                throw ConsoleError.notFound("no such report file")
            }
            let file = request.uri.path.dropFirst("/studies/\(study)/completed/".count)
            return Response(status: .movedPermanently, headers: [.location: "/studies/\(study)/report/" + file])
        }
    }

    /// HTTP/1 with the WebSocket upgrade, behind the connection guard: keep-alive connections close
    /// after `console.idle_timeout`, WebSockets whose peer answers no ping after `console.websocket_ping`
    /// (Hummingbird sets neither by default before a first request, nor an idle limit at all).
    /// `maxFrameBytes`: web devices' frames (`capture.web_max_frame_bytes`) when `/capture` is served, else Hummingbird's default;
    /// `door`: web devices' upgrades, decided and refusals answered before Hummingbird's upgrade handler.
    private static func serverBuilder(webSockets: Router<ConsoleContext>, tls: NIOSSLContext?, connections: ConsoleConnections,
                                      maxFrameBytes: Int?, door: WebDeviceDoor?) -> HTTPServerBuilder {
        let limits = connections.limits
        let webSocketResponder = webSockets.buildResponder()
        let autoPing: AutoPingSetup = limits.webSocketPing > 0 ? .enabled(timePeriod: .nanoseconds(Int64(limits.webSocketPing * 1e9))) : .disabled
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: HTTP1Channel.Configuration(idleTimeout: limits.idleTimeout > 0 ? .nanoseconds(Int64(limits.idleTimeout * 1e9)) : nil),
            ws: maxFrameBytes.map { WebSocketServerConfiguration(maxFrameSize: $0, autoPing: autoPing) } ?? WebSocketServerConfiguration(autoPing: autoPing))
        return HTTPServerBuilder { responder in
            GuardedConsoleChannel(
                base: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                tls: tls, connections: connections, door: door)
        }
    }

    private static func loginCookie(_ value: String, maxAge: Int, settings: ConsoleSettings) -> Cookie {
        Cookie(name: LoginCheck.cookieName, value: value, maxAge: maxAge, path: "/", secure: settings.usesTLS, httpOnly: true, sameSite: .strict)
    }

    /// A file of a written report (a session's or a study's), read off the event loop; `missing` when it is not
    /// there, if given.
    private static func reportFile(in directory: String, parts: [Substring], missing: Response? = nil) async throws -> Response {
        guard !parts.isEmpty, parts.allSatisfy({ !$0.isEmpty && !$0.hasPrefix(".") && !$0.contains("/") }) else {
            throw ConsoleError.notFound("no such report file")
        }
        let path = directory + "/" + parts.joined(separator: "/")
        guard let data = try await blocking({ FileManager.default.contents(atPath: path) }) else {
            if let missing { return missing }
            throw ConsoleError.notFound("no such report file: generate the report first")
        }
        // The report is static HTML made from device strings (escaped when written); its own
        // styles use inline style attributes, so its policy allows those but no inline script.
        return Response(status: .ok, headers: [
            .contentType: ConsoleAssets.contentType(of: String(parts.last ?? "")),
            .contentSecurityPolicy: "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            .cacheControl: "no-cache",
        ], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// To the same image elsewhere, for this request only: once the report's own file is there, it is served.
    private static func redirect(to location: String) -> Response {
        Response(status: .found, headers: [.location: location, .cacheControl: "no-store"])
    }

    static let refusedPage = """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><title>muEval: login link refused</title>
        <link rel="stylesheet" href="/assets/console.css"></head><body class="login"><main>
        <h1>This login link cannot be used</h1>
        <p>A login link works once, for a few minutes. Run <code>muevalctl console --open</code> on the lab machine
        (or over ssh) and open the new link it prints.</p></main></body></html>
        """

    // MARK: WebSockets

    private func registerWebSockets(on router: RouterGroup<ConsoleContext>) {
        router.ws("/api/updates") { [updates, shutdown, connections] inbound, outbound, context in
            connections.upgraded(context.requestContext.channel)
            let (id, messages) = updates.subscribe()
            defer { updates.unsubscribe(id) }
            try await LiveStream.send([ConsoleUpdates.sessionsChanged], to: outbound)
            try await LiveStream.untilClosed(inbound, channel: context.requestContext.channel, or: shutdown) {
                for await message in messages {
                    try await LiveStream.send([message], to: outbound)
                }
            }
        }
        router.ws("/api/sessions/:session/live", shouldUpgrade: { [environment] _, context in
            guard let key = context.parameters.get("session", as: String.self),
                  (try? await blocking({ try environment.registry.find(key) })) != nil else { return .dontUpgrade }
            return .upgrade([:])
        }) { [environment, settings, shutdown, connections] inbound, outbound, context in
            connections.upgraded(context.requestContext.channel)
            let key = context.requestContext.parameters.get("session", as: String.self) ?? ""
            let record = try await blocking { try environment.registry.find(key) }
            // Subscribed before the hello is read, so that nothing falls between them; the hello's
            // last event id drops what both carry.
            let subscription = environment.liveTail.subscribe(TailFilter(sessions: [record.id]), capacity: settings.liveBuffer)
            defer { subscription.cancel() }
            let (hello, helloLastEventID) = try await blocking { try LiveStream.hello(record) }
            try await LiveStream.send([hello], to: outbound)
            try await LiveStream.untilClosed(inbound, channel: context.requestContext.channel, or: shutdown) {
                try await LiveStream.forward(subscription, after: helloLastEventID, batch: .milliseconds(settings.liveBatchMilliseconds)) {
                    try await LiveStream.send($0, to: outbound)
                }
            }
        }
    }

    /// Browsers as devices (docs/PROTOCOL.md, "WebSocket"): the library, and the WebSocket whose frames
    /// the capture server's device handlers take over as the upgrade completes (`ConsoleWebCapture.handOff`).
    /// This handler only holds the connection open; it sees no device's message.
    private func registerWebCapture(_ web: ConsoleWebCapture, on devices: RouterGroup<ConsoleContext>, library: Router<ConsoleContext>) {
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

    // MARK: Background

    /// Pushes "sessions changed" to the pages at the sessions' lifecycle events (one push for what
    /// arrived together). The automatic report is not the console's: the daemon's AutomaticReports writes it.
    private func followLifecycle(_ events: SessionEventSubscription) async {
        while let batch = await events.next() {
            var sessionsChanged = false
            for event in batch {
                switch event {
                case .studyCompleted(let study, let reason, _):
                    updates.send(ConsoleUpdates.studyCompleted(study, reason: reason.rawValue))
                case .recruitmentChanged(let study):
                    updates.send(ConsoleUpdates.recruitmentChanged(study))
                default:
                    sessionsChanged = true
                }
            }
            if sessionsChanged { updates.send(ConsoleUpdates.sessionsChanged) }
        }
    }

    /// Once a second: every open session's rate, pushed to the pages that follow.
    private func sampleRates() async {
        while !Task.isCancelled {
            let sessions = environment.registry.openSessions().map(\.snapshot)
            let current = rates.sample(sessions, now: Date().timeIntervalSince1970)
            if updates.isFollowed, let message = try? ConsoleUpdates.rates(current, events: sessions, counters: environment.counters.snapshot()) {
                updates.send(message)
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}

/// A single-use login link: where the browser logs in, once, before `expires` (seconds since 1970).
public struct ConsoleLoginLink: Sendable, Equatable {
    public var url: String
    public var expires: Double
}

/// The console cannot make a login link now.
public struct ConsoleUnavailable: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension Response {
    /// The same status with an HTML body, for a browser that navigated here.
    func withHTML(_ html: String) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
