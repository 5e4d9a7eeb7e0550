import Testing
import StudyMetrics

struct ComparisonTests {
    /// 4 of 10 (A) against 9 of 10 (B). Agresti–Caffo: p̃_A = 5/12 = 0.416667, p̃_B = 10/12 = 0.833333;
    /// SE = √(0.416667·0.583333/12 + 0.833333·0.166667/12) = √(0.020255 + 0.011574) = 0.178406;
    /// 0.416667 ± 1.959964·0.178406 = 0.416667 ± 0.349669 → 0.066997…0.766336. Excludes 0: significant.
    @Test func completionRatesHandComputed() throws {
        let difference = try #require(Comparison.completionRates(successesA: 4, trialsA: 10, successesB: 9, trialsB: 10))
        #expect(isClose(difference.value, 0.5, within: 1e-12))
        #expect(isClose(difference.interval?.low, 0.066997, within: 1e-6))
        #expect(isClose(difference.interval?.high, 0.766336, within: 1e-6))
        #expect(difference.isSignificant)
    }

    /// 7 of 10 against 9 of 10: the interval includes 0 (a 20-point gain is within the noise of ten participants).
    @Test func completionRatesNotSignificant() throws {
        let difference = try #require(Comparison.completionRates(successesA: 7, trialsA: 10, successesB: 9, trialsB: 10))
        #expect(isClose(difference.value, 0.2, within: 1e-12))
        let interval = try #require(difference.interval)
        #expect(interval.low < 0 && interval.high > 0)
        #expect(!difference.isSignificant)
    }

    /// 0 of 5 against 5 of 5: p̃ = 1/7 and 6/7, SE = √(2·(1/7)(6/7)/7) = 0.187044, 0.714286 ± 0.366599
    /// → 0.347686…1.080885, clipped to 1; and the reverse is its mirror image.
    @Test func completionRatesAtTheExtremes() throws {
        let up = try #require(Comparison.completionRates(successesA: 0, trialsA: 5, successesB: 5, trialsB: 5))
        #expect(up.value == 1)
        #expect(isClose(up.interval?.low, 0.347686, within: 1e-6))
        #expect(up.interval?.high == 1)
        let down = try #require(Comparison.completionRates(successesA: 5, trialsA: 5, successesB: 0, trialsB: 5))
        #expect(down.value == -1 && down.interval?.low == -1)
        #expect(isClose(down.interval?.high, -0.347686, within: 1e-6))
        #expect(up.isSignificant && down.isSignificant)
    }

    @Test func completionRatesNeedTrials() {
        #expect(Comparison.completionRates(successesA: 0, trialsA: 0, successesB: 3, trialsB: 5) == nil)
        #expect(Comparison.completionRates(successesA: 3, trialsA: 5, successesB: 0, trialsB: 0) == nil)
        #expect(Comparison.completionRates(successesA: 6, trialsA: 5, successesB: 3, trialsB: 5) == nil)
    }

    /// A = 1, 2, 3, 4 (mean 2.5, s² = 1.666667), B = 3, 5, 7 (mean 5, s² = 4). v_A = 0.416667, v_B = 1.333333;
    /// ν = 1.75²/(0.416667²/3 + 1.333333²/2) = 3.0625/0.946759 = 3.234719; t(0.975; 3.234719) = 3.055713;
    /// 2.5 ± 3.055713·√1.75 = 2.5 ± 4.042328 → −1.542328…6.542328 (SciPy's ttest_ind(equal_var=False) agrees).
    @Test func meansWelchHandComputed() throws {
        let difference = try #require(Comparison.means([1, 2, 3, 4], [3, 5, 7]))
        #expect(difference.value == 2.5)
        #expect(isClose(difference.interval?.low, -1.542328, within: 1e-6))
        #expect(isClose(difference.interval?.high, 6.542328, within: 1e-6))
        #expect(!difference.isSignificant)
    }

    @Test func meansClearlyApartAreSignificant() throws {
        let difference = try #require(Comparison.means([60, 62.5, 65, 57.5], [80, 85, 82.5, 87.5]))
        #expect(difference.value == 22.5)
        #expect(difference.isSignificant && (difference.interval?.low ?? 0) > 0)
    }

    /// With one group constant ν = n − 1 of the other, and the interval is that group's own t-interval shifted.
    @Test func meansWithZeroVariance() throws {
        let oneConstant = try #require(Comparison.means([5, 5, 5], [4, 6, 8]))
        let shifted = try #require(MeanEstimate.tInterval([-1, 1, 3])?.interval)
        #expect(isClose(oneConstant.interval?.low, shifted.low, within: 1e-12))
        #expect(isClose(oneConstant.interval?.high, shifted.high, within: 1e-12))
        // Both constant: nothing uncertain is left; the interval is the difference itself.
        let same = try #require(Comparison.means([5, 5], [5, 5]))
        #expect(same == Difference(value: 0, interval: Interval(low: 0, high: 0), isSignificant: false))
        let apart = try #require(Comparison.means([5, 5], [6, 6]))
        #expect(apart == Difference(value: 1, interval: Interval(low: 1, high: 1), isSignificant: true))
    }

    @Test func meansNeedTwoValuesEach() {
        #expect(Comparison.means([1], [2, 3]) == nil)
        #expect(Comparison.means([1, 2], []) == nil)
        #expect(Comparison.means([1, 2], [3, .nan]) == nil)
    }

    /// A = 10, 20, 40 s, B = 5, 10, 20, 10 s: geometric means 20 and 10, ratio 0.5. On the logs
    /// s_A² = (ln 2)² = 0.480453, s_B² = 2(ln 2)²/3 = 0.320302; v_A = 0.160151, v_B = 0.080076;
    /// ν = 0.240227²/(0.160151²/2 + 0.080076²/3) = 3.857143; t(0.975; 3.857143) = 2.817474;
    /// ln 0.5 ± 2.817474·√0.240227 = −0.693147 ± 1.380926 → e^… = 0.125673…1.989292.
    @Test func timeRatioHandComputed() throws {
        let ratio = try #require(Comparison.timeRatio([10, 20, 40], [5, 10, 20, 10]))
        #expect(isClose(ratio.value, 0.5, within: 1e-12))
        #expect(isClose(ratio.interval?.low, 0.125673, within: 1e-6))
        #expect(isClose(ratio.interval?.high, 1.989292, within: 1e-6))
        #expect(!ratio.isSignificant)
    }

    @Test func timeRatioHalvedTimesAreSignificant() throws {
        let ratio = try #require(Comparison.timeRatio([100, 110, 120, 105], [50, 55, 60, 52.5]))
        #expect(isClose(ratio.value, 0.5, within: 1e-12))
        #expect(ratio.isSignificant && (ratio.interval?.high ?? 1) < 1)
        // Equal times: ratio 1, interval 1…1, no change.
        let same = try #require(Comparison.timeRatio([30, 30], [30, 30]))
        #expect(isClose(same.value, 1, within: 1e-12) && !same.isSignificant)
    }

    @Test func timeRatioNeedsPositiveTimes() {
        #expect(Comparison.timeRatio([10, 0], [5, 10]) == nil)
        #expect(Comparison.timeRatio([10, 20], [5]) == nil)
        #expect(Comparison.timeRatio([10, 20], [-5, 10]) == nil)
    }
}
