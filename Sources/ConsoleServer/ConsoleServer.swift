internal import MuEvalWire
public import SessionCore
internal import Foundation
internal import Hummingbird
internal import HummingbirdCore
internal import HummingbirdTLS
internal import HummingbirdWebSocket
public import Logging
internal import NIOConcurrencyHelpers
public import NIOCore
internal import NIOSSL
internal import PageRecording
public import ServiceLifecycle
internal import ReportCritique

/// The web console, the thesis's "Mobile Monitor" (section 2.7): one HTTP server inside muevald
/// with the pages, their JSON API, two WebSockets and `/metrics` (docs/CONSOLE.md).
/// Its routes, the web capture's hand-off and its background followers are extensions in files of their own
/// (ConsoleRoutes.swift, ConsoleWebCapture.swift, ConsoleFollowers.swift).
public final class ConsoleServer: Service, Sendable {
    // Members without an access level are internal only because those extensions read them; the rest stay private.
    let settings: ConsoleSettings
    let environment: ConsoleEnvironment
    private let group: any EventLoopGroup
    let logger: Logger
    /// Called once the console listens, or once it has failed to: either way muevald is ready.
    private let onReady: @Sendable () -> Void
    let access: ConsoleAccess
    let rates = SessionRates()
    let updates = ConsoleUpdates()
    let metrics = ConsoleMetrics()
    let reports: ConsoleReports
    private let boundPort = NIOLockedValueBox<Int?>(nil)
    /// Where browsers and phones reach the console, once it listens.
    private let consoleURL: @Sendable () -> String?
    let shutdown = ConsoleShutdown()
    /// Why the console could not start, for `muevalctl console`.
    private let failure = NIOLockedValueBox<String?>(nil)
    /// The certificate and key, once the console serves HTTPS.
    private let tls = NIOLockedValueBox<ConsoleTLS?>(nil)
    /// Admission against the descriptor budget, and the timeouts before a first request.
    let connections: ConsoleConnections
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
        var api = ConsoleAPI(environment: environment, settings: settings, rates: rates, reports: reports,
                             publicURL: consoleURL)
        if let origins = webCapture?.origins { api.webOrigins = origins }
        api.pageCache = PageRecordCache(limitBytes: settings.replayPageCacheMiB << 20)
        loggedIn.get("/sessions/:session/page-frame") { [api] _, _ in ConsoleAPI.pageFrame(remoteAssets: api.remoteAssets()) }
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
