internal import Crypto
internal import NIOConcurrencyHelpers
internal import SessionModel

/// How long login codes and console sessions live.
public struct ConsoleAccessLimits: Sendable, Equatable {
    /// A login link works once, within this many seconds of `muevalctl console`.
    public var loginCodeSeconds: Double
    /// A browser stays logged in this long after it used its link.
    public var sessionSeconds: Double
    /// Console sessions kept at once; the oldest goes first. Bounds memory against a script that logs in in a loop.
    public var maxSessions: Int

    public init(loginCodeSeconds: Double = 120, sessionSeconds: Double = 12 * 3600, maxSessions: Int = 64) {
        self.loginCodeSeconds = loginCodeSeconds
        self.sessionSeconds = sessionSeconds
        self.maxSessions = maxSessions
    }
}

/// A logged-in browser: the cookie's value names it, and its CSRF token must come with every state change.
public struct ConsoleLogin: Sendable, Equatable {
    public var id: String
    public var csrfToken: String
    public var expires: Double
}

/// Who may use the console, as a value: single-use login codes and the browsers that redeemed them.
///
/// Access equals control-socket access: only `muevalctl console`, which the control socket's credential
/// check lets through, makes codes. A code is redeemed once, before it expires; what a browser holds
/// afterwards is a random session id (the cookie) and a CSRF token. Kept in memory: a restarted daemon
/// asks for a new link, which is what a lab expects of a restarted server.
public struct ConsoleAccessState: Sendable {
    public enum RedeemOutcome: Sendable, Equatable {
        case loggedIn(ConsoleLogin)
        /// Never issued, already used, or expired: the browser is told to ask for a new link.
        case refused
    }

    private var limits: ConsoleAccessLimits
    private var codes: [String: Double] = [:]
    private var logins: [String: ConsoleLogin] = [:]

    public init(limits: ConsoleAccessLimits) {
        self.limits = limits
    }

    /// Remembers a new code (made by the caller from a secure random source) until it expires.
    public mutating func issue(code: String, now: Double) -> Double {
        removeExpired(now: now)
        let expires = now + limits.loginCodeSeconds
        codes[code] = expires
        return expires
    }

    /// Trades a code for a login, once.
    public mutating func redeem(code: String, sessionID: String, csrfToken: String, now: Double) -> RedeemOutcome {
        removeExpired(now: now)
        guard let expires = codes.removeValue(forKey: code), expires > now else { return .refused }
        if logins.count >= limits.maxSessions, let oldest = logins.values.min(by: { $0.expires < $1.expires }) {
            logins[oldest.id] = nil
        }
        let login = ConsoleLogin(id: sessionID, csrfToken: csrfToken, expires: now + limits.sessionSeconds)
        logins[sessionID] = login
        return .loggedIn(login)
    }

    /// The login a cookie names, if it is still valid.
    public func login(_ sessionID: String, now: Double) -> ConsoleLogin? {
        guard let login = logins[sessionID], login.expires > now else { return nil }
        return login
    }

    public mutating func logout(_ sessionID: String) {
        logins[sessionID] = nil
    }

    private mutating func removeExpired(now: Double) {
        codes = codes.filter { $0.value > now }
        logins = logins.filter { $0.value.expires > now }
    }
}

/// The access state behind a lock, with the random values it needs.
public final class ConsoleAccess: Sendable {
    private let state: NIOLockedValueBox<ConsoleAccessState>

    public init(limits: ConsoleAccessLimits) {
        state = NIOLockedValueBox(ConsoleAccessState(limits: limits))
    }

    /// A new single-use login code and when it expires.
    public func issueCode(now: Double) -> (code: String, expires: Double) {
        let code = Self.randomToken()
        return (code, state.withLockedValue { $0.issue(code: code, now: now) })
    }

    public func redeem(code: String, now: Double) -> ConsoleAccessState.RedeemOutcome {
        let sessionID = Self.randomToken()
        let csrf = Self.randomToken()
        return state.withLockedValue { $0.redeem(code: code, sessionID: sessionID, csrfToken: csrf, now: now) }
    }

    public func login(_ sessionID: String, now: Double) -> ConsoleLogin? {
        state.withLockedValue { $0.login(sessionID, now: now) }
    }

    public func logout(_ sessionID: String) {
        state.withLockedValue { $0.logout(sessionID) }
    }

    /// 256 random bits as hex: unguessable, and valid in a cookie, a URL and a header without escaping.
    static func randomToken() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { lowercaseHex($0) }
    }
}
