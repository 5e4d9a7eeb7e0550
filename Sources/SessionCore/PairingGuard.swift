internal import Foundation
internal import WireProtocol

/// How hard guessing a session's six-digit pairing code is made (docs/SECURITY.md, "Who can record").
/// Reloadable: each attach reads the limits in effect.
public struct PairingLimits: Sendable, Equatable {
    /// Wrong codes an address may send before it must wait between attempts.
    public var backoffAfter: Int
    /// The first wait (seconds); it doubles with each further wrong code.
    public var backoffSeconds: Double
    /// Wrong codes after which an address is refused for `lockoutSeconds`.
    public var lockoutAfter: Int
    /// How long a locked-out address is refused, and how long an address's wrong codes are remembered.
    public var lockoutSeconds: Double
    /// Wrong codes (from all addresses) while a session is open after which its code changes; 0: never.
    public var rotateAfter: Int
    /// Addresses remembered at once (memory bound); beyond it the one with the oldest wrong code is forgotten.
    public var trackedAddresses: Int
    /// An IPv6 /48 (a site) gets this many times an address's wrong codes before it waits, and before it is locked out.
    public var networkFactor: Int

    public init(backoffAfter: Int = 3, backoffSeconds: Double = 1, lockoutAfter: Int = 10, lockoutSeconds: Double = 900,
                rotateAfter: Int = 20, trackedAddresses: Int = 10_000, networkFactor: Int = 16) {
        self.backoffAfter = backoffAfter
        self.backoffSeconds = backoffSeconds
        self.lockoutAfter = lockoutAfter
        self.lockoutSeconds = lockoutSeconds
        self.rotateAfter = rotateAfter
        self.trackedAddresses = trackedAddresses
        self.networkFactor = networkFactor
    }

    /// The limits a key counts by: a network's thresholds `networkFactor` times an address's (saturating).
    func scaled(for key: NetworkAddress.LimitKey) -> PairingLimits {
        guard key.isNetwork else { return self }
        var network = self
        network.backoffAfter = backoffAfter.multipliedReportingOverflow(by: networkFactor).overflow ? .max : backoffAfter * networkFactor
        network.lockoutAfter = lockoutAfter.multipliedReportingOverflow(by: networkFactor).overflow ? .max : lockoutAfter * networkFactor
        return network
    }

    /// How long an address that sent `failures` wrong codes waits after the last one; nil: not at all.
    func wait(after failures: Int) -> Double? {
        if failures >= lockoutAfter { return lockoutSeconds }
        guard failures >= backoffAfter else { return nil }
        // Doubling, capped by the lockout: a configured ceiling far above 2^1023 gives inf, then the cap.
        return min(backoffSeconds * pow(2, Double(failures - backoffAfter)), lockoutSeconds)
    }
}

/// Who may try a code now, and what a wrong one costs: per address, a few attempts, then
/// exponential backoff, then a lockout; per session, a new code after enough wrong ones from
/// anywhere. No clock and no I/O: the registry passes the time and carries out the decisions.
///
/// What forgives (docs/SECURITY.md, "Who can record"): only time, and a right *pairing* code, which
/// forgives that address's wrong pairing codes and nothing else. A right invitation code forgives
/// nothing: anyone can hold an invitation (the pool's enrolment is public), so a look-up of one's own
/// must not pay for guesses at others'. An IPv6 address counts by its /64 and by its /48, whose
/// thresholds are `networkFactor` times larger: a site's 65,536 /64s do not multiply its guesses.
///
/// Memory is bounded: at most `PairingLimits.trackedAddresses` keys and one count per open session
/// with a code.
package struct PairingGuard {
    /// What a device or visitor presents to be let in: both kinds count against the same limits.
    package enum Kind: String, Sendable {
        case pairingCode = "pairing code"
        case invitation = "invitation code"
    }

    enum Admission: Equatable {
        /// Compare the code.
        case compare
        /// Refused without comparing, for `retryAfter` more seconds.
        case refused(retryAfter: Double, lockedOut: Bool)
    }

    /// What a wrong code led to.
    struct Failure: Equatable {
        /// False for the same wrong code again from the same address (a device sending events after
        /// its refused hello): no new guess, so it costs nothing more.
        var counted: Bool
        /// Wrong codes from the address within `lockoutSeconds`.
        var failures: Int
        /// The wait before the address's next attempt; nil: none.
        var wait: Double?
        var lockedOut: Bool
        /// Sessions whose code must change now.
        var rotate: [Int64]
        var log: LogDecision
    }

    /// Wrong codes are logged with their address, at most `loggedPerMinute` a minute, so that a
    /// flood from many addresses cannot flood the journal (`authenticationFailures` counts them all).
    enum LogDecision: Equatable {
        /// Log it, saying how many went unlogged before it.
        case log(unlogged: Int)
        case quiet
    }

    static let loggedPerMinute = 20

    private struct Entry {
        var failures: Int
        /// Of `failures`, the wrong pairing codes: the ones a right pairing code forgives.
        var pairingFailures: Int
        var lastFailure: Double
        /// The hash of the last wrong code (Swift's hashes are seeded per process).
        var lastCode: Int
    }

    private var entries: [String: Entry] = [:]
    private var sessionFailures: [Int64: Int] = [:]
    private var logWindowStart = -Double.infinity
    private var loggedInWindow = 0
    private var unlogged = 0

    /// Keys (addresses, /64s and /48s) remembered now.
    var trackedAddresses: Int { entries.count }

    /// Whether `address` may have its code compared at `now`: the longest wait any of its keys owes.
    mutating func admit(address: String, now: Double, limits: PairingLimits) -> Admission {
        var refusal: Admission = .compare
        for key in NetworkAddress.limitKeys(address) {
            let scaled = limits.scaled(for: key)
            guard let entry = current(key.name, now: now, limits: scaled), let wait = scaled.wait(after: entry.failures) else { continue }
            let remaining = entry.lastFailure + wait - now
            guard remaining > 0 else { continue }
            if case .refused(let longest, _) = refusal, longest >= remaining { continue }
            refusal = .refused(retryAfter: remaining, lockedOut: entry.failures >= scaled.lockoutAfter)
        }
        return refusal
    }

    /// `address` presented `code` of `kind`, which nothing has; `sessions` are the open sessions
    /// the code could have been meant for (those with a pairing code; none for an invitation code).
    mutating func failed(address: String, code: String, kind: Kind = .pairingCode, sessions: [Int64], now: Double,
                         limits: PairingLimits) -> Failure {
        let keys = NetworkAddress.limitKeys(address)
        let hash = code.hashValue
        let finest = keys[0]
        if let entry = current(finest.name, now: now, limits: limits), entry.lastCode == hash {
            return Failure(counted: false, failures: entry.failures, wait: limits.wait(after: entry.failures),
                           lockedOut: entry.failures >= limits.lockoutAfter, rotate: [], log: .quiet)
        }
        // The finest key speaks for the address, unless its network owes a longer wait.
        var decided: (failures: Int, wait: Double?, lockedOut: Bool) = (0, nil, false)
        for (index, key) in keys.enumerated() {
            let scaled = limits.scaled(for: key)
            if current(key.name, now: now, limits: scaled) == nil { makeRoom(for: limits.trackedAddresses) }
            var entry = entries[key.name] ?? Entry(failures: 0, pairingFailures: 0, lastFailure: now, lastCode: hash)
            entry.failures += 1
            if kind == .pairingCode { entry.pairingFailures += 1 }
            entry.lastFailure = now
            entry.lastCode = hash
            entries[key.name] = entry
            let wait = scaled.wait(after: entry.failures)
            if index == 0 || (wait ?? 0) > (decided.wait ?? 0) {
                decided = (entry.failures, wait, entry.failures >= scaled.lockoutAfter)
            }
        }

        // A wrong code could have been any open session's: each one counts it.
        sessionFailures = sessionFailures.filter { sessions.contains($0.key) }
        var rotate: [Int64] = []
        for session in sessions {
            let count = sessionFailures[session, default: 0] + 1
            if limits.rotateAfter > 0, count >= limits.rotateAfter {
                rotate.append(session)
                sessionFailures[session] = nil
            } else {
                sessionFailures[session] = count
            }
        }
        return Failure(counted: true, failures: decided.failures, wait: decided.wait, lockedOut: decided.lockedOut, rotate: rotate,
                       log: logDecision(now: now))
    }

    /// `address` presented a right code of `kind`. A right pairing code forgives the address's wrong
    /// pairing codes (its /48 forgets as many); a right invitation code forgives nothing (see above).
    mutating func succeeded(address: String, kind: Kind) {
        guard kind == .pairingCode else { return }
        let keys = NetworkAddress.limitKeys(address)
        let forgiven = entries[keys[0].name]?.pairingFailures ?? 0
        guard forgiven > 0 else { return }
        for key in keys {
            guard var entry = entries[key.name] else { continue }
            let count = min(forgiven, entry.pairingFailures)
            entry.failures -= count
            entry.pairingFailures -= count
            entries[key.name] = entry.failures > 0 ? entry : nil
        }
    }

    /// The key's entry, forgotten once its last wrong code is `lockoutSeconds` old.
    private mutating func current(_ key: String, now: Double, limits: PairingLimits) -> Entry? {
        guard let entry = entries[key] else { return nil }
        guard now - entry.lastFailure < limits.lockoutSeconds else {
            entries[key] = nil
            return nil
        }
        return entry
    }

    /// Forgets the keys with the oldest wrong codes until one more fits. A linear scan: it runs
    /// only for a new key when the table is full, and a full table is a few thousand entries.
    private mutating func makeRoom(for limit: Int) {
        while entries.count >= max(limit, 1), let oldest = entries.min(by: { $0.value.lastFailure < $1.value.lastFailure })?.key {
            entries[oldest] = nil
        }
    }

    private mutating func logDecision(now: Double) -> LogDecision {
        if now - logWindowStart >= 60 {
            logWindowStart = now
            loggedInWindow = 0
        }
        guard loggedInWindow < Self.loggedPerMinute else {
            unlogged += 1
            return .quiet
        }
        loggedInWindow += 1
        defer { unlogged = 0 }
        return .log(unlogged: unlogged)
    }

    /// How an address is named in messages and logs: an IPv4 address, or an IPv6 address's /64.
    package static func key(_ address: String) -> String {
        NetworkAddress.limitKeys(address)[0].name
    }
}
