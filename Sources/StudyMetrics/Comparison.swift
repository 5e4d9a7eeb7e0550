internal import Foundation

/// Iteration B against iteration A (between-subjects: different participants in each).
public enum Comparison {
    /// Difference of completion rates B − A with the adjusted-Wald interval for a difference (Agresti–Caffo: add one
    /// success and one failure to each group). nil if a group is empty, a count is outside 0…trials, or `confidence`
    /// is not strictly between 0 and 1.
    ///
    /// value = x_B/n_B − x_A/n_A. With p̃ = (x + 1)/(n + 2) per group: interval
    /// (p̃_B − p̃_A) ± z·√(p̃_A(1 − p̃_A)/(n_A + 2) + p̃_B(1 − p̃_B)/(n_B + 2)), clipped to [−1, 1].
    /// Agresti & Caffo (2000), "Simple and effective confidence intervals for proportions and differences of
    /// proportions result from adding two successes and two failures", The American Statistician 54, 280–288;
    /// Sauro & Lewis (2016), ch. 5, use the same adjustment with z²/4 successes and z²/2 trials (≈ 1 and 2 at 95 %).
    public static func completionRates(successesA: Int, trialsA: Int, successesB: Int, trialsB: Int, confidence: Double = 0.95) -> Difference? {
        guard trialsA > 0, trialsB > 0, (0...trialsA).contains(successesA), (0...trialsB).contains(successesB),
              isConfidence(confidence) else { return nil }
        let z = Normal.quantile(upperTail(confidence))
        let adjustedA = Double(successesA + 1) / Double(trialsA + 2)
        let adjustedB = Double(successesB + 1) / Double(trialsB + 2)
        let standardError = (adjustedA * (1 - adjustedA) / Double(trialsA + 2)
                             + adjustedB * (1 - adjustedB) / Double(trialsB + 2)).squareRoot()
        let center = adjustedB - adjustedA
        let interval = Interval(low: center - z * standardError, high: center + z * standardError).clipped(to: -1...1)
        let value = Double(successesB) / Double(trialsB) - Double(successesA) / Double(trialsA)
        return Difference(value: value, interval: interval, noChange: 0)
    }

    /// Difference of means B − A with Welch's t-interval (SUS, SEQ). nil unless each group has ≥ 2 finite values
    /// and `confidence` is strictly between 0 and 1.
    ///
    /// (x̄_B − x̄_A) ± t(1 − α/2, ν)·√(s_A²/n_A + s_B²/n_B), ν by Welch–Satterthwaite (see `welchInterval`).
    /// Sauro & Lewis, "Quantifying the User Experience", 2nd ed. (2016), ch. 5, "Between-subjects comparison
    /// (two-sample t-test)"; Welch (1947), Biometrika 34, 28–35.
    public static func means(_ a: [Double], _ b: [Double], confidence: Double = 0.95) -> Difference? {
        guard isConfidence(confidence), let a = SampleSummary(a), let b = SampleSummary(b),
              let interval = welchInterval(a, b, confidence: confidence) else { return nil }
        return Difference(value: b.mean - a.mean, interval: interval, noChange: 0)
    }

    /// Ratio of geometric means B / A (time on task), from Welch's interval on the logs, exponentiated. nil unless
    /// each group has ≥ 2 values, all positive and finite, and `confidence` is strictly between 0 and 1.
    ///
    /// value = exp(ȳ_B − ȳ_A) with y = ln x; interval exp of Welch's interval of ȳ_B − ȳ_A. Below 1: B is faster.
    /// Sauro & Lewis (2016), ch. 5: compare task times on the log scale.
    public static func timeRatio(_ a: [Double], _ b: [Double], confidence: Double = 0.95) -> Difference? {
        guard isConfidence(confidence), let a = SampleSummary(logsOf: a), let b = SampleSummary(logsOf: b),
              let logInterval = welchInterval(a, b, confidence: confidence) else { return nil }
        let interval = Interval(low: exp(logInterval.low), high: exp(logInterval.high))
        return Difference(value: exp(b.mean - a.mean), interval: interval, noChange: 1)
    }

    /// Welch's interval for mean_B − mean_A; nil unless both groups have n ≥ 2.
    /// ν = (v_A + v_B)² / (v_A²/(n_A − 1) + v_B²/(n_B − 1)) with v = s²/n. When both variances are 0 there is no
    /// uncertainty left and the interval is the difference itself.
    static func welchInterval(_ a: SampleSummary, _ b: SampleSummary, confidence: Double) -> Interval? {
        guard a.n >= 2, b.n >= 2 else { return nil }
        let difference = b.mean - a.mean
        let va = a.variance / Double(a.n), vb = b.variance / Double(b.n)
        guard va + vb > 0 else { return Interval(low: difference, high: difference) }
        let nu = (va + vb) * (va + vb) / (va * va / Double(a.n - 1) + vb * vb / Double(b.n - 1))
        let margin = StudentT.quantile(upperTail(confidence), degreesOfFreedom: nu) * (va + vb).squareRoot()
        return Interval(low: difference - margin, high: difference + margin)
    }
}
