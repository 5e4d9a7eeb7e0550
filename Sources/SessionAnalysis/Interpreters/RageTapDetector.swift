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
        let screenshots = try results.required(Screenshots.self)
        var problems: [UsabilityProblem] = []
        // The taps in a row so far: one pass, holding the first and the last of them (issue 41).
        var row: (first: Stroke, last: Stroke, count: Int)?
        // One recommendation's text per element, shared by its problems: a long session repeats them by the
        // ten thousand (heaptrack: 192 bytes each). Kept for as many elements as the strokes keep targets:
        // past that, the app names each element anew and sharing gains nothing.
        var recommendations: [String: String] = [:]
        func recommendation(for label: String) -> String {
            if let known = recommendations[label] { return known }
            let text = "Give \(label) immediate visible feedback (a highlight, a spinner), make it respond faster, and check that its hit target covers what users aim at."
            if recommendations.count < StrokeScratch.internLimit { recommendations[label] = text }
            return text
        }
        func close() {
            guard let (tap, lastTap, count) = row, count >= options.rageTapCount else { return }
            let label = tap.target?.label ?? "the background"
            problems.append(UsabilityProblem(
                kind: .rageTap, view: tap.view, time: tap.start, occurrences: count,
                screenshot: screenshots.shown(at: tap.start), frame: tap.target?.frame, point: tap.origin,
                evidence: "\(count) taps on \(label) within \(formatSeconds(lastTap.start - tap.start)).",
                recommendation: recommendation(for: label),
                element: tap.target?.label))
        }
        try results.required(Interactions.self).strokes.forEach { _, tap in
            guard tap.isTap else { return }
            if let (first, last, count) = row, tap.view == first.view, tap.start - last.start <= options.rageTapInterval,
               tap.origin.distance(to: first.origin) <= options.rageTapRadius {
                row = (first, tap, count + 1)
            } else {
                close()
                row = (tap, tap, 1)
            }
        }
        close()
        results.add(ProblemReport(detector: name, problems: problems))
    }
}
