import Testing
import StudyMetrics

struct SUSTests {
    @Test func neutralAnswersScoreFifty() {
        // Every item contributes 2: 10·2·2.5.
        #expect(SUS.score(Array(repeating: 3, count: 10)) == 50)
    }

    /// Odd items 4, 4, 5, 5, 4 contribute answer − 1 = 3, 3, 4, 4, 3; even items 2, 1, 2, 1, 2 contribute
    /// 5 − answer = 3, 4, 3, 4, 3; ((3+3+4+4+3) + (3+4+3+4+3))·2.5 = 34·2.5 = 85.
    @Test func brookeScoring() {
        #expect(SUS.score([4, 2, 4, 1, 5, 2, 5, 1, 4, 2]) == 85)
    }

    @Test func extremes() {
        #expect(SUS.score([5, 1, 5, 1, 5, 1, 5, 1, 5, 1]) == 100)
        #expect(SUS.score([1, 5, 1, 5, 1, 5, 1, 5, 1, 5]) == 0)
        // Agreeing with everything: the odd items give 4 each, the even ones 0.
        #expect(SUS.score(Array(repeating: 5, count: 10)) == 50)
    }

    @Test(arguments: [
        [Int](),
        [3, 3, 3, 3, 3, 3, 3, 3, 3],
        [3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3],
        [3, 3, 3, 3, 0, 3, 3, 3, 3, 3],
        [3, 3, 3, 3, 3, 3, 3, 3, 3, 6],
        [-1, 3, 3, 3, 3, 3, 3, 3, 3, 3],
    ])
    func invalidAnswersHaveNoScore(items: [Int]) {
        #expect(SUS.score(items) == nil)
    }
}

struct SUSGradeTests {
    @Test(arguments: [
        (68.0, SUSGrade.c),       // the database mean is a C
        (72.6, .bMinus), (72.5, .cPlus), (74.0, .bMinus), (74.1, .b),
        (84.1, .aPlus), (84.0, .a), (100, .aPlus), (80.8, .a), (80.7, .aMinus),
        (51.6, .f), (51.7, .d), (62.7, .cMinus), (65.0, .c), (0, .f),
        // Between the table's one-decimal limits: rounded to one decimal first.
        (84.04, .a), (84.06, .aPlus), (51.64, .f), (51.66, .d),
        // Outside 0…100.
        (-3, .f), (104, .aPlus),
    ])
    func grades(score: Double, grade: SUSGrade) {
        #expect(SUSGrade(score: score) == grade, "\(score)")
    }

    /// The ranges tile 0…100 in 0.1 steps, best first, and each range's limits get its own grade.
    @Test func rangesAreContiguous() {
        let grades = SUSGrade.allCases
        #expect(grades.first?.range.upperBound == 100 && grades.last?.range.lowerBound == 0)
        for (better, worse) in zip(grades, grades.dropFirst()) {
            #expect(isClose(better.range.lowerBound - worse.range.upperBound, 0.1, within: 1e-9), "\(better) \(worse)")
        }
        for grade in grades {
            #expect(SUSGrade(score: grade.range.lowerBound) == grade && SUSGrade(score: grade.range.upperBound) == grade)
        }
    }

    @Test func rawValuesArePlainASCII() {
        #expect(SUSGrade.allCases.map(\.rawValue) == ["A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D", "F"])
        #expect(SUSGrade.aPlus.percentileRange == "96-100" && SUSGrade.c.percentileRange == "41-59")
        #expect(SUSGrade.f.percentileRange == "0-14")
    }
}
