internal import Foundation

/// A confidence interval.
public struct Interval: Sendable, Equatable, Codable {
    public var low: Double
    public var high: Double

    public init(low: Double, high: Double) {
        self.low = low
        self.high = high
    }

    /// Whether `value` lies outside the interval: for a difference (`value` 0) or a ratio (`value` 1), the change is
    /// larger than the uncertainty.
    public func excludes(_ value: Double) -> Bool {
        value < low || value > high
    }

    func clipped(to bounds: ClosedRange<Double>) -> Interval {
        Interval(low: min(max(low, bounds.lowerBound), bounds.upperBound),
                 high: max(min(high, bounds.upperBound), bounds.lowerBound))
    }
}

/// A point estimate with its interval (nil when the sample is too small for one) and sample size.
public struct Estimate: Sendable, Equatable, Codable {
    public var value: Double
    public var interval: Interval?
    public var n: Int

    public init(value: Double, interval: Interval?, n: Int) {
        self.value = value
        self.interval = interval
        self.n = n
    }
}

/// A difference (or ratio) between two iterations, B against A.
public struct Difference: Sendable, Equatable, Codable {
    /// B − A (proportions, means) or B / A (time ratio).
    public var value: Double
    public var interval: Interval?
    /// Whether the interval excludes "no change" (0 for differences, 1 for ratios): the change is larger than the uncertainty.
    public var isSignificant: Bool

    public init(value: Double, interval: Interval?, isSignificant: Bool) {
        self.value = value
        self.interval = interval
        self.isSignificant = isSignificant
    }

    /// `isSignificant` from the interval: whether it excludes `noChange`.
    init(value: Double, interval: Interval, noChange: Double) {
        self.init(value: value, interval: interval, isSignificant: interval.excludes(noChange))
    }
}

/// Mean, sample variance (n − 1 denominator) and size of a sample of finite values; the shared first step of the
/// t-intervals. nil for an empty sample or one with a non-finite value.
struct SampleSummary {
    let n: Int
    let mean: Double
    /// The sample variance; 0 for n = 1.
    let variance: Double

    init?(_ values: [Double]) {
        guard !values.isEmpty, values.allSatisfy(\.isFinite) else { return nil }
        n = values.count
        let mean = values.reduce(0, +) / Double(n)
        // Two passes (mean, then squared deviations): no cancellation for values far from 0.
        let squares = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
        self.mean = mean
        variance = n > 1 ? squares / Double(n - 1) : 0
    }

    /// The summary of the natural logs, for the geometric mean and the time ratio; nil if a value is not positive.
    init?(logsOf values: [Double]) {
        guard values.allSatisfy({ $0 > 0 && $0.isFinite }) else { return nil }
        self.init(values.map { log($0) })
    }

    /// The t-interval of the mean: mean ± t(1 − α/2, n − 1) · s/√n; nil for n < 2. Zero variance gives the mean itself.
    func tInterval(confidence: Double) -> Interval? {
        guard n >= 2 else { return nil }
        let t = StudentT.quantile(upperTail(confidence), degreesOfFreedom: Double(n - 1))
        let margin = t * (variance / Double(n)).squareRoot()
        return Interval(low: mean - margin, high: mean + margin)
    }
}

/// 1 − α/2 for a two-sided interval at `confidence` = 1 − α.
func upperTail(_ confidence: Double) -> Double {
    1 - (1 - confidence) / 2
}

/// Whether `confidence` is a usable confidence level (strictly between 0 and 1).
func isConfidence(_ confidence: Double) -> Bool {
    confidence > 0 && confidence < 1
}
