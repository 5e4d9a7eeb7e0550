internal import Foundation

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

    public init(backoffAfter: Int = 3, backoffSeconds: Double = 1, lockoutAfter: Int = 10, lockoutSeconds: Double = 900,
                rotateAfter: Int = 20, trackedAddresses: Int = 10_000) {
        self.backoffAfter = backoffAfter
        self.backoffSeconds = backoffSeconds
        self.lockoutAfter = lockoutAfter
        self.lockoutSeconds = lockoutSeconds
        self.rotateAfter = rotateAfter
        self.trackedAddresses = trackedAddresses
    }

    /// How long an address that sent `failures` wrong codes waits after the last one; nil: not at all.
    func wait(after failures: Int) -> Double? {
        if failures >= lockoutAfter { return lockoutSeconds }
        guard failures >= backoffAfter else { return nil }
        // Doubling, capped by the lockout: a configured ceiling far above 2^1023 gives inf, then the cap.
        return min(backoffSeconds * pow(2, Double(failures - backoffAfter)), lockoutSeconds)
    }
}

/// Who may try a pairing code now, and what a wrong one costs: per address, a few attempts, then
/// exponential backoff, then a lockout; per session, a new code after enough wrong ones from
/// anywhere. No clock and no I/O: the registry passes the time and carries out the decisions.
///
/// Memory is bounded: at most `PairingLimits.trackedAddresses` addresses (IPv6 ones by their /64,
/// which one host can fill) and one count per open session with a code.
package struct PairingGuard {
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
        var lastFailure: Double
        /// The hash of the last wrong code (Swift's hashes are seeded per process).
        var lastCode: Int
    }

    private var addresses: [String: Entry] = [:]
    private var sessionFailures: [Int64: Int] = [:]
    private var logWindowStart = -Double.infinity
    private var loggedInWindow = 0
    private var unlogged = 0

    /// Addresses remembered now.
    var trackedAddresses: Int { addresses.count }

    /// Whether `address` may have its code compared at `now`.
    mutating func admit(address: String, now: Double, limits: PairingLimits) -> Admission {
        let key = Self.key(address)
        guard let entry = current(key, now: now, limits: limits), let wait = limits.wait(after: entry.failures) else { return .compare }
        let remaining = entry.lastFailure + wait - now
        guard remaining > 0 else { return .compare }
        return .refused(retryAfter: remaining, lockedOut: entry.failures >= limits.lockoutAfter)
    }

    /// `address` presented `code`, which no open session has; `sessions` are the open sessions with a code.
    mutating func failed(address: String, code: String, sessions: [Int64], now: Double, limits: PairingLimits) -> Failure {
        let key = Self.key(address)
        let hash = code.hashValue
        if let entry = current(key, now: now, limits: limits), entry.lastCode == hash {
            return Failure(counted: false, failures: entry.failures, wait: limits.wait(after: entry.failures),
                           lockedOut: entry.failures >= limits.lockoutAfter, rotate: [], log: .quiet)
        }
        if addresses[key] == nil { makeRoom(for: limits.trackedAddresses) }
        var entry = addresses[key] ?? Entry(failures: 0, lastFailure: now, lastCode: hash)
        entry.failures += 1
        entry.lastFailure = now
        entry.lastCode = hash
        addresses[key] = entry

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
        return Failure(counted: true, failures: entry.failures, wait: limits.wait(after: entry.failures),
                       lockedOut: entry.failures >= limits.lockoutAfter, rotate: rotate, log: logDecision(now: now))
    }

    /// `address` presented a right code: its wrong ones are forgiven.
    mutating func succeeded(address: String) {
        addresses[Self.key(address)] = nil
    }

    /// The address's entry, forgotten once its last wrong code is `lockoutSeconds` old.
    private mutating func current(_ key: String, now: Double, limits: PairingLimits) -> Entry? {
        guard let entry = addresses[key] else { return nil }
        guard now - entry.lastFailure < limits.lockoutSeconds else {
            addresses[key] = nil
            return nil
        }
        return entry
    }

    /// Forgets the addresses with the oldest wrong codes until one more fits. A linear scan: it runs
    /// only for a new address when the table is full, and a full table is a few thousand entries.
    private mutating func makeRoom(for limit: Int) {
        while addresses.count >= max(limit, 1), let oldest = addresses.min(by: { $0.value.lastFailure < $1.value.lastFailure })?.key {
            addresses[oldest] = nil
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

    /// What the limits count by: an IPv4 address, or an IPv6 address's /64 (one host can use a whole
    /// /64); an IPv4-mapped IPv6 address is its IPv4 address.
    package static func key(_ address: String) -> String {
        guard address.contains(":") else { return address }
        let bare = address.prefix { $0 != "%" }.lowercased()
        if bare.hasPrefix("::ffff:"), bare.contains(".") { return String(bare.dropFirst(7)) }
        let halves = bare.components(separatedBy: "::")
        func groups(_ text: String) -> [UInt16?] {
            // A trailing dotted IPv4 part is the last two groups.
            text.isEmpty ? [] : text.split(separator: ":", omittingEmptySubsequences: false)
                .flatMap { $0.contains(".") ? [0, 0] : [UInt16($0, radix: 16)] }
        }
        let head = groups(halves[0])
        let tail = halves.count == 2 ? groups(halves[1]) : []
        let zeros = 8 - head.count - tail.count
        guard halves.count <= 2, halves.count == 2 ? zeros >= 1 : zeros == 0 else { return address }
        let network = (head + Array(repeating: 0, count: zeros) + tail).prefix(4).compactMap { $0 }
        guard network.count == 4 else { return address }
        return network.map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
    }
}
