@testable import ConsoleServer
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import Testing

/// Each of the console's guards on its own, then as `ConsoleGate` puts them before the routes, without
/// sockets: a request goes straight into the middleware or the router's responder, a channel stands in
/// for the connection.
@Suite struct ConsoleMiddlewareTests {
    static let host = "127.0.0.1:28080"

    private func request(_ method: HTTPRequest.Method, _ path: String, host: String? = Self.host,
                         _ fields: [(String, String)] = []) -> Request {
        var headers = HTTPFields()
        for (name, value) in fields { headers.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return Request(head: HTTPRequest(method: method, scheme: "http", authority: host, path: path, headerFields: headers),
                       body: RequestBody(buffer: ByteBuffer()))
    }

    private func request(_ path: String, host: String? = Self.host, _ fields: [(String, String)] = []) -> Request {
        request(.get, path, host: host, fields)
    }

    private func context(peer: String = "192.0.2.1") throws -> ConsoleContext {
        let channel = NIOAsyncTestingChannel()
        channel.remoteAddress = try SocketAddress(ipAddress: peer, port: 40_000)
        return ConsoleContext(source: ApplicationRequestContextSource(channel: channel, logger: Logger(label: "test")))
    }

    /// What the next responder saw; nil when the middleware answered itself.
    private final class Passed: @unchecked Sendable {
        var context: ConsoleContext?
    }

    private func run(_ middleware: some RouterMiddleware<ConsoleContext>, _ request: Request, context: ConsoleContext? = nil,
                     answer: Response = Response(status: .ok)) async throws -> (Response, ConsoleContext?) {
        let passed = Passed()
        let response = try await middleware.handle(request, context: try context ?? self.context()) { _, context in
            passed.context = context
            return answer
        }
        return (response, passed.context)
    }

    private func body(_ response: Response) async throws -> String {
        let writer = CollectingWriter()
        try await response.body.write(writer)
        return String(buffer: writer.collected.buffer)
    }

    /// A login that `access` knows, as the cookie carries it.
    private func login(_ access: ConsoleAccess) throws -> ConsoleLogin {
        let now = Date().timeIntervalSince1970
        let (code, _) = access.issueCode(now: now)
        guard case .loggedIn(let login) = access.redeem(code: code, now: now) else {
            throw ConsoleError.badRequest("the code did not log in")
        }
        return login
    }

    private let loginPage = ConsoleAsset(bytes: ByteBuffer(string: "the login page"), contentType: "text/html; charset=utf-8", etag: "\"1\"")

    // MARK: Each guard

    @Test func everyAnswerGetsTheHeadersAThrownErrorIncluded() async throws {
        let headers = SecurityHeaders()
        let (plain, _) = try await run(headers, request("/api/sessions"))
        #expect(plain.status == .ok)
        let thrown = try await headers.handle(request("/api/nothing"), context: context()) { _, _ in throw HTTPError(.notFound) }
        #expect(thrown.status == .notFound)
        #expect(try await body(thrown) == #"{"error":"no such page or call"}"#)
        for response in [plain, thrown] {
            #expect(response.headers[.contentSecurityPolicy]?.hasPrefix("default-src 'self'") == true)
            #expect(response.headers[.xContentTypeOptions] == "nosniff")
            #expect(response.headers[SecurityHeaders.referrerPolicy] == "no-referrer")
            #expect(response.headers[.cacheControl] == "no-store", "an API answer is never cached")
        }
        let handlerError = try await headers.handle(request("/sessions/1"), context: context()) { _, _ in throw ConsoleError.conflict("busy") }
        #expect(handlerError.status == .conflict)
        #expect(handlerError.headers[.xContentTypeOptions] == "nosniff")
        #expect(handlerError.headers[.cacheControl] == nil, "a page's answer keeps its own caching")
        // A report's own policy stays.
        let (report, _) = try await run(headers, request("/sessions/1/reports/a/index.html"),
                                        answer: Response(status: .ok, headers: [.contentSecurityPolicy: "default-src 'none'"]))
        #expect(report.headers[.contentSecurityPolicy] == "default-src 'none'")
    }

    @Test func onlyTheConsolesHostNamesAreAnswered() async throws {
        let check = HostCheck(hosts: ConsoleHosts(settings: ConsoleSettings(), machineName: "lab"))
        let (allowed, passed) = try await run(check, request("/metrics"))
        #expect(allowed.status == .ok && passed != nil)
        for host in ["evil.example", "127.0.0.1.evil.example:28080", nil] {
            let (refused, passed) = try await run(check, request("/metrics", host: host))
            #expect(refused.status == .misdirectedRequest, "\(host ?? "no Host")")
            #expect(passed == nil)
        }
    }

    @Test func withoutALoginAPageIsTheLoginPageAndACallA401() async throws {
        let access = ConsoleAccess(limits: ConsoleAccessLimits())
        let check = LoginCheck(access: access, loginPage: loginPage)
        let (page, pagePassed) = try await run(check, request("/sessions/1"))
        #expect(page.status == .unauthorized && pagePassed == nil)
        #expect(try await body(page) == "the login page")
        let (call, _) = try await run(check, request("/api/sessions", [("Cookie", "mueval_console=invented")]))
        #expect(call.status == .unauthorized)
        #expect(try await body(call).contains("muevalctl console"))

        let login = try login(access)
        let (allowed, passed) = try await run(check, request("/api/sessions", [("Cookie", "mueval_console=\(login.id)")]))
        #expect(allowed.status == .ok)
        #expect(passed?.login == login, "the handlers get the login")
        access.logout(login.id)
        let (after, _) = try await run(check, request("/api/sessions", [("Cookie", "mueval_console=\(login.id)")]))
        #expect(after.status == .unauthorized, "a logged-out cookie")
    }

    @Test func aLoginsStateChangeNeedsItsTokenFromThisOrigin() async throws {
        let access = ConsoleAccess(limits: ConsoleAccessLimits())
        var context = try context()
        context.login = try login(access)
        let token = context.login?.csrfToken ?? ""
        let check = CSRFCheck(caller: .login)
        func status(_ request: Request) async throws -> HTTPResponse.Status { try await run(check, request, context: context).0.status }

        #expect(try await status(request("/api/sessions")) == .ok, "a GET changes nothing")
        #expect(try await status(request(.post, "/api/sessions", [("X-CSRF-Token", token)])) == .ok)
        #expect(try await status(request(.delete, "/api/sessions/1", [("X-CSRF-Token", token), ("Origin", "http://\(Self.host)")])) == .ok)
        #expect(try await status(request(.post, "/api/sessions")) == .forbidden, "no token")
        #expect(try await status(request(.post, "/api/sessions", [("X-CSRF-Token", token + "0")])) == .forbidden)
        #expect(try await status(request(.post, "/api/sessions", [("X-CSRF-Token", token), ("Origin", "http://evil.example")])) == .forbidden)
        // A WebSocket upgrade is a GET, and still needs this origin; a library outside a browser names the host alone.
        #expect(try await status(request("/api/updates", [("Upgrade", "websocket"), ("Origin", "http://evil.example")])) == .forbidden)
        #expect(try await status(request("/api/updates", [("Upgrade", "websocket"), ("Origin", "ws://127.0.0.1")])) == .ok)
        let (refused, _) = try await run(check, request(.post, "/api/logout"), context: context)
        #expect(try await body(refused) == #"{"error":"missing or wrong CSRF token: reload the page"}"#)
    }

    @Test func aVisitorsStateChangeNeedsTheTokenOfItsCookie() async throws {
        let visitors = ConsoleVisitors()
        let check = CSRFCheck(caller: .visitor(visitors))
        let cookie = ConsoleVisitors.newCookie()
        let token = visitors.token(for: cookie)
        func status(_ request: Request) async throws -> HTTPResponse.Status { try await run(check, request).0.status }

        #expect(try await status(request(.post, "/api/public/withdraw", [("Cookie", "mueval_visitor=\(cookie)"), ("X-CSRF-Token", token)])) == .ok)
        #expect(try await status(request(.post, "/api/public/withdraw", [("X-CSRF-Token", token)])) == .forbidden, "no cookie")
        #expect(try await status(request(.post, "/api/public/withdraw", [("Cookie", "mueval_visitor=\(ConsoleVisitors.newCookie())"),
                                                                         ("X-CSRF-Token", token)])) == .forbidden, "another browser's cookie")
        #expect(try await status(request(.post, "/api/public/withdraw", [("Cookie", "mueval_visitor=\(cookie)"), ("X-CSRF-Token", token),
                                                                         ("Origin", "https://evil.example")])) == .forbidden)
        #expect(try await status(request("/i/2345abcdef")) == .ok, "a page needs no token")
        let (expired, _) = try await run(check, request(.post, "/api/public/withdraw", [("Cookie", "mueval_visitor=\(cookie)")]))
        #expect(try await body(expired) == #"{"error":"this page has expired: reload it and try again"}"#)
    }

    @Test func aVisitorsRequestsAreCountedAgainstItsAddress() async throws {
        let check = QuotaCheck(quotas: VisitorQuotas(limits: VisitorLimits(requestsPerMinute: 2)), proxies: ConsoleProxies(["10.0.0.0/8"]))
        let context = try context(peer: "192.0.2.7")
        let (first, passed) = try await run(check, request("/i/2345abcdef"), context: context)
        #expect(first.status == .ok)
        #expect(passed?.address == "192.0.2.7", "the handlers count their own quotas against the same address")
        _ = try await run(check, request("/api/public/invitations/2345abcdef"), context: context)
        let (page, pagePassed) = try await run(check, request("/i/2345abcdef"), context: context)
        #expect(page.status == .tooManyRequests && pagePassed == nil)
        #expect(page.headers[.contentType] == "text/html; charset=utf-8", "a page for the phone to show")
        #expect(try await body(page).contains("too many requests from your address"))
        let (call, _) = try await run(check, request("/api/public/withdraw"), context: context)
        #expect(call.status == .tooManyRequests)
        #expect(call.headers[.contentType] == "application/json; charset=utf-8")
        // Behind a trusted proxy each tester counts as the address it names.
        let (forwarded, forwardedPassed) = try await run(check, request("/i/2345abcdef", [("X-Forwarded-For", "192.0.2.8")]),
                                                         context: try self.context(peer: "10.1.1.1"))
        #expect(forwarded.status == .ok)
        #expect(forwardedPassed?.address == "192.0.2.8")
    }

    @Test func aVisitorWithoutACookieGetsOneWithThePage() async throws {
        let cookies = VisitorCookie(secure: true)
        let (page, passed) = try await run(cookies, request("/enrol/key"))
        let visitor = try #require(passed?.visitor)
        let set = try #require(page.headers[.setCookie])
        #expect(set.hasPrefix("mueval_visitor=\(visitor);"))
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Secure"] { #expect(set.contains(attribute), "\(set)") }

        let (again, againPassed) = try await run(cookies, request("/enrol/key", [("Cookie", "mueval_visitor=\(visitor)")]))
        #expect(again.headers[.setCookie] == nil, "it has one")
        #expect(againPassed?.visitor == visitor)
        let (call, callPassed) = try await run(cookies, request("/api/public/enrol/key"))
        #expect(call.headers[.setCookie] == nil, "a call's answer sets none")
        #expect(callPassed?.visitor?.isEmpty == false)
    }

    // MARK: The gate before the routes

    /// A router as the console builds it, with a route in each group.
    private func router(access: ConsoleAccess, requestsPerMinute: Int = 120) -> RouterResponder<ConsoleContext> {
        let gate = ConsoleGate(hosts: ConsoleHosts(settings: ConsoleSettings(), machineName: "lab"), access: access, loginPage: loginPage,
                               visitors: ConsoleVisitors(), quotas: VisitorQuotas(limits: VisitorLimits(requestsPerMinute: requestsPerMinute)),
                               proxies: ConsoleProxies([]), secureCookies: false)
        let router = Router(context: ConsoleContext.self)
        gate.guardEveryAnswer(of: router)
        router.get("/metrics") { _, _ in "counters" }
        gate.loggedIn(router).get("/api/sessions") { _, _ in "sessions" }.post("/api/sessions") { _, _ in "started" }
        gate.forVisitors(router).get("/i/:code") { _, _ in "invitation" }
        return router.buildResponder()
    }

    @Test func eachRouteHasItsGroupsGuardsAndEveryAnswerTheHeaders() async throws {
        let access = ConsoleAccess(limits: ConsoleAccessLimits())
        let responder = router(access: access, requestsPerMinute: 1)
        func answer(_ request: Request) async throws -> Response { try await responder.respond(to: request, context: try context()) }

        #expect(try await answer(request("/metrics")).status == .ok, "open")
        #expect(try await answer(request("/api/sessions")).status == .unauthorized)
        let login = try login(access)
        let cookie = ("Cookie", "mueval_console=\(login.id)")
        #expect(try await answer(request("/api/sessions", [cookie])).status == .ok)
        #expect(try await answer(request(.post, "/api/sessions", [cookie])).status == .forbidden, "no CSRF token")
        #expect(try await answer(request(.post, "/api/sessions", [cookie, ("X-CSRF-Token", login.csrfToken)])).status == .ok)

        let page = try await answer(request("/i/2345abcdef"))
        #expect(page.status == .ok, "no login")
        #expect(page.headers[.setCookie]?.hasPrefix("mueval_visitor=") == true)
        #expect(try await answer(request("/i/2345abcdef")).status == .tooManyRequests, "one request a minute")
        #expect(try await answer(request("/api/sessions", [cookie])).status == .ok, "a login's requests are not a visitor's")

        // A path no route has: the Host check and the headers, and a 404 for anyone.
        for path in ["/api/public/nothing", "/i/", "/nothing"] {
            let missing = try await answer(request(path))
            #expect(missing.status == .notFound, "\(path)")
            #expect(missing.headers[.xContentTypeOptions] == "nosniff", "\(path)")
            #expect(try await body(missing) == #"{"error":"no such page or call"}"#)
        }
        for path in ["/metrics", "/i/2345abcdef", "/api/sessions", "/nothing"] {
            let misdirected = try await answer(request(path, host: "evil.example", [cookie]))
            #expect(misdirected.status == .misdirectedRequest, "\(path)")
            #expect(misdirected.headers[.contentSecurityPolicy] != nil, "\(path)")
        }
    }
}

/// Collects a response body's bytes (the body consumes its writer, so they land in a box).
private struct CollectingWriter: ResponseBodyWriter {
    final class Collected: @unchecked Sendable { var buffer = ByteBuffer() }
    let collected = Collected()

    func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        collected.buffer.writeBuffer(&buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
