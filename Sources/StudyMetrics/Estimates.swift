// Contract copy of the value types of StudyMetrics (the metrics branch brings the module itself).

/// A confidence interval.
public struct Interval: Sendable, Equatable, Codable {
    public var low: Double
    public var high: Double
    public init(low: Double, high: Double) {
        self.low = low
        self.high = high
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
    public var value: Double
    public var interval: Interval?
    public var isSignificant: Bool
    public init(value: Double, interval: Interval?, isSignificant: Bool) {
        self.value = value
        self.interval = interval
        self.isSignificant = isSignificant
    }
}

public enum SUSGrade: String, Sendable, Codable, CaseIterable {
    case aPlus = "A+", a = "A", aMinus = "A-", bPlus = "B+", b = "B", bMinus = "B-", cPlus = "C+", c = "C", cMinus = "C-", d = "D", f = "F"
}
