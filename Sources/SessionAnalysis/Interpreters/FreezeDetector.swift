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

    /// A freeze being gathered: the stroke that got no response for long enough, and the strokes until the response.
    private struct Candidate {
        var first: Stroke
        var index: Int
        var responseTime: Double
        var last: Int
        var sameElement = true
    }

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let responses = try results.required(InputResponses.self)
        let screenshots = try results.required(Screenshots.self)
        var freezes: [Freeze] = []
        var problems: [UsabilityProblem] = []
        var candidate: Candidate?
        func close(_ candidate: Candidate) {
            // Inputs before the response: a freeze only if they all went to the same element (waiting, retrying);
            // a tap beside a control followed by a tap on another is two inputs, not a hang.
            guard candidate.sameElement else { return }
            let freeze = Freeze(start: candidate.first.start, end: candidate.responseTime, view: candidate.first.view,
                                inputs: candidate.last - candidate.index + 1, strokes: candidate.index...candidate.last)
            freezes.append(freeze)
            problems.append(problem(freeze, first: candidate.first, screenshots: screenshots))
        }
        // One pass in the strokes' order, holding the one freeze being gathered (issue 41).
        try results.required(Interactions.self).strokes.forEach { index, stroke in
            if var open = candidate {
                guard stroke.start >= open.responseTime else {
                    open.last = index
                    open.sameElement = open.sameElement && Self.sameElement(stroke, open.first, radius: options.rageTapRadius)
                    candidate = open
                    return
                }
                close(open)
                candidate = nil
            }
            guard let latency = responses.latency(after: stroke.start), latency >= options.freezeSeconds else { return }
            candidate = Candidate(first: stroke, index: index, responseTime: stroke.start + latency, last: index)
        }
        if let candidate { close(candidate) }
        results.add(Freezes(freezes: freezes))
        results.add(ProblemReport(detector: name, problems: problems))
    }

    private func problem(_ freeze: Freeze, first: Stroke, screenshots: Screenshots) -> UsabilityProblem {
        let target = first.target
        let retries = freeze.inputs > 1 ? ", tried \(freeze.inputs) times" : ""
        return UsabilityProblem(
            kind: .freeze, view: freeze.view, time: freeze.start, occurrences: freeze.inputs,
            screenshot: screenshots.shown(at: freeze.start), frame: target?.frame, point: first.origin,
            evidence: "After a touch on \(target?.label ?? "the screen") the screen did not change for \(formatSeconds(freeze.end - freeze.start))\(retries).",
            recommendation: "Keep the main thread free: do the work behind \(target?.label ?? "this input") in the background, and show progress at once (an activity indicator, a disabled button).",
            element: target?.label)
    }

    static func sameElement(_ stroke: Stroke, _ first: Stroke, radius: Double) -> Bool {
        if let a = stroke.target, let b = first.target { return a == b }
        return stroke.origin.distance(to: first.origin) <= radius
    }
}
