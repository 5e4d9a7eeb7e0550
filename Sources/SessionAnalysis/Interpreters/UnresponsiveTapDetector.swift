/// Taps after which nothing happened: no UserInterfaceEvent, no screen change within the response window.
/// Usually taps on something that looks interactive and is not (seed 003's "leaf problem"). Taps during a
/// freeze are the freeze's. Reported once per element and view, with the number of taps.
public struct UnresponsiveTapDetector: Interpreter {
    public let name = "Unresponsive taps"
    public let requires: [any InterpretationResult.Type] = [Interactions.self, InputResponses.self, Freezes.self, Screenshots.self]
    public let produces: [any InterpretationResult.Type] = [ProblemReport.self]
    let options: AnalysisOptions

    public init(options: AnalysisOptions) {
        self.options = options
    }

    private struct Place: Hashable {
        var view: String?
        var element: ElementReference?
    }

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let screenshots = try results.required(Screenshots.self)
        var problems: [UsabilityProblem] = []
        var places: [Place] = []
        var byPlace: [Place: Int] = [:]
        try Self.forEachTap(in: results, options: options) { stroke, unresponsive in
            guard unresponsive else { return }
            let place = Place(view: stroke.view, element: stroke.target)
            if let existing = byPlace[place] {
                problems[existing].occurrences += 1
                return
            }
            byPlace[place] = problems.count
            places.append(place)
            problems.append(UsabilityProblem(
                kind: .unresponsiveTap, view: stroke.view, time: stroke.start, occurrences: 1,
                screenshot: screenshots.shown(at: stroke.start), frame: stroke.target?.frame, point: stroke.origin,
                evidence: "", recommendation: Self.recommendation(for: stroke.target), element: stroke.target?.label))
        }
        for index in problems.indices {
            let problem = problems[index]
            let what = places[index].element?.label ?? "the background"
            problems[index].evidence = "\(problem.occurrences == 1 ? "A tap" : "\(problem.occurrences) taps") on \(what) got no UI event and no screen change within \(formatSeconds(options.responseWindow))."
        }
        results.add(ProblemReport(detector: name, problems: problems))
    }

    /// Every tap, in the strokes' order, and whether the detector counts it: a tap outside a freeze with no UI
    /// event within the response window. A study's attempts count theirs with it, in the same pass as their
    /// other taps.
    public static func forEachTap(in results: ResultStore, options: AnalysisOptions, _ body: (Stroke, _ unresponsive: Bool) throws -> Void) throws {
        let responses = try results.required(InputResponses.self)
        // In the strokes' order, as the detector found them.
        let freezes = try results.required(Freezes.self).freezes.map(\.strokes)
        var freeze = 0
        try results.required(Interactions.self).strokes.forEach { index, stroke in
            while freeze < freezes.count, freezes[freeze].upperBound < index { freeze += 1 }
            let frozen = freeze < freezes.count && freezes[freeze].contains(index)
            guard stroke.isTap else { return }
            try body(stroke, !frozen && (responses.latency(after: stroke.start) ?? .infinity) > options.responseWindow)
        }
    }

    static func recommendation(for target: ElementReference?) -> String {
        guard let target else {
            return "Users tapped where nothing responds: if they expect a control there, put one there or enlarge the nearest control's hit target."
        }
        return "Users expect \(target.label) to respond to a tap: make it interactive (open its details, select it), or make it look static so nobody tries."
    }
}
