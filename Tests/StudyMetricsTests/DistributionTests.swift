import Testing
@testable import StudyMetrics

/// The quantiles against printed tables and, to more digits, against SciPy 1.17 (`scipy.stats.t.ppf`, `norm.ppf`),
/// an independent implementation (Boost's incomplete beta inverse).
struct DistributionTests {
    @Test(arguments: [
        // p, SciPy norm.ppf(p)
        (0.975, 1.959963984540054),
        (0.3, -0.5244005127080409),
        (0.02, -2.053748910631823),
        (1e-10, -6.361340902404056),
        (0.99999, 4.264890793923841),
    ])
    func normalQuantileMatchesSciPy(p: Double, expected: Double) {
        #expect(isClose(Normal.quantile(p), expected, within: 1e-12))
    }

    @Test func normalQuantileEdges() {
        #expect(Normal.quantile(0.5) == 0)
        #expect(Normal.quantile(0) == -.infinity && Normal.quantile(1) == .infinity)
        #expect(Normal.quantile(.nan).isNaN)
        #expect(isClose(Normal.quantile(0.025), -Normal.quantile(0.975), within: 1e-15))
    }

    /// Two-sided 95 % critical values as every t table prints them (3 decimals).
    @Test(arguments: [(1.0, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (30, 2.042), (120, 1.980), (1000, 1.962)])
    func tQuantileMatchesPrintedTable(df: Double, printed: Double) {
        #expect(isClose(StudentT.quantile(0.975, degreesOfFreedom: df), printed, within: 0.0005))
    }

    @Test(arguments: [
        // p, ν, SciPy t.ppf(p, ν): non-integer ν as Welch gives, both tails, far tails, huge ν.
        (0.975, 2.5, 3.5746548420036817),
        (0.995, 3.7, 4.8692522532278275),
        (0.025, 7.3, -2.3450667365477034),
        (0.975, 1.0, 12.706204736174694),
        (0.9995, 1.0, 636.6192487687897),
        (0.999999, 2.0, 707.1057205157672),
        (0.6, 1.0, 0.32491969623290634),
        (0.975, 1000.0, 1.9623390808264083),
        (0.975, 1e6, 1.959966356814107),
    ])
    func tQuantileMatchesSciPy(p: Double, df: Double, expected: Double) {
        let t = StudentT.quantile(p, degreesOfFreedom: df)
        #expect(abs(t - expected) <= 1e-9 * abs(expected), "t(\(p); \(df)) = \(t), SciPy \(expected)")
    }

    /// The quantile inverts the tail it was solved from, over the range of ν a study produces.
    @Test func tQuantileInvertsTheTail() {
        for df in [1.0, 1.3, 2, 2.5, 3, 5.7, 10, 24.9, 60, 250, 1500] {
            for p in [0.75, 0.9, 0.95, 0.975, 0.99, 0.995, 0.9995] {
                let t = StudentT.quantile(p, degreesOfFreedom: df)
                #expect(abs(StudentT.upperTail(t, nu: df) - (1 - p)) <= 1e-12 * (1 - p), "ν \(df), p \(p)")
                #expect(StudentT.quantile(1 - p, degreesOfFreedom: df) == -t)
            }
        }
    }

    @Test func tQuantileEdges() {
        #expect(StudentT.quantile(0.5, degreesOfFreedom: 3) == 0)
        #expect(StudentT.quantile(1, degreesOfFreedom: 3) == .infinity)
        #expect(StudentT.quantile(0, degreesOfFreedom: 3) == -.infinity)
        #expect(StudentT.quantile(0.975, degreesOfFreedom: 0).isNaN)
        #expect(StudentT.quantile(0.975, degreesOfFreedom: -2).isNaN)
        #expect(StudentT.quantile(.nan, degreesOfFreedom: 2).isNaN)
        #expect(StudentT.quantile(0.975, degreesOfFreedom: .infinity) == Normal.quantile(0.975))
    }
}
