import Testing
import StudyMetrics

struct CompletionRateTests {
    /// The examples Sauro and Lewis print, to the whole percent.
    @Test(arguments: [
        // Sauro & Lewis 2016, ch. 3: 9 of 10 → 57 %–100 %.
        (9, 10, 57.0, 100.0),
        // Lewis & Sauro, "A new formula for quantitative UX decision making", UX Magazine 850 (2012): 7 of 10 → 39 %–90 %,
        // and its failures, 3 of 10 → 10 %–61 %.
        (7, 10, 39, 90),
        (3, 10, 10, 61),
        // Tullis & Albert, "Measuring the User Experience" (p. 69, worked with z = 1.96): 4 of 5 → 36 %–98 %.
        (4, 5, 36, 98),
    ])
    func publishedExamples(successes: Int, trials: Int, low: Double, high: Double) throws {
        let estimate = try #require(CompletionRate.adjustedWald(successes: successes, trials: trials))
        #expect(estimate.value == Double(successes) / Double(trials))
        #expect(estimate.n == trials)
        #expect(roundsTo(estimate.interval?.low, percent: low), "\(estimate)")
        #expect(roundsTo(estimate.interval?.high, percent: high), "\(estimate)")
    }

    /// Tullis's worked example to four decimals: p_adj = (4 + 1.9208)/(5 + 3.8416) = 0.6696, margin 0.3100,
    /// 0.3596–0.9796 (his z is 1.96, ours 1.959964: the fourth decimal may differ by one).
    @Test func tullisWorkedExample() throws {
        let interval = try #require(CompletionRate.adjustedWald(successes: 4, trials: 5)?.interval)
        #expect(isClose(interval.low, 0.3596, within: 0.0001))
        #expect(isClose(interval.high, 0.9796, within: 0.0001))
    }

    /// 10 of 10: z² = 3.841459, p_adj = (10 + 1.920729)/13.841459 = 0.861234,
    /// margin = 1.959964·√(0.861234·0.138766/13.841459) = 0.182121 → 0.679113…1.043355, clipped to 1.
    @Test func allSucceededClipsAtOne() throws {
        let estimate = try #require(CompletionRate.adjustedWald(successes: 10, trials: 10))
        #expect(estimate.value == 1)
        #expect(isClose(estimate.interval?.low, 0.679113, within: 1e-6))
        #expect(estimate.interval?.high == 1)
    }

    /// 0 of 5: p_adj = 1.920729/8.841459 = 0.217241, margin = 1.959964·√(0.217241·0.782759/8.841459) = 0.271814
    /// → −0.054572 (clipped to 0)…0.489055; the mirror image of 5 of 5.
    @Test func noneSucceededClipsAtZero() throws {
        let none = try #require(CompletionRate.adjustedWald(successes: 0, trials: 5)?.interval)
        let all = try #require(CompletionRate.adjustedWald(successes: 5, trials: 5)?.interval)
        #expect(none.low == 0 && all.high == 1)
        #expect(isClose(none.high, 1 - all.low, within: 1e-12))
        #expect(isClose(none.high, 0.489055, within: 1e-6))
    }

    /// 90 %: z = 1.644854, z² = 2.705543, p_adj = (7 + 1.352772)/12.705543 = 0.657412,
    /// margin = 1.644854·√(0.657412·0.342588/12.705543) = 0.218996 → 0.438416…0.876407.
    @Test func otherConfidenceLevel() throws {
        let interval = try #require(CompletionRate.adjustedWald(successes: 7, trials: 10, confidence: 0.90)?.interval)
        #expect(isClose(interval.low, 0.438416, within: 1e-6))
        #expect(isClose(interval.high, 0.876407, within: 1e-6))
    }

    @Test func invalidCountsHaveNoEstimate() {
        #expect(CompletionRate.adjustedWald(successes: 0, trials: 0) == nil)
        #expect(CompletionRate.adjustedWald(successes: 6, trials: 5) == nil)
        #expect(CompletionRate.adjustedWald(successes: -1, trials: 5) == nil)
        #expect(CompletionRate.adjustedWald(successes: 3, trials: 5, confidence: 1) == nil)
        #expect(CompletionRate.adjustedWald(successes: 3, trials: 5, confidence: 0) == nil)
    }
}
