internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import NIOCore
internal import SessionModel

// The console's guards, one job each; `ConsoleGate` puts them before the routes they guard, in the order
// they are declared here.

extension Request {
    /// A call of the JSON API (`/api/…`), answered in JSON; anything else is for a browser to show.
    var isAPICall: Bool { uri.path.hasPrefix("/api/") }

    /// Anything but GET and HEAD: it needs its caller's CSRF token.
    var changesState: Bool { method != .get && method != .head }
}

/// Every answer leaves with the headers that keep device strings from ever running as script: script only
/// from the console's own files, no framing, no sniffing, no referrer (login links carry a code).
/// Outermost, so it answers a thrown error itself (a 404 of a path no route has, a handler's `ConsoleError`):
/// left to the router, that answer would go out without the headers.
struct SecurityHeaders: RouterMiddleware {
    typealias Context = ConsoleContext

    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            response = ConsoleResponse.error(error.status, error.status == .notFound ? "no such page or call" : error.status.reasonPhrase)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        // A route with a policy of its own (reports) keeps it.
        if response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] = "default-src 'self'; img-src 'self' blob: data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[Self.referrerPolicy] = "no-referrer"
        if request.isAPICall, response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }
}

/// Answers only a request whose `Host` names the console (`ConsoleHosts`, DNS rebinding): any other gets a 421
/// before anything else looks at it.
struct HostCheck: RouterMiddleware {
    typealias Context = ConsoleContext

    let hosts: ConsoleHosts

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard hosts.allows(request.head.authority) else {
            return ConsoleResponse.error(.misdirectedRequest, "this console does not answer to that host name: reach it as its login link says, or add the name to console.allowed_hosts")
        }
        return try await next(request, context)
    }
}

/// Lets through only a request whose cookie names a login, and gives the handlers that login; without one,
/// a page is the login page and a call a 401, both with no data.
struct LoginCheck: RouterMiddleware {
    typealias Context = ConsoleContext

    static let cookieName = "mueval_console"

    let access: ConsoleAccess
    let loginPage: ConsoleAsset

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let cookie = request.cookies[Self.cookieName], let login = access.login(cookie.value, now: Date().timeIntervalSince1970) else {
            return request.isAPICall
                ? ConsoleResponse.error(.unauthorized, "not logged in: run `muevalctl console` on the lab machine and open the link it prints")
                : ConsoleResponse.asset(loginPage, status: .unauthorized)
        }
        var context = context
        context.login = login
        return try await next(request, context)
    }
}

/// Refuses what another site's page could make a browser send with the console's cookies: a state change
/// or a WebSocket upgrade (a GET, but a cross-site page must not open one with our cookie either) whose
/// `Origin` names another host, and a state change without its caller's token in `X-CSRF-Token`.
struct CSRFCheck: RouterMiddleware {
    typealias Context = ConsoleContext

    /// Whose token a state change brings.
    enum Caller: Sendable {
        /// The login's (`LoginCheck` has put it in the context).
        case login
        /// The one bound to the visitor's cookie.
        case visitor(ConsoleVisitors)
    }

    static let header = HTTPField.Name("X-CSRF-Token")!

    let caller: Caller

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let refusal = refusal(of: request, context: context) { return ConsoleResponse.error(.forbidden, refusal) }
        return try await next(request, context)
    }

    /// Why the request is refused; nil: it may go on.
    func refusal(of request: Request, context: Context) -> String? {
        let isUpgrade = request.headers[.upgrade]?.lowercased() == "websocket"
        if request.changesState || isUpgrade, !Self.sameOrigin(request) { return "cross-origin request refused" }
        guard request.changesState else { return nil }
        let token = request.headers[Self.header]
        switch caller {
        case .login:
            guard let token, let login = context.login, constantTimeEqual(token, login.csrfToken) else {
                return "missing or wrong CSRF token: reload the page"
            }
        case .visitor(let visitors):
            guard visitors.accepts(token: token, cookie: request.cookies[ConsoleVisitors.cookieName]?.value) else {
                return "this page has expired: reload it and try again"
            }
        }
        return nil
    }

    /// An `Origin` header, when there is one, must name the host the request went to. Browsers send
    /// their page's `http(s)://host:port`; WebSocket libraries outside browsers send `ws://host`,
    /// which no browser page can claim, so the host alone is compared then.
    static func sameOrigin(_ request: Request) -> Bool {
        guard let origin = request.headers[.origin] else { return true }
        guard let host = request.head.authority else { return false }
        if origin == "http://" + host || origin == "https://" + host { return true }
        let hostname = host.range(of: #":[0-9]+$"#, options: .regularExpression).map { String(host[..<$0.lowerBound]) } ?? host
        return origin == "ws://" + hostname || origin == "wss://" + hostname
    }
}

/// Counts a visitor's request against its address (`ConsoleProxies`: the peer, or the client a trusted proxy
/// names), which it leaves in the context for the handlers' own quotas and the invitation codes' guard; over
/// `console.public_requests_per_minute`, a 429 that says when to try again.
struct QuotaCheck: RouterMiddleware {
    typealias Context = ConsoleContext

    let quotas: VisitorQuotas
    let proxies: ConsoleProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.address = proxies.client(peer: context.channel.remoteAddress?.ipAddress ?? "", headers: request.headers)
        do {
            try quotas.use(.request, by: context.address, now: Date().timeIntervalSince1970)
        } catch {
            return request.isAPICall ? ConsoleResponse.error(error.status, error.description)
                : ConsoleResponse.visitorPage(error.status, title: "Please wait", message: error.description)
        }
        return try await next(request, context)
    }
}

/// Leaves the client's address in the context (`ConsoleProxies`: the peer, or the client a trusted proxy names),
/// for a route that counts nothing per request itself (web devices: `WebDeviceGate` counted them).
struct ClientAddress: RouterMiddleware {
    typealias Context = ConsoleContext

    let proxies: ConsoleProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.address = proxies.client(peer: context.channel.remoteAddress?.ipAddress ?? "", headers: request.headers)
        return try await next(request, context)
    }
}

/// Names the visitor by its cookie, which its CSRF token is bound to (`ConsoleVisitors`): the request's, else a
/// new one that the page's answer sets (a call's answer sets none: a page came first).
struct VisitorCookie: RouterMiddleware {
    typealias Context = ConsoleContext

    /// Marked `Secure` (the console speaks HTTPS).
    let secure: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let cookie = request.cookies[ConsoleVisitors.cookieName]?.value
        let visitor = cookie ?? ConsoleVisitors.newCookie()
        var context = context
        context.visitor = visitor
        var response = try await next(request, context)
        if cookie == nil, !request.isAPICall {
            response.setCookie(Cookie(name: ConsoleVisitors.cookieName, value: visitor, path: "/", secure: secure, httpOnly: true, sameSite: .strict))
        }
        return response
    }
}
