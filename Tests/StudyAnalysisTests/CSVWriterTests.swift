@testable import StudyAnalysis
import Testing

/// Cells a spreadsheet would run as a formula are neutralised (OWASP, "CSV Injection"); numbers stay numbers.
@Suite struct CSVWriterTests {
    @Test func aCellThatStartsAFormulaIsQuotedTextWithAnApostrophe() {
        #expect(CSVWriter.field("=HYPERLINK(\"http://evil.example\",\"click\")") == "\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"click\"\")\"")
        #expect(CSVWriter.field("+1+cmd|' /C calc'!A0") == "\"'+1+cmd|' /C calc'!A0\"")
        #expect(CSVWriter.field("-2+3+cmd|' /C calc'!A0") == "\"'-2+3+cmd|' /C calc'!A0\"")
        #expect(CSVWriter.field("@SUM(1+1)") == "\"'@SUM(1+1)\"")
        #expect(CSVWriter.field("\t=1+1") == "\"'\t=1+1\"")
        #expect(CSVWriter.field("\r=1+1") == "\"'\r=1+1\"")
        #expect(CSVWriter.field("-") == "\"'-\"")
        #expect(CSVWriter.field("-1-1") == "\"'-1-1\"")
        #expect(CSVWriter.field("-1e5x") == "\"'-1e5x\"")
    }

    @Test func numbersAndOrdinaryTextAreWrittenAsTheyAre() {
        for value in [-3.0, -0.25, -1234567.5, -1e20, 1e20, 0, 42] {
            let text = ExportNumber.text(value)
            #expect(CSVWriter.field(text) == text, "\(value) as \(text)")
        }
        for text in ["-3", "-0.25", "1e+20", "-1E-5", "7", "P01", "Sign up", "a=b", "x-y", "SUM(1)", ""] {
            #expect(CSVWriter.field(text) == text)
        }
        #expect(CSVWriter.field("a,b") == "\"a,b\"")
        #expect(CSVWriter.field("say \"hi\"") == "\"say \"\"hi\"\"\"")
    }

    @Test func aRowKeepsNumbersAndNeutralisesTheRest() {
        var writer = CSVWriter()
        writer.row(["=1+1", ExportNumber.text(-2.5), "@me", "P01"])
        #expect(writer.text == "\"'=1+1\",-2.5,\"'@me\",P01\r\n")
    }
}
