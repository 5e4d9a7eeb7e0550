import Foundation
import QRCode
import Testing

/// The QR code's drawings against symbols whose size the standard fixes: version 1 is 21 modules a
/// side, each further version 4 more; medium correction holds 14 bytes in version 1 and 62 in version 4.
struct QRCodeTests {
    @Test func aShortTextIsAVersionOneSymbolAndItsSVGDrawsEveryDarkModule() throws {
        let code = try QRCode(encoding: "HELLO WORLD")
        #expect(code.size == 21)
        let svg = code.svg()
        // 21 modules and a quiet zone of 4 on each side.
        #expect(svg.contains(#"viewBox="0 0 29 29""#))
        #expect(svg.components(separatedBy: "h1v1h-1z").count - 1 == code.darkModules)
        // The finder pattern's corner: dark at the top left, inside the quiet zone.
        #expect(code.isDark(row: 0, column: 0) && code.isDark(row: 6, column: 6) && !code.isDark(row: 7, column: 7))
        #expect(svg.contains("M4 4h1v1h-1z"))
    }

    @Test func anEnrolmentLinkNeedsVersionFour() throws {
        let link = "https://lab.example.org:28080/enrol/k7Qm2xZp9aWb4Rt6"
        #expect(link.utf8.count > 42 && link.utf8.count <= 62)
        let code = try QRCode(encoding: link)
        #expect(code.size == 33)
        #expect(code.svg().contains(#"viewBox="0 0 41 41""#))
    }

    @Test func theTerminalDrawingIsTwoRowsALineWithItsQuietZone() throws {
        let code = try QRCode(encoding: "HELLO WORLD")
        let lines = code.terminal().split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        // 21 + 2 × 2 = 25 columns; 25 rows in 13 lines, the last one half.
        #expect(lines.count == 13)
        #expect(lines.allSatisfy { $0.count == 25 })
        // Light on dark by default: the quiet zone is drawn, the top-left finder corner is not.
        #expect(lines[0].allSatisfy { $0 == "█" })
        // Rows 2 and 3 at column 3: the finder's dark top edge, then its light ring.
        #expect(lines[1].dropFirst(2).first == " " && lines[1].dropFirst(3).first == "▄")
        let inverted = code.terminal(margin: 0, darkOnLight: true).split(separator: "\n")
        #expect(inverted.count == 11 && inverted[0].first == "█")
    }

    @Test func nothingOrTooMuchIsRefused() {
        #expect(throws: QRCodeError.empty) { try QRCode(encoding: "") }
        #expect(throws: QRCodeError.tooLong(bytes: 3000)) { try QRCode(encoding: String(repeating: "a", count: 3000)) }
    }
}
