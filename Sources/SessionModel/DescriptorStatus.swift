/// `status`'s `descriptors`: muevald's open files against its limit, and its network connections by
/// kind against the share of that limit they may use (docs/SECURITY.md, "Descriptors").
public struct DescriptorStatus: Codable, Sendable, Equatable {
    /// The soft RLIMIT_NOFILE in effect.
    public var limit: Int
    /// Descriptors open now (the entries of /proc/self/fd).
    public var open: Int
    /// Kept back from connections for session files, SQLite, the control socket, reports (`limits.descriptor_reserve`).
    public var reserve: Int
    /// Capture and console connections together may use this many (`limit - reserve`).
    public var connectionLimit: Int
    /// `server.max_connections` and `console.max_connections`, clamped to `connectionLimit`.
    public var captureLimit: Int
    public var consoleLimit: Int
    /// Capture connections that sent a whole message (a hello, or an event).
    public var captureDevices: Int
    /// Capture connections that have sent no whole message yet (closed after `server.hello_timeout`).
    public var capturePending: Int
    /// Console connections that sent a request and were not upgraded.
    public var consoleHTTP: Int
    /// Console connections without a request head yet (closed after `console.header_timeout`).
    public var consolePending: Int
    public var consoleWebSockets: Int
    /// Connections to the control socket (counted in the reserve, never refused).
    public var control: Int
    /// Connections refused because a cap of the budget was reached.
    public var refused: Int
    /// Connections that had said nothing, closed to make room for new ones near the budget.
    public var evicted: Int
    /// Connections closed by a hello, header or TLS-handshake timeout.
    public var timedOut: Int

    public init(limit: Int, open: Int, reserve: Int, connectionLimit: Int, captureLimit: Int, consoleLimit: Int,
                captureDevices: Int = 0, capturePending: Int = 0, consoleHTTP: Int = 0, consolePending: Int = 0,
                consoleWebSockets: Int = 0, control: Int = 0, refused: Int = 0, evicted: Int = 0, timedOut: Int = 0) {
        self.limit = limit
        self.open = open
        self.reserve = reserve
        self.connectionLimit = connectionLimit
        self.captureLimit = captureLimit
        self.consoleLimit = consoleLimit
        self.captureDevices = captureDevices
        self.capturePending = capturePending
        self.consoleHTTP = consoleHTTP
        self.consolePending = consolePending
        self.consoleWebSockets = consoleWebSockets
        self.control = control
        self.refused = refused
        self.evicted = evicted
        self.timedOut = timedOut
    }

    /// Capture and console connections open now, the control socket's apart.
    public var connections: Int { captureDevices + capturePending + consoleHTTP + consolePending + consoleWebSockets }
}
