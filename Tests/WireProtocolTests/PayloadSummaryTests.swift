import Foundation
import Testing
import WireProtocol

/// How summaries and the report write numbers: as C's printf (Foundation's `String(format:)` before; the same text).
struct PayloadSummaryTests {
    @Test(arguments: [0, -0.0001, 12.5, 123.4565, 1_700_000_000.123, -1e-7, 1e59, 1e300, -1.7976931348623157e308])
    func threeDecimalsAreAsFoundationWroteThemHoweverLong(value: Double) {
        #expect(PrintfNumber.format("%.3f", value) == String(format: "%.3f", value))
    }

    @Test(arguments: [0, -0.0, -0.0001, 0.0005, 0.0625, 0.0015, 2.5e-4, 1.0005, 12.5, 123.4565, 1_700_000_000.123, 4.4999e12,
                      4.5e12, -1e-7, 1e59, 1e300, .nan, .infinity, -.infinity, 0.3 - 0.1])
    func thousandthsAreWhatPrintfWrites(value: Double) {
        #expect(PrintfNumber.thousandths(value) == PrintfNumber.format("%.3f", value))
    }

    /// Halves exactly (x.xxx5 that a double holds) round to even as printf does; the others to the nearest.
    @Test func thousandthsAgreeWithPrintfOnHalvesAndTwoHundredThousandSpreadValues() {
        var generator = SystemRandomNumberGenerator()
        var values = (0..<4_096).map { Double($0) / 2_048 + 7 }
        values += (0..<200_000).map { _ in
            Double.random(in: -1..<1, using: &generator) * pow(10, Double(Int.random(in: -6...12, using: &generator)))
        }
        let differing = values.filter { PrintfNumber.thousandths($0) != PrintfNumber.format("%.3f", $0) }
        #expect(differing.isEmpty, "first: \(differing.prefix(5))")
    }

    @Test(arguments: [0.1, 1.5, -155.25, 1e-5, 0.000123456789, 123_456.7, 1_234_567.8, 999_999.5, 1e15, 1e300, -1e300,
                      .leastNonzeroMagnitude, .nan, .infinity, -.infinity, 0.3 - 0.1])
    func aNumberWithAFractionReadsAsSixSignificantDigits(value: Double) {
        #expect(PayloadSummary.short(value) == String(format: "%.6g", value))
    }

    @Test func wholeNumbersHaveNoFraction() {
        #expect(PayloadSummary.short(155) == "155")
        #expect(PayloadSummary.short(-3) == "-3")
        #expect(PayloadSummary.short(0) == "0")
        #expect(PayloadSummary.line(eventClass: "UserInputEvent", payload: .dict(["type": .string("touch"), "phase": .string("began"),
                                                                               "x": .real(155.25), "y": .real(267)]))
                .hasPrefix("touch began 155.25,267"))
    }

    @Test func aPageRecordReadsAsItsKindAndSizeNotItsJSON() {
        let dom = String(repeating: "x", count: 2048)
        #expect(PayloadSummary.line(eventClass: "DOMSnapshot", payload: .dict(["class": .string("DOMSnapshot"), "dom": .string(dom)]))
                == "page snapshot 2.0 KB")
        #expect(PayloadSummary.line(eventClass: "DOMFocus", payload: .dict(["invalid": .string("not a record")]))
                == "page record left out: not a record")
    }
}
