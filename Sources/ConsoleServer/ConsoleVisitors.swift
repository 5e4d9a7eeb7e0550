internal import Crypto
internal import Foundation
internal import NIOConcurrencyHelpers
internal import SessionModel
internal import WireProtocol

/// The pages a tester's phone opens without a console login (`/enrol/KEY`, `/withdraw`, `/i/CODE`
/// and their calls under `/api/public/`): who they are for and what guards them (docs/SECURITY.md).
///
/// A visitor has no login, so its CSRF token is bound to a random cookie instead: the token is an
/// HMAC of the cookie's value under a key that lives only in this process. A page carries the token
/// (a `<meta>` the server fills per request); a state change must bring both, from this origin.
/// Nothing is stored per visitor, so a flood of visitors costs no memory; a restart makes pages
/// reload for a new token, as a restart logs the console out.
struct ConsoleVisitors: Sendable {
    static let cookieName = "mueval_visitor"
    /// Where a public page's frame puts the token; the server replaces it in each answer.
    static let tokenPlaceholder = "@@mueval-visitor-token@@"

    /// The HMAC key's bytes (`SymmetricKey` is not `Sendable`).
    private let key: [UInt8] = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }

    /// The token for the cookie's value.
    func token(for cookie: String) -> String {
        lowercaseHex(HMAC<SHA256>.authenticationCode(for: Array(cookie.utf8), using: SymmetricKey(data: key)))
    }

    func accepts(token: String?, cookie: String?) -> Bool {
        guard let token, let cookie, !cookie.isEmpty else { return false }
        return constantTimeEqual(token, self.token(for: cookie))
    }

    static func newCookie() -> String { ConsoleAccess.randomToken() }
}

/// How often one address may use the pages without a login (docs/SECURITY.md): requests of any
/// kind a minute, enrolments and withdrawal attempts an hour (`console.public_requests_per_minute`,
/// `pool.enrolments_per_hour`, `pool.withdrawals_per_hour`).
public struct VisitorLimits: Sendable, Equatable {
    public var requestsPerMinute: Int
    public var enrolmentsPerHour: Int
    public var withdrawalsPerHour: Int
    /// Addresses remembered per limit (memory bound); beyond it the one seen longest ago is forgotten.
    public var trackedAddresses: Int
    /// An IPv6 /48 (a site) may use this many times an address's quota (`server.pairing_network_factor`).
    public var networkFactor: Int

    public init(requestsPerMinute: Int = 120, enrolmentsPerHour: Int = 20, withdrawalsPerHour: Int = 10, trackedAddresses: Int = 10_000,
                networkFactor: Int = 16) {
        self.requestsPerMinute = requestsPerMinute
        self.enrolmentsPerHour = enrolmentsPerHour
        self.withdrawalsPerHour = withdrawalsPerHour
        self.trackedAddresses = trackedAddresses
        self.networkFactor = networkFactor
    }
}

/// At most `limit` uses per `window` seconds per address: a fixed window, counted from an address's
/// first use in it. A value: the caller passes the time.
struct AddressQuota: Sendable {
    enum Decision: Equatable {
        case allowed
        case refused(retryAfter: Double)
    }

    private struct Window { var start: Double; var count: Int }
    private var windows: [String: Window] = [:]

    mutating func use(_ address: String, limit: Int, window: Double, tracked: Int, now: Double) -> Decision {
        if var current = windows[address], now - current.start < window {
            guard current.count < limit else { return .refused(retryAfter: current.start + window - now) }
            current.count += 1
            windows[address] = current
            return .allowed
        }
        if windows[address] == nil, windows.count >= max(tracked, 1) {
            // Expired windows first; else the oldest. Linear, and only when the table is full.
            windows = windows.filter { now - $0.value.start < window }
            if windows.count >= max(tracked, 1), let oldest = windows.min(by: { $0.value.start < $1.value.start })?.key {
                windows[oldest] = nil
            }
        }
        guard limit > 0 else { return .refused(retryAfter: window) }
        windows[address] = Window(start: now, count: 1)
        return .allowed
    }
}

/// The three quotas behind one lock.
final class VisitorQuotas: Sendable {
    enum Kind: Sendable { case request, enrolment, withdrawal }

    private let limits: VisitorLimits
    private let quotas = NIOLockedValueBox<[Kind: AddressQuota]>([:])

    init(limits: VisitorLimits) {
        self.limits = limits
    }

    /// Counts one use by `address` (an IPv4 address, or an IPv6 address's /64 and /48, as for wrong pairing
    /// codes); throws the refusal a visitor reads (429) when over the limit.
    func use(_ kind: Kind, by address: String, now: Double) throws(ConsoleError) {
        let (limit, window, what): (Int, Double, String) = switch kind {
        case .request: (limits.requestsPerMinute, 60, "requests")
        case .enrolment: (limits.enrolmentsPerHour, 3600, "enrolments")
        case .withdrawal: (limits.withdrawalsPerHour, 3600, "withdrawal attempts")
        }
        let networkLimit = limit.multipliedReportingOverflow(by: limits.networkFactor).overflow ? .max : limit * limits.networkFactor
        let decision = quotas.withLockedValue { quotas -> AddressQuota.Decision in
            for key in NetworkAddress.limitKeys(address) {
                let decision = quotas[kind, default: AddressQuota()].use(key.name, limit: key.isNetwork ? networkLimit : limit, window: window,
                                                                         tracked: limits.trackedAddresses, now: now)
                if case .refused = decision { return decision }
            }
            return .allowed
        }
        if case .refused(let retryAfter) = decision {
            throw .tooManyRequests("too many \(what) from your address: try again in \(Int(saturating: retryAfter.rounded(.up))) s")
        }
    }
}
