public import SessionModel

/// The touches on one screenshot (thesis 5.3, `TouchHeatmapInterpreter`).
public struct Heatmap: Equatable, Sendable {
    public var screenshot: Int
    public var view: String?
    /// Where fingers went down, in points.
    public var touches: [Point]
}

public struct TouchHeatmaps: InterpretationResult, Equatable {
    /// By screenshot index.
    public var heatmaps: [Heatmap]
    /// Touches before the first screenshot: nothing to draw them on.
    public var unmapped: Int
}

/// Maps each touch to the last screenshot taken before it, so that touches on different screens never mix.
public struct TouchHeatmapInterpreter: Interpreter {
    public let name = "Touch heatmap"
    public let requires: [any InterpretationResult.Type] = [Interactions.self, Screenshots.self]
    public let produces: [any InterpretationResult.Type] = [TouchHeatmaps.self]

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let screenshots = try results.required(Screenshots.self)
        var touches: [Int: [Point]] = [:]
        var unmapped = 0
        try results.required(Interactions.self).strokes.forEach { _, stroke in
            if let index = screenshots.shown(at: stroke.start) {
                touches[index, default: []].append(stroke.origin)
            } else {
                unmapped += 1
            }
        }
        let heatmaps = touches.keys.sorted().map { Heatmap(screenshot: $0, view: screenshots.shots[$0].view, touches: touches[$0]!) }
        results.add(TouchHeatmaps(heatmaps: heatmaps, unmapped: unmapped))
    }
}
