@testable import SessionAnalysis

extension Strokes {
    /// Every stroke, read back into memory: for tests, which look at a handful.
    func collected() throws -> [Stroke] {
        var strokes: [Stroke] = []
        try forEach { strokes.append($1) }
        return strokes
    }
}
