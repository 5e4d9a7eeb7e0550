/// How far replication is, for `muevalctl status` and `/metrics`.
public struct ReplicationStatus: Codable, Sendable, Equatable {
    /// `host:port/database`, never credentials.
    public var target: String
    /// `starting`, `replicating`, or `unreachable: …` (muevald records locally meanwhile).
    public var state: String
    /// Events stored locally and not yet in PostgreSQL, over every session.
    public var pendingEvents: Int64
    /// Seconds since the oldest event not yet in PostgreSQL arrived; nil when none waits.
    public var lagSeconds: Double?
    public var sessions: [SessionReplication]

    public init(target: String, state: String, pendingEvents: Int64, lagSeconds: Double?, sessions: [SessionReplication]) {
        self.target = target
        self.state = state
        self.pendingEvents = pendingEvents
        self.lagSeconds = lagSeconds
        self.sessions = sessions
    }
}

extension ReplicationStatus {
    /// Each session's position, with the total waiting derived from them.
    public mutating func record(_ sessions: [SessionReplication], lagSeconds: Double?) {
        self.sessions = sessions
        pendingEvents = sessions.reduce(0) { $0 + $1.pending }
        self.lagSeconds = lagSeconds
    }
}

/// One session's replication position.
public struct SessionReplication: Codable, Sendable, Equatable {
    public var session: Int64
    public var uuid: String
    /// The last local event id in PostgreSQL.
    public var replicated: Int64
    public var pending: Int64
    /// The lab PostgreSQL has this uuid as, when it is another lab's session: replication leaves that
    /// row and its events alone and sends nothing of this session (docs/POSTGRES.md, "Whose session").
    public var ownedBy: String?

    public init(session: Int64, uuid: String, replicated: Int64, pending: Int64, ownedBy: String? = nil) {
        self.session = session
        self.uuid = uuid
        self.replicated = replicated
        self.pending = pending
        self.ownedBy = ownedBy
    }
}
