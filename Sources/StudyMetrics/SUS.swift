/// The System Usability Scale.
public enum SUS {
    /// Brooke's score 0…100 from the ten item answers 1…5 in questionnaire order; nil unless exactly 10 answers each 1…5.
    ///
    /// Odd items (positively worded) contribute answer − 1, even items (negatively worded) 5 − answer; the sum (0…40)
    /// times 2.5. J. Brooke, "SUS: a 'quick and dirty' usability scale", in Usability Evaluation in Industry (1996).
    public static func score(_ items: [Int]) -> Double? {
        guard items.count == 10, items.allSatisfy({ (1...5).contains($0) }) else { return nil }
        let sum = items.enumerated().reduce(0) { sum, item in
            sum + (item.offset.isMultiple(of: 2) ? item.element - 1 : 5 - item.element)
        }
        return Double(sum) * 2.5
    }
}

/// Sauro–Lewis curved grading scale for SUS (Sauro & Lewis 2016, Table 8.5), best first: A+ 84.1–100, A 80.8–84.0,
/// A− 78.9–80.7, B+ 77.2–78.8, B 74.1–77.1, B− 72.6–74.0, C+ 71.1–72.5, C 65.0–71.0, C− 62.7–64.9, D 51.7–62.6,
/// F 0–51.6. The mean of their database, 68, is a C. Raw values are plain ASCII ("A-").
public enum SUSGrade: String, Sendable, Codable, CaseIterable {
    case aPlus = "A+", a = "A", aMinus = "A-"
    case bPlus = "B+", b = "B", bMinus = "B-"
    case cPlus = "C+", c = "C", cMinus = "C-"
    case d = "D", f = "F"

    /// The grade of a SUS score (a mean, usually). The score is rounded to one decimal first, the table's resolution,
    /// so that every score falls in one range (84.04 → 84.0 → A; 84.06 → 84.1 → A+). Scores below 0 (and NaN) are F,
    /// above 100 A+.
    public init(score: Double) {
        let rounded = (score * 10).rounded() / 10
        self = Self.allCases.first { rounded >= $0.range.lowerBound } ?? .f
    }

    /// The scores of the grade, as published (one decimal).
    public var range: ClosedRange<Double> {
        switch self {
        case .aPlus: 84.1...100
        case .a: 80.8...84.0
        case .aMinus: 78.9...80.7
        case .bPlus: 77.2...78.8
        case .b: 74.1...77.1
        case .bMinus: 72.6...74.0
        case .cPlus: 71.1...72.5
        case .c: 65.0...71.0
        case .cMinus: 62.7...64.9
        case .d: 51.7...62.6
        case .f: 0...51.6
        }
    }

    /// The percentile ranks of the grade's scores in Sauro and Lewis's database (same table), e.g. "96-100".
    public var percentileRange: String? {
        switch self {
        case .aPlus: "96-100"
        case .a: "90-95"
        case .aMinus: "85-89"
        case .bPlus: "80-84"
        case .b: "70-79"
        case .bMinus: "65-69"
        case .cPlus: "60-64"
        case .c: "41-59"
        case .cMinus: "35-40"
        case .d: "15-34"
        case .f: "0-14"
        }
    }
}
