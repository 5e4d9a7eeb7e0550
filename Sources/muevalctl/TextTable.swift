/// Aligned columns for muevalctl's human output.
struct TextTable {
    private let headers: [String]
    private var rows: [[String]] = []
    /// Column widths kept from an earlier page of the same table (a streamed table); nil: fit these rows.
    private let widths: [Int]?

    init(_ headers: [String], widths: [Int]? = nil) {
        self.headers = headers
        self.widths = widths
    }

    mutating func add(_ row: [String]) {
        rows.append(row)
    }

    /// The widths this table's columns get: the given ones, else the widest cell of each column.
    var columnWidths: [Int] {
        widths ?? headers.indices.map { column in ([headers] + rows).map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
    }

    /// The header line (unless `header` is false) and the rows; a cell wider than its column pushes only its own row.
    func render(header: Bool = true) -> String {
        let widths = columnWidths
        let lines = (header ? [headers] : []) + rows
        return lines.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: max(widths[column], cell.count), withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + (lines.isEmpty ? "" : "\n")
    }
}
