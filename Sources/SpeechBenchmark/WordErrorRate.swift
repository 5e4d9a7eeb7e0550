/// The word error rate of a transcript against what was said: word-level edit distance
/// (substitutions, insertions, deletions) over the number of words said, both sides normalised
/// (lower case, letters and apostrophes only: "Oh no, it closed." is `oh no it closed`).
struct WordErrorRate: CustomStringConvertible {
    var errors: Int
    var words: Int

    init(said: [String], heard: [String]) {
        let reference = said.flatMap(Self.words)
        let hypothesis = heard.flatMap(Self.words)
        // Two rows of the Levenshtein table: an hour is ~10,000 words a side, 10^8 cells, no 800 MB matrix.
        var previous = Array(0...hypothesis.count)
        var current = previous
        for (row, word) in reference.enumerated() {
            current[0] = row + 1
            for (column, other) in hypothesis.enumerated() {
                current[column + 1] = min(previous[column] + (word == other ? 0 : 1), previous[column + 1] + 1, current[column] + 1)
            }
            swap(&previous, &current)
        }
        errors = previous[hypothesis.count]
        words = reference.count
    }

    static func words(_ text: String) -> [String] {
        text.lowercased().split { !($0.isLetter || $0 == "'") }.map(String.init)
    }

    var rate: Double { words > 0 ? Double(errors) / Double(words) : 0 }

    var description: String {
        "word error rate \(String(format: "%.1f", 100 * rate)) % (\(errors) errors in \(words) words)"
    }
}
