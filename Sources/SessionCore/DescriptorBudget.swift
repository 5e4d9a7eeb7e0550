internal import DequeModule
public import SessionModel

/// Where muevald's open-file limit goes: a reserve for everything that is not a network connection
/// (session files with their -wal and -shm, the catalog, the control socket, reports and their
/// processes, PostgreSQL), the rest for capture and console connections. A flood of connections
/// then meets a refusal while the daemon can still open a session file or answer `status`
/// (docs/SECURITY.md, "Descriptors").
public struct DescriptorBudget: Sendable, Equatable {
    /// The soft RLIMIT_NOFILE in effect.
    public var limit: Int
    /// Descriptors kept back from connections (`limits.descriptor_reserve`).
    public var reserve: Int
    /// What `server.max_connections` and `console.max_connections` asked for.
    public var requestedCapture: Int
    public var requestedConsole: Int

    public init(limit: Int, reserve: Int, capture: Int, console: Int) {
        self.limit = limit
        self.reserve = reserve
        requestedCapture = capture
        requestedConsole = console
    }

    /// Capture and console connections together.
    public var connections: Int { max(0, limit - reserve) }
    /// From this many connections on, each new one closes the connection that has said nothing for
    /// longest: a sixteenth of the budget before it is full, so that refusals start only once the
    /// connections that remain have all spoken.
    public var evictFrom: Int { connections - max(1, connections / 16) }
    /// The configured caps, clamped to the budget.
    public var capture: Int { min(requestedCapture, connections) }
    public var console: Int { min(requestedConsole, connections) }

    /// The caps the budget lowered, for the log: `server.max_connections 4096 → 768`.
    public var clamped: [String] {
        [("server.max_connections", requestedCapture, capture), ("console.max_connections", requestedConsole, console)]
            .filter { $0.1 > $0.2 }
            .map { "\($0.0) \($0.1) → \($0.2)" }
    }
}

/// The two servers whose connections the budget shares.
public enum ConnectionServer: Sendable, Equatable {
    case capture
    case console
}

/// What an open connection is, for the budget and `status`.
public enum ConnectionKind: Sendable, Equatable, Hashable, CaseIterable {
    /// A capture connection that has sent no whole message yet.
    case capturePending
    /// A capture connection that sent a hello or an event.
    case captureDevice
    /// A console connection without a request head yet.
    case consolePending
    case consoleHTTP
    case consoleWebSocket

    var server: ConnectionServer {
        switch self {
        case .capturePending, .captureDevice: .capture
        case .consolePending, .consoleHTTP, .consoleWebSocket: .console
        }
    }

    /// Connections that have said nothing: the first closed to make room.
    var isPending: Bool { self == .capturePending || self == .consolePending }
}

/// Admission against the budget, as a value: a new connection is admitted, or refused with a
/// reason the capture server sends to the device (and the console to a browser); near the budget, admitting one also names the
/// connection that has waited longest without saying anything, to be closed. No I/O and no clock:
/// connections are ordered by when they opened, and a pending connection has been silent since.
public struct ConnectionAdmission: Sendable {
    public typealias ID = UInt64

    public enum Decision: Sendable, Equatable {
        case admit(ID, evict: ID?)
        case refuse(Refusal, evict: ID?)
    }

    public private(set) var budget: DescriptorBudget
    private var kinds: [ID: ConnectionKind] = [:]
    private(set) var counts: [ConnectionKind: Int] = [:]
    /// Pending connections, oldest first. Entries that spoke or closed since stay until they reach
    /// the front (or a compaction), so that proving a connection costs no search.
    private var pendingOrder = Deque<ID>()
    /// How many entries of `pendingOrder` are still pending.
    private var pendingCount = 0
    /// Named for eviction, not closed yet.
    private var evicting: Set<ID> = []
    private var nextID: ID = 1
    private(set) var refused = 0
    private(set) var evicted = 0

    public init(budget: DescriptorBudget) {
        self.budget = budget
    }

    /// A reload changed the caps or the reserve: what is open stays, what comes next meets the new caps.
    public mutating func update(_ budget: DescriptorBudget) {
        self.budget = budget
    }

    public var open: Int { kinds.count }

    public func count(_ kind: ConnectionKind) -> Int { counts[kind, default: 0] }

    func count(_ server: ConnectionServer) -> Int {
        ConnectionKind.allCases.filter { $0.server == server }.reduce(0) { $0 + count($1) }
    }

    /// A connection was accepted on `server`; it is pending until `spoke`.
    public mutating func open(_ server: ConnectionServer) -> Decision {
        let evict = open >= budget.evictFrom ? takeIdlest() : nil
        let cap = server == .capture ? budget.capture : budget.console
        if count(server) >= cap {
            refused += 1
            let (reason, name): (RefusalReason, String) = server == .capture
                ? (.deviceConnections, "device connections (server.max_connections") : (.consoleConnections, "console connections (console.max_connections")
            return .refuse(Refusal(reason, "the server has reached its limit of \(cap) \(name), clamped to the open-file budget)",
                                   retryAfter: Refusal.capRetryAfter), evict: evict)
        }
        if open >= budget.connections {
            refused += 1
            return .refuse(Refusal(.descriptorBudget, "the server has reached its budget of \(budget.connections) connections (open-file limit \(budget.limit), \(budget.reserve) kept for its files: limits.descriptor_reserve)",
                                   retryAfter: Refusal.capRetryAfter), evict: evict)
        }
        let id = nextID
        nextID += 1
        let kind: ConnectionKind = server == .capture ? .capturePending : .consolePending
        kinds[id] = kind
        counts[kind, default: 0] += 1
        pendingOrder.append(id)
        pendingCount += 1
        return .admit(id, evict: evict)
    }

    /// The connection is now of `kind`: it spoke (a device's first message, a request head) or was
    /// upgraded to a WebSocket. One named for eviction stays pending until it closes.
    public mutating func became(_ id: ID, _ kind: ConnectionKind) {
        guard let old = kinds[id], old != kind, old.server == kind.server, !kind.isPending, !evicting.contains(id) else { return }
        if old.isPending { pendingCount -= 1 }
        kinds[id] = kind
        counts[old, default: 1] -= 1
        counts[kind, default: 0] += 1
        compactIfStale()
    }

    public mutating func closed(_ id: ID) {
        guard let kind = kinds.removeValue(forKey: id) else { return }
        counts[kind, default: 1] -= 1
        if evicting.remove(id) == nil, kind.isPending { pendingCount -= 1 }
        compactIfStale()
    }

    /// The pending connection opened first, taken out of the order so that it is named once.
    private mutating func takeIdlest() -> ID? {
        while let id = pendingOrder.popFirst() {
            guard let kind = kinds[id], kind.isPending else { continue }
            pendingCount -= 1
            evicting.insert(id)
            evicted += 1
            return id
        }
        return nil
    }

    /// Drops entries that are no longer pending once they outnumber the pending ones.
    private mutating func compactIfStale() {
        guard pendingOrder.count > 2 * pendingCount + 64 else { return }
        pendingOrder = Deque(pendingOrder.filter { kinds[$0]?.isPending == true })
        pendingCount = pendingOrder.count
    }
}
