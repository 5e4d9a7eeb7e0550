/// Rows of an RFC 4180 file: a field with a comma, a double quote or a line break is quoted, its quotes
/// doubled; every line ends in CRLF.
struct CSVWriter {
    private(set) var text = ""

    mutating func row(_ fields: [String]) {
        text += fields.map(Self.field).joined(separator: ",")
        text += "\r\n"
    }

    static func field(_ value: String) -> String {
        guard value.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return value }
        return "\"" + value.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}

/// Numbers as the export and reasons write them: `.` for decimals, no exponent for everyday values, whole
/// numbers without `.0`, at most six decimals; empty for none.
enum ExportNumber {
    static func text(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "" }
        let rounded = (value * 1_000_000).rounded() / 1_000_000
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int64(rounded)) }
        return "\(rounded)"
    }
}
