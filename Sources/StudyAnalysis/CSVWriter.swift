/// Rows of an RFC 4180 file: a field with a comma, a double quote or a line break is quoted, its quotes
/// doubled; every line ends in CRLF.
///
/// A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (or a tab or carriage return before
/// one) as a formula, and participant codes, task names, views and quotes come from users and devices.
/// Such a cell is neutralised as OWASP's "CSV Injection" says: a `'` before it, the whole quoted, so
/// the spreadsheet shows it as text. A cell that is a plain number (`-3`, `-0.25`, `1e+20`, as
/// `ExportNumber` writes them) can run nothing and stays a number.
struct CSVWriter {
    private(set) var text = ""

    mutating func row(_ fields: [String]) {
        text += fields.map(Self.field).joined(separator: ",")
        text += "\r\n"
    }

    static func field(_ value: String) -> String {
        let formula = startsFormula(value)
        guard formula || value.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return value }
        let cell = formula ? "'" + value : value
        return "\"" + cell.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    /// Whether a spreadsheet would read the cell as a formula.
    static func startsFormula(_ value: String) -> Bool {
        guard let first = value.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return false }
        return !isPlainNumber(value)
    }

    /// An optional `-`, digits with at most one `.`, and an optional exponent: a number, nothing else.
    static func isPlainNumber(_ value: String) -> Bool {
        var bytes = value.utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let mantissa = bytes.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
        let digits = mantissa.filter { $0 != UInt8(ascii: ".") }
        guard !digits.isEmpty, mantissa.count - digits.count <= 1, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return false }
        var exponent = bytes.dropFirst(mantissa.count)
        guard !exponent.isEmpty else { return true }
        exponent = exponent.dropFirst()
        if exponent.first == UInt8(ascii: "+") || exponent.first == UInt8(ascii: "-") { exponent = exponent.dropFirst() }
        return !exponent.isEmpty && exponent.allSatisfy { (0x30...0x39).contains($0) }
    }
}

/// Numbers as the export and reasons write them: `.` for decimals, no exponent for everyday values, whole
/// numbers without `.0`, at most six decimals; empty for none.
enum ExportNumber {
    static func text(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "" }
        let rounded = (value * 1_000_000).rounded() / 1_000_000
        if abs(rounded) < 1e15, let whole = Int64(exactly: rounded) { return String(whole) }
        return "\(rounded)"
    }
}
