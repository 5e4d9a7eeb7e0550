public import SessionModel

/// A finger's path that was not a tap, on the screenshot it was drawn on (seed 001: gesture paths on screenshots).
public struct GesturePath: Equatable, Sendable {
    public var screenshot: Int?
    public var view: String?
    /// The recognised gesture (swipe, scroll, drag…), or "stroke" when the capture library named none.
    public var kind: String
    public var start: Double
    public var duration: Double
    public var points: [Point]
}

public struct GesturePaths: InterpretationResult, Equatable {
    public var paths: [GesturePath]
}

public struct GesturePathsInterpreter: Interpreter {
    public let name = "Gesture paths"
    public let requires: [any InterpretationResult.Type] = [Interactions.self, Screenshots.self]
    public let produces: [any InterpretationResult.Type] = [GesturePaths.self]

    /// How long after the finger lifts the capture library may report the gesture it recognised.
    static let recognitionDelay = 0.3

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let interactions = try results.required(Interactions.self)
        let screenshots = try results.required(Screenshots.self)
        let gestures = interactions.gestures.filter { $0.kind != "tap" }
        var next = 0
        var paths: [GesturePath] = []
        try interactions.strokes.forEach { _, stroke in
            guard !stroke.isTap else { return }
            while next < gestures.count, gestures[next].time < stroke.start { next += 1 }
            var kind = "stroke"
            if next < gestures.count, gestures[next].time <= stroke.end + Self.recognitionDelay {
                kind = gestures[next].kind
                next += 1
            }
            paths.append(GesturePath(screenshot: screenshots.shown(at: stroke.start), view: stroke.view, kind: kind,
                                     start: stroke.start, duration: stroke.end - stroke.start, points: stroke.points))
        }
        results.add(GesturePaths(paths: paths))
    }
}
