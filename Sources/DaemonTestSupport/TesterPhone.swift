internal import Foundation
#if canImport(FoundationNetworking)
internal import FoundationNetworking
#endif

/// A tester's phone on the console's pages without a login, over HTTP as its browser would use
/// them: each page is fetched first for the visitor cookie and the CSRF token it carries, then the
/// page's call is made with both (docs/CONSOLE.md, "Pages for testers"). One value is one browser.
public final class TesterPhone: @unchecked Sendable {
    public struct Enrolled: Sendable, Equatable {
        public var code: String
        public var secret: String
    }

    /// A page or call answered with other than 2xx: its status and the console's message.
    public struct Refused: Error, CustomStringConvertible {
        public var status: Int
        public var message: String
        public var description: String { "HTTP \(status): \(message)" }
    }

    private let base: String
    private let session: URLSession
    private var cookie: String?

    /// `console`: the console's `http(s)://host:port` (a login or enrolment link's start is fine too).
    public init(console: String) {
        let url = URL(string: console)!
        base = "\(url.scheme!)://\(url.host!):\(url.port!)"
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        session = URLSession(configuration: configuration)
    }

    /// Enrols as a phone does: the consent step, then the profile.
    public func enrol(key: String, profile: [String: String]) async throws -> Enrolled {
        let path = "/enrol/" + key
        let token = try await page(path)
        let pool = try await object("GET", "/api/public" + path)
        let version = try Self.require((pool["consent"] as? [String: Any])?["version"] as? Int, "consent version", in: pool)
        let reply = try await object("POST", "/api/public" + path, token: token,
                                     body: ["consent": true, "consentVersion": version, "profile": profile])
        return Enrolled(code: try Self.require(reply["code"] as? String, "code", in: reply),
                        secret: try Self.require(reply["secret"] as? String, "secret", in: reply))
    }

    /// Answers the SUS (`sus`: its ten items, 1…5), the SEQ (`seq`: task → 1…7) and the study's own
    /// questions (`answers`: question id → text) on the invitation's page, as its participant.
    public func fillQuestionnaire(invitation code: String, sus: [Int], seq: [String: Int], answers: [String: String] = [:]) async throws {
        let token = try await page("/i/" + code)
        let path = "/api/public/invitations/" + code
        let invitation = try await object("GET", path)
        let summary = try Self.require(invitation["invitation"] as? [String: Any], "invitation", in: invitation)
        let iteration = try Self.require(summary["iteration"] as? Int, "iteration", in: invitation)
        let participant = try Self.require(summary["participant"] as? String, "participant", in: invitation)
        let whom: [String: Any] = ["iteration": iteration, "participant": participant]
        let responses: [String: Any] = [
            "sus": [whom.merging(["items": sus]) { $1 }],
            "seq": seq.sorted { $0.key < $1.key }.map { whom.merging(["task": $0.key, "rating": $0.value]) { $1 } },
            "answers": answers.sorted { $0.key < $1.key }.map { whom.merging(["question": $0.key, "text": $0.value]) { $1 } },
        ]
        _ = try await object("POST", path + "/questionnaire", token: token, body: ["responses": responses])
    }

    /// Withdraws on /withdraw; returns the lines of what was deleted.
    public func withdraw(code: String, secret: String, deleteRecordings: Bool) async throws -> [String] {
        let token = try await page("/withdraw")
        let reply = try await object("POST", "/api/public/withdraw", token: token,
                                     body: ["code": code, "secret": secret, "deleteRecordings": deleteRecordings])
        return try Self.require(reply["deleted"] as? [String], "deleted", in: reply)
    }

    /// Loads a page, keeps the cookie it sets, and returns the CSRF token in its head.
    @discardableResult
    public func page(_ path: String) async throws -> String {
        let (status, headers, body) = try await send("GET", path, token: nil, body: nil)
        guard (200..<300).contains(status) else { throw Refused(status: status, message: body) }
        if let setCookie = headers["set-cookie"], let pair = setCookie.split(separator: ";").first,
           let value = pair.split(separator: "=", maxSplits: 1).last, pair.hasPrefix("mueval_visitor=") {
            cookie = String(value)
        }
        guard let start = body.range(of: #"<meta name="csrf-token" content=""#),
              let end = body[start.upperBound...].firstIndex(of: "\"") else {
            throw Refused(status: status, message: "the page \(path) carries no CSRF token")
        }
        return String(body[start.upperBound..<end])
    }

    private func object(_ method: String, _ path: String, token: String? = nil, body: [String: Any]? = nil) async throws -> [String: Any] {
        let (status, _, text) = try await send(method, path, token: token, body: body)
        let json = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
        guard (200..<300).contains(status) else { throw Refused(status: status, message: json?["error"] as? String ?? text) }
        return try Self.require(json, "a JSON object", in: ["body": text])
    }

    private func send(_ method: String, _ path: String, token: String?, body: [String: Any]?) async throws -> (Int, [String: String], String) {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        if let cookie { request.setValue("mueval_visitor=\(cookie)", forHTTPHeaderField: "Cookie") }
        if let token { request.setValue(token, forHTTPHeaderField: "X-CSRF-Token") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers["\(key)".lowercased()] = "\(value)" }
        return (http.statusCode, headers, String(decoding: data, as: UTF8.self))
    }

    private static func require<T>(_ value: T?, _ what: String, in reply: [String: Any]) throws -> T {
        guard let value else { throw Refused(status: 200, message: "no \(what) in \(reply)") }
        return value
    }
}
