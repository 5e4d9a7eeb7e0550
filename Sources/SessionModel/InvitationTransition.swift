/// One change of an invitation's status, as the session core's `InvitationLifecycle` decided it: the catalog
/// stores it only while the invitation still has one of the statuses `from`, so that a change decided on an
/// older read (an expiry, a stop) is never written over a newer one (a phone's acceptance, a withdrawal).
public struct InvitationTransition: Sendable, Equatable {
    public var code: String
    public var from: Set<InvitationStatus>
    public var to: InvitationStatus
    /// The session and device it becomes bound to; nil leaves them as they are.
    public var session: Int64?
    public var device: String?

    public init(code: String, from: Set<InvitationStatus>, to: InvitationStatus, session: Int64? = nil, device: String? = nil) {
        self.code = code
        self.from = from
        self.to = to
        self.session = session
        self.device = device
    }
}
