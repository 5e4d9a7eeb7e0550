/// Rage taps: several quick taps at one spot, the user hammering on something that does not react as expected.
public struct RageTapDetector: Interpreter {
    public let name = "Rage taps"
    public let requires: [any InterpretationResult.Type] = [Interactions.self, Screenshots.self]
    public let produces: [any InterpretationResult.Type] = [ProblemReport.self]
    let options: AnalysisOptions

    public init(options: AnalysisOptions) {
        self.options = options
    }

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let strokes = try results.required(Interactions.self).strokes
        // Indexes: a copy of the taps themselves would double the largest result for the detector's run.
        let taps = strokes.indices.filter { strokes[$0].isTap }
        let tapAt = { (index: Int) in strokes[taps[index]] }
        let screenshots = try results.required(Screenshots.self)
        var problems: [UsabilityProblem] = []
        var first = 0
        while first < taps.count {
            var last = first
            while last + 1 < taps.count, tapAt(last + 1).view == tapAt(first).view,
                  tapAt(last + 1).start - tapAt(last).start <= options.rageTapInterval,
                  tapAt(last + 1).origin.distance(to: tapAt(first).origin) <= options.rageTapRadius {
                last += 1
            }
            let count = last - first + 1
            if count >= options.rageTapCount {
                let (tap, lastTap) = (tapAt(first), tapAt(last))
                let label = tap.target?.label ?? "the background"
                problems.append(UsabilityProblem(
                    kind: .rageTap, view: tap.view, time: tap.start, occurrences: count,
                    screenshot: screenshots.shown(at: tap.start), frame: tap.target?.frame, point: tap.origin,
                    evidence: "\(count) taps on \(label) within \(formatSeconds(lastTap.start - tap.start)).",
                    recommendation: "Give \(label) immediate visible feedback (a highlight, a spinner), make it respond faster, and check that its hit target covers what users aim at.",
                    element: tap.target?.label))
            }
            first = last + 1
        }
        results.add(ProblemReport(detector: name, problems: problems))
    }
}
