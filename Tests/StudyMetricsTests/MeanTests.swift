import Testing
import StudyMetrics

struct TimeOnTaskTests {
    /// Sauro's task-time calculator (MeasuringU, "Graph and calculator for confidence intervals for task times"):
    /// 55, 65, 75, 62, 45, 135 s → "68 seconds, 95 % CI (46, 101)".
    @Test func sauroPublishedExample() throws {
        let estimate = try #require(TimeOnTask.geometricMean([55, 65, 75, 62, 45, 135]))
        #expect(estimate.value.rounded() == 68)
        #expect(estimate.interval?.low.rounded() == 46)
        #expect(estimate.interval?.high.rounded() == 101)
        #expect(estimate.n == 6)
    }

    /// 10, 20, 40: logs ln 20 − ln 2, ln 20, ln 20 + ln 2, so the geometric mean is 20 and s = ln 2.
    /// Margin on the log scale t(0.975; 2)·ln 2/√3 = 4.302653·0.693147/1.732051 = 1.721873, so
    /// 20·e^∓1.721873 = 3.574621…111.899967.
    @Test func handComputedExample() throws {
        let estimate = try #require(TimeOnTask.geometricMean([10, 20, 40]))
        #expect(isClose(estimate.value, 20, within: 1e-12))
        #expect(isClose(estimate.interval?.low, 3.574621, within: 1e-6))
        #expect(isClose(estimate.interval?.high, 111.899967, within: 1e-6))
    }

    @Test func edgeCases() throws {
        #expect(TimeOnTask.geometricMean([]) == nil)
        #expect(TimeOnTask.geometricMean([12, 0]) == nil)
        #expect(TimeOnTask.geometricMean([12, -3]) == nil)
        #expect(TimeOnTask.geometricMean([12, .infinity]) == nil)
        #expect(TimeOnTask.geometricMean([12, 15], confidence: 1.5) == nil)
        let one = try #require(TimeOnTask.geometricMean([30]))
        #expect(isClose(one.value, 30, within: 1e-12) && one.interval == nil && one.n == 1)
        // No variance: the interval collapses to the value, without NaN.
        let same = try #require(TimeOnTask.geometricMean([12, 12, 12]))
        #expect(isClose(same.value, 12, within: 1e-12))
        #expect(isClose(same.interval?.low, 12, within: 1e-12) && isClose(same.interval?.high, 12, within: 1e-12))
    }
}

struct MeanEstimateTests {
    /// SUS scores 70, 80, 90: mean 80, s = 10, margin t(0.975; 2)·10/√3 = 4.302653·5.773503 = 24.841377
    /// → 55.158623…104.841377; SUS bounds clip the top to 100.
    @Test func handComputedExampleClippedToBounds() throws {
        let open = try #require(MeanEstimate.tInterval([70, 80, 90]))
        #expect(open.value == 80 && open.n == 3)
        #expect(isClose(open.interval?.low, 55.158623, within: 1e-6))
        #expect(isClose(open.interval?.high, 104.841377, within: 1e-6))
        let clipped = try #require(MeanEstimate.tInterval([70, 80, 90], bounds: 0...100))
        #expect(clipped.value == 80)
        #expect(clipped.interval?.low == open.interval?.low && clipped.interval?.high == 100)
    }

    /// SEQ answers 5, 6, 6, 7, 7, 7 at 90 %: mean 6.333333, s² = (1.777778 + 2·0.111111 + 3·0.444444)/5 = 0.666667,
    /// s = 0.816497, margin t(0.95; 5)·s/√6 = 2.015048·0.333333 = 0.671683 → 5.661650…7.005016, clipped to 7.
    @Test func otherConfidenceLevelAndSEQBounds() throws {
        let estimate = try #require(MeanEstimate.tInterval([5, 6, 6, 7, 7, 7], confidence: 0.90, bounds: 1...7))
        #expect(isClose(estimate.value, 6.333333, within: 1e-6))
        #expect(isClose(estimate.interval?.low, 5.661650, within: 1e-6))
        #expect(estimate.interval?.high == 7)
    }

    @Test func edgeCases() throws {
        #expect(MeanEstimate.tInterval([]) == nil)
        #expect(MeanEstimate.tInterval([1, .nan]) == nil)
        #expect(MeanEstimate.tInterval([1, 2], confidence: -0.5) == nil)
        #expect(MeanEstimate.tInterval([72.5]) == Estimate(value: 72.5, interval: nil, n: 1))
        #expect(MeanEstimate.tInterval([85, 85, 85, 85]) == Estimate(value: 85, interval: Interval(low: 85, high: 85), n: 4))
    }
}
