/// Aligned columns for muevalctl's human output.
public struct TextTable {
    private let headers: [String]
    private var rows: [[String]] = []

    public init(_ headers: [String]) {
        self.headers = headers
    }

    public mutating func add(_ row: [String]) {
        rows.append(row)
    }

    public func render() -> String {
        let all = [headers] + rows
        let widths = headers.indices.map { column in all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
