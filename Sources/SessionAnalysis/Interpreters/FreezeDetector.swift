/// A time in which the app showed nothing new although the user waited or tried the same element again,
/// until it finally responded: the thesis's problem scenario (2.3.1), where the app seems to hang.
public struct Freeze: Equatable, Sendable {
    public var start: Double
    public var end: Double
    public var view: String?
    /// Strokes during the freeze, the first included.
    public var inputs: Int
    public var strokes: ClosedRange<Int>
}

public struct Freezes: InterpretationResult, Equatable {
    public var freezes: [Freeze]
}

public struct FreezeDetector: Interpreter {
    public let name = "Freezes"
    public let requires: [any InterpretationResult.Type] = [Interactions.self, InputResponses.self, Screenshots.self]
    public let produces: [any InterpretationResult.Type] = [Freezes.self, ProblemReport.self]
    let options: AnalysisOptions

    public init(options: AnalysisOptions) {
        self.options = options
    }

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let strokes = try results.required(Interactions.self).strokes
        let responses = try results.required(InputResponses.self).responses
        let screenshots = try results.required(Screenshots.self)
        var freezes: [Freeze] = []
        var index = 0
        while index < strokes.count {
            let first = strokes[index]
            guard let latency = responses[index].latency, latency >= options.freezeSeconds else {
                index += 1
                continue
            }
            // Inputs before the response: a freeze only if they all went to the same element (waiting, retrying);
            // a tap beside a control followed by a tap on another is two inputs, not a hang.
            let responseTime = first.start + latency
            var last = index
            while last + 1 < strokes.count, strokes[last + 1].start < responseTime { last += 1 }
            if strokes[index...last].allSatisfy({ Self.sameElement($0, first, radius: options.rageTapRadius) }) {
                freezes.append(Freeze(start: first.start, end: responseTime, view: first.view, inputs: last - index + 1,
                                      strokes: index...last))
            }
            index = last + 1
        }
        results.add(Freezes(freezes: freezes))
        results.add(ProblemReport(detector: name, problems: freezes.map { freeze in
            let target = strokes[freeze.strokes.lowerBound].target
            let retries = freeze.inputs > 1 ? ", tried \(freeze.inputs) times" : ""
            return UsabilityProblem(
                kind: .freeze, view: freeze.view, time: freeze.start, occurrences: freeze.inputs,
                screenshot: screenshots.shown(at: freeze.start), frame: target?.frame,
                point: strokes[freeze.strokes.lowerBound].origin,
                evidence: "After a touch on \(target?.label ?? "the screen") the screen did not change for \(formatSeconds(freeze.end - freeze.start))\(retries).",
                recommendation: "Keep the main thread free: do the work behind \(target?.label ?? "this input") in the background, and show progress at once (an activity indicator, a disabled button).",
                element: target?.label)
        }))
    }

    static func sameElement(_ stroke: Stroke, _ first: Stroke, radius: Double) -> Bool {
        if let a = stroke.target, let b = first.target { return a == b }
        return stroke.origin.distance(to: first.origin) <= radius
    }
}
