internal import NIOCore

extension TimeAmount {
    /// An app's configured seconds for NIO's timers: a timeout may be anything (inf, NaN, 1e300, negative),
    /// so the wait is capped at a day and a non-number or a negative is no wait, never a trapping conversion.
    static func capped(seconds: Double) -> TimeAmount {
        guard seconds > 0 else { return .zero }
        return .nanoseconds(Int64(min(seconds, 86_400) * 1e9))
    }
}
