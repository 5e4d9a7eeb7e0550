/// Why muevald turned a connection or a WebSocket upgrade away before it carried anything: each reason is
/// one limit with one setting, answered with the status that fits, counted in `status` (`counters.refusals`)
/// and /metrics (`mueval_refusals_total{reason}`), and logged at most once a minute per address
/// (docs/SECURITY.md, "Refusals that say why").
public enum RefusalReason: String, Codable, Sendable, CaseIterable, Comparable {
    /// A browser page whose origin is neither the console's nor in `capture.web_origins`.
    case origin
    /// A request whose `Host` names nothing the console answers to (DNS rebinding).
    case host
    /// `capture.web_max_per_address` web devices are connected from the address already.
    case webPerAddress = "web_per_address"
    /// `capture.web_connections_per_minute` web devices connected from the address this minute.
    case webRate = "web_rate"
    /// `server.max_connections` device connections are open.
    case deviceConnections = "device_connections"
    /// `server.max_connections_per_address` device connections are open from the address.
    case devicePerAddress = "device_per_address"
    /// `console.max_connections` console connections are open.
    case consoleConnections = "console_connections"
    /// Capture and console connections use every descriptor the open-file limit leaves after
    /// `limits.descriptor_reserve`.
    case descriptorBudget = "descriptor_budget"

    /// The setting that sets the limit, as config/muevald.toml names it.
    public var setting: String {
        switch self {
        case .origin: "capture.web_origins"
        case .host: "console.allowed_hosts"
        case .webPerAddress: "capture.web_max_per_address"
        case .webRate: "capture.web_connections_per_minute"
        case .deviceConnections: "server.max_connections"
        case .devicePerAddress: "server.max_connections_per_address"
        case .consoleConnections: "console.max_connections"
        case .descriptorBudget: "limits.descriptor_reserve"
        }
    }

    /// The HTTP status an upgrade refused for this reason is answered with: 403 for who the page is, 421 for a
    /// name the console does not answer to, 429 for what one address did, 503 for what the server holds.
    public var httpStatus: Int {
        switch self {
        case .origin: 403
        case .host: 421
        case .webPerAddress, .webRate, .devicePerAddress: 429
        case .deviceConnections, .consoleConnections, .descriptorBudget: 503
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One refusal: why, in one line a user can act on (it names the limit and its setting), and, for a cap, when
/// to try again.
public struct Refusal: Sendable, Equatable, CustomStringConvertible {
    public var reason: RefusalReason
    public var message: String
    /// Seconds before another attempt can succeed (`Retry-After`); nil where waiting does not help.
    public var retryAfter: Int?

    public init(_ reason: RefusalReason, _ message: String, retryAfter: Int? = nil) {
        self.reason = reason
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { message }

    /// What a connection cap tells a client to wait: connections come and go within seconds, and the console
    /// closes a WebSocket whose peer went silent within two pings (`console.websocket_ping`, 30 s).
    public static let capRetryAfter = 30
}
