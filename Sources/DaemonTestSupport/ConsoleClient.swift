public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
internal import HTTPTypes
internal import HummingbirdWSClient
internal import Logging
internal import NIOCore

/// A browser's side of muevald's web console for tests: HTTP with or without the login cookie,
/// the CSRF token, and WebSockets, over real sockets.
public final class ConsoleClient: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    /// Where the console answers, `http://127.0.0.1:PORT`.
    public let base: String
    /// The login cookie's value, once `login(_:)` succeeded.
    public private(set) var cookie: String?
    public private(set) var csrf: String?
    private var session: URLSession!

    public struct Reply: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data
        public var text: String { String(decoding: body, as: UTF8.self) }
        public func json() throws -> Any { try JSONSerialization.jsonObject(with: body) }
        public func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    /// `link` is what `muevalctl console` printed; nothing is logged in yet.
    public init(link: String) {
        let url = URL(string: link)!
        base = "\(url.scheme!)://\(url.host!):\(url.port!)"
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    /// Follows the login link; on success keeps the cookie and fetches the CSRF token. Returns the link's reply.
    @discardableResult
    public func login(_ link: String) async throws -> Reply {
        let reply = try await request("GET", link.replacingOccurrences(of: base, with: ""), authenticated: false)
        if let setCookie = reply.header("Set-Cookie"), let value = setCookie.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last {
            cookie = String(value)
            let me = try await request("GET", "/api/me")
            csrf = (try me.json() as? [String: Any])?["csrf"] as? String
        }
        return reply
    }

    /// One request; `authenticated: false` leaves the cookie out, `csrf: false` the token.
    public func request(_ method: String, _ path: String, json body: Any? = nil, authenticated: Bool = true,
                        csrf sendCSRF: Bool = true, headers: [String: String] = [:]) async throws -> Reply {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        if authenticated, let cookie { request.setValue("mueval_console=\(cookie)", forHTTPHeaderField: "Cookie") }
        if sendCSRF, let csrf, method != "GET" { request.setValue(csrf, forHTTPHeaderField: "X-CSRF-Token") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields { fields["\(key)"] = "\(value)" }
        return Reply(status: http.statusCode, headers: fields, body: data)
    }

    /// Opens a WebSocket with the login cookie and hands every text message to `onMessage` until it returns false.
    public func webSocket(_ path: String, onMessage: @escaping @Sendable (String) async -> Bool) async throws {
        var configuration = WebSocketClientConfiguration()
        configuration.maxFrameSize = 1 << 24
        if let cookie { configuration.additionalHeaders[.cookie] = "mueval_console=\(cookie)" }
        let url = base.replacingOccurrences(of: "http://", with: "ws://") + path
        try await WebSocketClient.connect(url: url, configuration: configuration, logger: Logger(label: "console-test")) { inbound, _, _ in
            for try await message in inbound.messages(maxSize: 1 << 24) {
                guard case .text(let text) = message else { continue }
                if await !onMessage(text) { return }
            }
        }
    }

    /// Redirects are for the test to see (the login answers 303), not to follow.
    public func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                           newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
