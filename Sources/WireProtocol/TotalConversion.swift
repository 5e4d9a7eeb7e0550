/// Conversions that cannot trap, for numbers that came from a device, a file or a browser.
///
/// Swift's `Int(someDouble)` traps on NaN, infinities and anything beyond `Int.max`, `a + 1` traps on
/// overflow and `lower..<upper` traps when `lower > upper`; a value a device sent reaches all three
/// (docs/SECURITY.md, "Absurd numbers"). Every conversion of untrusted numbers goes through these few
/// helpers, and `scripts/total-conversions.py` (run by `make test`) fails on a new trapping one.

extension FixedWidthInteger {
    /// The integer part of `value`, or nil when it is NaN, infinite or outside this type's range.
    @inlinable
    public init?(checked value: Double) {
        guard value.isFinite else { return nil }
        self.init(exactly: value.rounded(.towardZero))
    }

    /// The integer part of `value`, clamped into this type's range; NaN becomes `nan`. For display and
    /// sizes whose bounds are checked after, never for values that must stay distinguishable.
    @inlinable
    public init(saturating value: Double, nan: Self = 0) {
        if value.isNaN {
            self = nan
        } else if value >= Double(Self.max) {
            self = .max
        } else if value <= Double(Self.min) {
            self = .min
        } else {
            self.init(value.rounded(.towardZero))
        }
    }

    /// `self + other`, or nil on overflow.
    @inlinable
    public func checkedAdding(_ other: Self) -> Self? {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? nil : sum
    }

    /// `self * other`, or nil on overflow.
    @inlinable
    public func checkedMultiplying(by other: Self) -> Self? {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? nil : product
    }
}

extension Range where Bound: Comparable {
    /// `lower..<upper`, or nil when `lower > upper` (which `..<` traps on).
    @inlinable
    public static func checked(_ lower: Bound, _ upper: Bound) -> Range? {
        lower <= upper ? lower..<upper : nil
    }
}

extension ClosedRange where Bound: Comparable {
    /// `lower...upper`, or nil when `lower > upper` (which `...` traps on).
    @inlinable
    public static func checked(_ lower: Bound, _ upper: Bound) -> ClosedRange? {
        lower <= upper ? lower...upper : nil
    }
}

extension Double {
    /// `self` when finite, else nil: a NaN or infinity from outside is a missing value, not a number.
    @inlinable
    public var finite: Double? { isFinite ? self : nil }
}
