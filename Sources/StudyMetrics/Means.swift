internal import Foundation

/// Task times, which are positively skewed: summarized on the log scale.
public enum TimeOnTask {
    /// Geometric mean of positive durations (seconds) with the t-interval computed on the logs and exponentiated
    /// (Sauro & Lewis ch. 3: best estimate of the median for small samples). interval nil for n < 2; nil for no values,
    /// for a value that is not positive and finite, or for a `confidence` not strictly between 0 and 1.
    ///
    /// With yᵢ = ln xᵢ: value = exp(ȳ), interval exp(ȳ ± t(1 − α/2, n − 1) · s_y/√n).
    /// Sauro & Lewis, "Quantifying the User Experience", 2nd ed. (2016), ch. 3, "Confidence interval for task-time
    /// data"; Sauro & Lewis (2010), "Average task times in usability tests: what to report?", CHI 2010.
    /// Example (MeasuringU task-time calculator): 55, 65, 75, 62, 45, 135 s → 68 s, 95 % interval 46–101 s.
    public static func geometricMean(_ seconds: [Double], confidence: Double = 0.95) -> Estimate? {
        guard isConfidence(confidence), let logs = SampleSummary(logsOf: seconds) else { return nil }
        let interval = logs.tInterval(confidence: confidence).map { Interval(low: exp($0.low), high: exp($0.high)) }
        return Estimate(value: exp(logs.mean), interval: interval, n: logs.n)
    }
}

/// Means of rating scales (SUS, SEQ), which are close enough to normal for the t-interval.
public enum MeanEstimate {
    /// Arithmetic mean with a t-interval; `bounds` clips the interval (SUS 0…100, SEQ 1…7). interval nil for n < 2;
    /// nil for no values, a non-finite value, or a `confidence` not strictly between 0 and 1.
    ///
    /// Interval x̄ ± t(1 − α/2, n − 1) · s/√n. Sauro & Lewis, "Quantifying the User Experience", 2nd ed. (2016), ch. 3,
    /// "Confidence interval for rating scales and other continuous data".
    public static func tInterval(_ values: [Double], confidence: Double = 0.95, bounds: ClosedRange<Double>? = nil) -> Estimate? {
        guard isConfidence(confidence), let summary = SampleSummary(values) else { return nil }
        var interval = summary.tInterval(confidence: confidence)
        if let bounds { interval = interval?.clipped(to: bounds) }
        return Estimate(value: summary.mean, interval: interval, n: summary.n)
    }
}
