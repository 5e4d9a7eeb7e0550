internal import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import HummingbirdWebSocket
internal import NIOCore
internal import SessionModel
internal import WireProtocol

/// A console request, with the login its cookie names once the gate has let it through.
struct ConsoleContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    var login: ConsoleLogin?
    /// A visitor of the pages without a login: its cookie's value (made by the gate when the request
    /// brought none) and its address (`ConsoleProxies`), which its limits count.
    var visitor: String?
    var address = ""
    /// The connection: a WebSocket to a browser that stopped reading is closed here at shutdown,
    /// since even its close frame would wait for the browser.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }
}

/// Lets a request through only when it names one of the console's hosts, with a valid login cookie,
/// and a state change only with its CSRF token from this origin; adds the headers that keep device
/// strings from ever running as script.
struct ConsoleGate: RouterMiddleware {
    typealias Context = ConsoleContext

    static let cookieName = "mueval_console"
    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!

    let access: ConsoleAccess
    let loginPage: ConsoleAsset
    let hosts: ConsoleHosts
    let visitors: ConsoleVisitors
    let quotas: VisitorQuotas
    let proxies: ConsoleProxies
    /// Cookies marked `Secure` (the console speaks HTTPS).
    let secureCookies: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = hosts.allows(request.head.authority)
                ? try await gate(request, context: context, next: next)
                : ConsoleResponse.error(.misdirectedRequest, "this console does not answer to that host name: reach it as its login link says, or add the name to console.allowed_hosts")
        } catch let error as HTTPError {
            response = ConsoleResponse.error(error.status, error.status == .notFound ? "no such page or call" : error.status.reasonPhrase)
        } catch let error as any HTTPResponseError {
            // A thrown error (a 404 of a path no route has, a handler's `ConsoleError`) is answered here,
            // so that it gets the headers below too; left to the server, it would go out without them.
            response = try error.response(from: request, context: context)
        }
        Self.secure(&response.headers, isAPI: request.uri.path.hasPrefix("/api/"))
        return response
    }

    private func gate(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        // Assets hold no data; the login exchange and the metrics scrape carry their own checks.
        if path.hasPrefix("/assets/") || path == "/login" || path == "/metrics" {
            return try await next(request, context)
        }
        if ConsoleVisitors.isPublic(path) { return try await visit(request, context: context, next: next) }
        let now = Date().timeIntervalSince1970
        guard let cookie = request.cookies[Self.cookieName], let login = access.login(cookie.value, now: now) else {
            if path.hasPrefix("/api/") {
                return ConsoleResponse.error(.unauthorized, "not logged in: run `muevalctl console` on the lab machine and open the link it prints")
            }
            return ConsoleResponse.asset(loginPage, status: .unauthorized)
        }
        let changesState = request.method != .get && request.method != .head
        // A WebSocket upgrade is a GET, but a cross-site page must not open one with our cookie either.
        let isUpgrade = request.headers[.upgrade]?.lowercased() == "websocket"
        if changesState || isUpgrade, !Self.sameOrigin(request) {
            return ConsoleResponse.error(.forbidden, "cross-origin request refused")
        }
        if changesState {
            guard let token = request.headers[Self.csrfHeader], constantTimeEqual(token, login.csrfToken) else {
                return ConsoleResponse.error(.forbidden, "missing or wrong CSRF token: reload the page")
            }
        }
        var context = context
        context.login = login
        return try await next(request, context)
    }

    /// A page or call without a login: counted against its address, and a state change only from this
    /// origin with the token that belongs to the visitor's cookie. A page's answer sets the cookie when
    /// the request had none.
    private func visit(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.address = proxies.client(peer: context.channel.remoteAddress?.ipAddress ?? "", headers: request.headers)
        do {
            try quotas.use(.request, by: context.address, now: Date().timeIntervalSince1970)
        } catch {
            return request.uri.path.hasPrefix("/api/") ? ConsoleResponse.error(error.status, error.description)
                : ConsoleResponse.visitorPage(error.status, title: "Please wait", message: error.description)
        }
        let cookie = request.cookies[ConsoleVisitors.cookieName]?.value
        if request.method != .get && request.method != .head {
            guard Self.sameOrigin(request) else { return ConsoleResponse.error(.forbidden, "cross-origin request refused") }
            guard visitors.accepts(token: request.headers[Self.csrfHeader], cookie: cookie) else {
                return ConsoleResponse.error(.forbidden, "this page has expired: reload it and try again")
            }
        }
        context.visitor = cookie ?? ConsoleVisitors.newCookie()
        var response = try await next(request, context)
        if cookie == nil, !request.uri.path.hasPrefix("/api/"), let visitor = context.visitor {
            response.setCookie(Cookie(name: ConsoleVisitors.cookieName, value: visitor, path: "/", secure: secureCookies,
                                      httpOnly: true, sameSite: .strict))
        }
        return response
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

    /// Script only from our own files, no framing, no sniffing, no referrer (login links carry a code).
    static func secure(_ headers: inout HTTPFields, isAPI: Bool) {
        // A route with a policy of its own (reports) keeps it.
        if headers[.contentSecurityPolicy] == nil { headers[.contentSecurityPolicy] = "default-src 'self'; img-src 'self' blob: data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'" }
        headers[.xContentTypeOptions] = "nosniff"
        headers[referrerPolicy] = "no-referrer"
        if isAPI, headers[.cacheControl] == nil { headers[.cacheControl] = "no-store" }
    }
}

/// The console's responses that are not a Codable value.
enum ConsoleResponse {
    /// `{"error": "…"}`: one line a user can act on.
    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        var json: [UInt8] = Array(#"{"error":"#.utf8)
        JSONString.append(message, to: &json)
        json.append(UInt8(ascii: "}"))
        return self.json(json, status: status)
    }

    static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A page for a visitor's browser that says why it cannot go on. `message` is the console's own
    /// words (no visitor's string), so it needs no escaping.
    static func visitorPage(_ status: HTTPResponse.Status, title: String, message: String) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"], body: ResponseBody(byteBuffer: ByteBuffer(string: """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title)</title><link rel="stylesheet" href="/assets/console.css"></head>
            <body class="phone"><main><h1>\(title)</h1><p>\(message)</p></main></body></html>
            """)))
    }

    static func asset(_ asset: ConsoleAsset, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: asset.contentType, .cacheControl: "no-cache", .eTag: asset.etag],
                 body: ResponseBody(byteBuffer: asset.bytes))
    }
}
