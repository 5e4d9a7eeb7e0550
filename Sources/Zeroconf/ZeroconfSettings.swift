/// How muevald announces itself on the network.
public struct ZeroconfSettings: Sendable, Equatable {
    public var enabled = true
    /// The instance name; nil: "muEval on HOSTNAME".
    public var name: String?
    /// Service types announced besides `_muEvaluationFramework-capture._tcp` (short aliases for strict browsers).
    public var extraTypes: [String] = []

    public init() {}
}
