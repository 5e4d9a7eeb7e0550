public import Logging
internal import NIOConcurrencyHelpers
public import SessionModel

/// Which refusals get a log line: the first of an address for a reason, then none for that address and reason
/// for `window` seconds, so that 150 phones behind one address retrying every second make one line a minute
/// and a count, not 9,000 lines. At most `capacity` pairs are remembered; while all are recent, refusals of
/// further pairs are not logged but tallied, and the next line says how many. A value: the caller passes the time.
public struct RefusalLog: Sendable {
    public enum Decision: Sendable, Equatable {
        /// Log it; `suppressed` refusals of this address and reason went unlogged since its last line, and
        /// `untracked` of addresses the full table had no room for.
        case log(suppressed: Int, untracked: Int)
        case quiet
    }

    private struct Key: Hashable {
        var address: String
        var reason: RefusalReason
    }

    private struct Entry {
        var logged: Double
        var suppressed: Int
    }

    public let window: Double
    public let capacity: Int
    private var entries: [Key: Entry] = [:]
    private var untracked = 0

    public init(window: Double = 60, capacity: Int = 4096) {
        self.window = window
        self.capacity = max(1, capacity)
    }

    public mutating func note(_ reason: RefusalReason, address: String, now: Double) -> Decision {
        let key = Key(address: address, reason: reason)
        if var entry = entries[key] {
            guard now - entry.logged >= window else {
                entry.suppressed += 1
                entries[key] = entry
                return .quiet
            }
            entries[key] = Entry(logged: now, suppressed: 0)
            return .log(suppressed: entry.suppressed, untracked: takeUntracked())
        }
        if entries.count >= capacity {
            // Linear, and only while the table is full: what has been quiet a whole window may go.
            entries = entries.filter { now - $0.value.logged < window }
            guard entries.count < capacity else {
                untracked += 1
                return .quiet
            }
        }
        entries[key] = Entry(logged: now, suppressed: 0)
        return .log(suppressed: 0, untracked: takeUntracked())
    }

    private mutating func takeUntracked() -> Int {
        defer { untracked = 0 }
        return untracked
    }
}

/// Every refusal at muevald's doors, counted by reason for `status` and /metrics, and logged through `RefusalLog`
/// with the setting that made it. Shared by the capture server and the console (it lives in `CaptureCounters`).
public final class Refusals: Sendable {
    private struct State {
        var counts: [RefusalReason: Int] = [:]
        var log = RefusalLog()
    }
    private let state = NIOLockedValueBox(State())

    public init() {}

    /// Counts `refusal` of a connection from `address` (`what`: "a web device", "a device connection", …) and logs
    /// it unless a line for this address and reason went out within the minute. `http`: it was answered with the
    /// reason's HTTP status (a device connection gets an `<error>` instead).
    public func record(_ refusal: Refusal, of what: String, from address: String, http: Bool, now: Double, logger: Logger) {
        let decision = state.withLockedValue { state in
            state.counts[refusal.reason, default: 0] += 1
            return state.log.note(refusal.reason, address: address, now: now)
        }
        guard case .log(let suppressed, let untracked) = decision else { return }
        logger.warning("\(Self.line(refusal, of: what, from: address, http: http, suppressed: suppressed, untracked: untracked))")
    }

    /// `refused a web device from 10.0.0.7 with 429: … (capture.web_max_per_address); 37 more from this address since the last such line, not logged`.
    static func line(_ refusal: Refusal, of what: String, from address: String, http: Bool, suppressed: Int, untracked: Int) -> String {
        var line = "refused \(what) from \(address)\(http ? " with \(refusal.reason.httpStatus)" : ""): \(refusal.message)"
        if suppressed > 0 { line += "; \(suppressed) more from this address since the last such line, not logged" }
        if untracked > 0 { line += "; \(untracked) refusals of other addresses not logged (too many addresses at once)" }
        return line
    }

    /// Every reason's count, by raw value, for `CounterSnapshot.refusals`.
    public func counts() -> [String: Int] {
        let counts = state.withLockedValue { $0.counts }
        return CounterSnapshot.noRefusals.merging(counts.map { ($0.key.rawValue, $0.value) }) { $1 }
    }
}
