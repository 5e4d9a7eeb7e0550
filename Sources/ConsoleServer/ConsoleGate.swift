internal import HTTPTypes
internal import Hummingbird
internal import HummingbirdWebSocket
internal import NIOCore
internal import WireProtocol

/// A console request, with the login its cookie names once `LoginCheck` has let it through.
struct ConsoleContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    var login: ConsoleLogin?
    /// A visitor of the pages without a login: its cookie's value (`VisitorCookie` made one when the
    /// request brought none) and its address (`QuotaCheck`), which its limits count.
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

/// Which of the console's guards (ConsoleMiddleware.swift, one job each) stand before which routes
/// (docs/SECURITY.md, "The gate, in order"). Every answer gets the `Host` check and the security headers,
/// a path no route has included (a 404 to anyone); the console's own pages and calls are a route group behind a login
/// and its CSRF token; the pages for testers (`ConsoleVisitorAPI`) are a group of their own, counted
/// per address, with a visitor's cookie and token. What is registered on the router itself (the assets,
/// the login exchange, `/metrics`) has the first two only, and carries its own checks.
struct ConsoleGate: Sendable {
    let hosts: ConsoleHosts
    let access: ConsoleAccess
    let loginPage: ConsoleAsset
    let visitors: ConsoleVisitors
    let quotas: VisitorQuotas
    let proxies: ConsoleProxies
    /// Cookies marked `Secure` (the console speaks HTTPS).
    let secureCookies: Bool

    /// Before any route is registered: Hummingbird applies a router's middlewares to the routes added
    /// after them, and all of them to the requests no route takes.
    func guardEveryAnswer(of router: Router<ConsoleContext>) {
        router.add(middleware: SecurityHeaders())
        router.add(middleware: HostCheck(hosts: hosts))
    }

    /// The console's pages, calls and WebSockets.
    func loggedIn(_ router: Router<ConsoleContext>) -> RouterGroup<ConsoleContext> {
        router.group()
            .add(middleware: LoginCheck(access: access, loginPage: loginPage))
            .add(middleware: CSRFCheck(caller: .login))
    }

    /// Web apps' devices (`/capture`): no login and no console token (pages of other origins connect, as
    /// `capture.web_origins` lets them), and not the visitors' request quota: `WebDeviceGate` admitted each
    /// against its address's web device caps before the router saw it (a lab's room of phones behind one address
    /// would spend a tester's quota at once).
    func forWebDevices(_ router: Router<ConsoleContext>) -> RouterGroup<ConsoleContext> {
        router.group().add(middleware: ClientAddress(proxies: proxies))
    }

    /// The pages a tester's phone opens without a login, and their calls.
    func forVisitors(_ router: Router<ConsoleContext>) -> RouterGroup<ConsoleContext> {
        router.group()
            .add(middleware: QuotaCheck(quotas: quotas, proxies: proxies))
            .add(middleware: CSRFCheck(caller: .visitor(visitors)))
            .add(middleware: VisitorCookie(secure: secureCookies))
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
