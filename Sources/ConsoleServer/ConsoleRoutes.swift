internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import HummingbirdWebSocket
internal import NIOCore
internal import ReportCritique
internal import SessionCore
internal import SessionModel

/// The console's routes, as `serve` registers them on its two routers: what needs no login, the pages behind
/// the login, and the pages' own WebSockets (web devices' are in ConsoleWebCapture.swift, the JSON API in ConsoleAPI).
extension ConsoleServer {
    // MARK: Pages

    /// What needs no login: the pages' own code (no data), the login exchange and the counters, each with its own checks.
    func registerOpenRoutes(on router: Router<ConsoleContext>, assets: ConsoleAssets) {
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

    func registerPages(on router: RouterGroup<ConsoleContext>, assets: ConsoleAssets) {
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

    func registerWebSockets(on router: RouterGroup<ConsoleContext>) {
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
}

extension Response {
    /// The same status with an HTML body, for a browser that navigated here.
    func withHTML(_ html: String) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
