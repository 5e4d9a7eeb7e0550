// TEMP until the metrics branch merges: simple implementations of the metrics API the study analysis
// calls (names from the issue-16 contract), so that the study-analysis branch builds. Drop this file
// when the metrics branch brings the real ones. 95 % intervals only.
internal import Foundation

// TEMP until the metrics branch merges
public enum CompletionRate {
    /// Observed rate with the adjusted-Wald interval (Sauro & Lewis), clipped to 0…1.
    public static func adjustedWald(successes: Int, trials: Int) -> Estimate? {
        guard trials > 0 else { return nil }
        let z = 1.959964, n = Double(trials)
        let adjusted = (Double(successes) + z * z / 2) / (n + z * z)
        let margin = z * (adjusted * (1 - adjusted) / (n + z * z)).squareRoot()
        return Estimate(value: Double(successes) / n,
                        interval: Interval(low: max(0, adjusted - margin), high: min(1, adjusted + margin)), n: trials)
    }
}

// TEMP until the metrics branch merges
public enum TimeOnTask {
    /// Geometric mean with the t-interval of the logarithms, transformed back.
    public static func geometricMean(_ times: [Double]) -> Estimate? {
        let logs = times.filter { $0 > 0 }.map { log($0) }
        guard let estimate = MeanEstimate.tInterval(logs) else { return nil }
        return Estimate(value: exp(estimate.value),
                        interval: estimate.interval.map { Interval(low: exp($0.low), high: exp($0.high)) }, n: estimate.n)
    }
}

// TEMP until the metrics branch merges
public enum MeanEstimate {
    /// Mean with its t-interval (none below two values), clipped to `bounds`.
    public static func tInterval(_ values: [Double], bounds: ClosedRange<Double>? = nil) -> Estimate? {
        guard !values.isEmpty else { return nil }
        let mean = values.reduce(0, +) / Double(values.count)
        guard values.count > 1 else { return Estimate(value: mean, interval: nil, n: 1) }
        let margin = TemporaryT.quantile975(Double(values.count - 1)) * (variance(values) / Double(values.count)).squareRoot()
        var interval = Interval(low: mean - margin, high: mean + margin)
        if let bounds {
            interval = Interval(low: max(bounds.lowerBound, interval.low), high: min(bounds.upperBound, interval.high))
        }
        return Estimate(value: mean, interval: interval, n: values.count)
    }

    static func variance(_ values: [Double]) -> Double {
        let mean = values.reduce(0, +) / Double(values.count)
        return values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count - 1)
    }
}

// TEMP until the metrics branch merges
public enum SUS {
    /// Brooke's score 0…100; nil unless ten answers 1…5.
    public static func score(_ items: [Int]) -> Double? {
        guard items.count == 10, items.allSatisfy({ (1...5).contains($0) }) else { return nil }
        let sum = items.enumerated().reduce(0) { $0 + ($1.offset % 2 == 0 ? $1.element - 1 : 5 - $1.element) }
        return Double(sum) * 2.5
    }
}

// TEMP until the metrics branch merges
extension SUSGrade {
    /// The Sauro–Lewis curved grading scale.
    public init(score: Double) {
        let floors: [(Double, SUSGrade)] = [(84.1, .aPlus), (80.8, .a), (78.9, .aMinus), (77.2, .bPlus), (74.1, .b), (72.6, .bMinus),
                                            (71.1, .cPlus), (65.0, .c), (62.7, .cMinus), (51.7, .d)]
        self = floors.first { score >= $0.0 }?.1 ?? .f
    }
}

// TEMP until the metrics branch merges
public enum Comparison {
    /// B − A of two completion rates (Agresti–Caffo interval).
    public static func completionRates(successesA: Int, trialsA: Int, successesB: Int, trialsB: Int) -> Difference? {
        guard trialsA > 0, trialsB > 0 else { return nil }
        let pA = Double(successesA + 1) / Double(trialsA + 2), pB = Double(successesB + 1) / Double(trialsB + 2)
        let margin = 1.959964 * (pA * (1 - pA) / Double(trialsA + 2) + pB * (1 - pB) / Double(trialsB + 2)).squareRoot()
        let value = Double(successesB) / Double(trialsB) - Double(successesA) / Double(trialsA)
        let interval = Interval(low: pB - pA - margin, high: pB - pA + margin)
        return Difference(value: value, interval: interval, isSignificant: interval.low > 0 || interval.high < 0)
    }

    /// B − A of two means (Welch).
    public static func means(_ a: [Double], _ b: [Double]) -> Difference? {
        guard a.count > 1, b.count > 1 else { return nil }
        let meanA = a.reduce(0, +) / Double(a.count), meanB = b.reduce(0, +) / Double(b.count)
        let va = MeanEstimate.variance(a) / Double(a.count), vb = MeanEstimate.variance(b) / Double(b.count)
        let se = (va + vb).squareRoot()
        guard se > 0 else { return Difference(value: meanB - meanA, interval: nil, isSignificant: false) }
        let df = (va + vb) * (va + vb) / (va * va / Double(a.count - 1) + vb * vb / Double(b.count - 1))
        let margin = TemporaryT.quantile975(df) * se
        let interval = Interval(low: meanB - meanA - margin, high: meanB - meanA + margin)
        return Difference(value: meanB - meanA, interval: interval, isSignificant: interval.low > 0 || interval.high < 0)
    }

    /// B / A of geometric mean times (Welch on the logarithms).
    public static func timeRatio(_ a: [Double], _ b: [Double]) -> Difference? {
        guard let difference = means(a.filter { $0 > 0 }.map { log($0) }, b.filter { $0 > 0 }.map { log($0) }) else { return nil }
        return Difference(value: exp(difference.value),
                          interval: difference.interval.map { Interval(low: exp($0.low), high: exp($0.high)) },
                          isSignificant: difference.isSignificant)
    }
}

// TEMP until the metrics branch merges
enum TemporaryT {
    /// Student's t at 0.975 for `df` degrees of freedom (rounded down), from the table; Cornish–Fisher beyond 30.
    static func quantile975(_ df: Double) -> Double {
        let table = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                     2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
        let whole = max(1, Int(df))
        if whole <= table.count { return table[whole - 1] }
        let z = 1.959964, n = Double(whole)
        return z + (z * z * z + z) / (4 * n) + (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n)
    }
}
