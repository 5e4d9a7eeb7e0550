/// How much the pool takes (`pool.*` in config/muevald.toml): enrolment is reached from outside the
/// lab, so every size an enrolling stranger controls has a bound.
public struct PoolLimits: Sendable, Equatable {
    /// Testers in the pool; enrolment beyond is refused.
    public var maxTesters = 10_000
    /// Bytes of one free-text answer, and of a field's label or choice.
    public var maxProfileText = 100
    /// Bytes of the consent text.
    public var maxConsentBytes = 32_768
    /// Profile fields, and choices of one field.
    public var maxFields = 32

    public init() {}
}
