/// Back-and-forth navigation: A → B → A → B…, a user looking for something in two places and finding it in neither.
public struct NavigationLoopDetector: Interpreter {
    public let name = "Navigation loops"
    public let requires: [any InterpretationResult.Type] = [NavigationPath.self]
    public let produces: [any InterpretationResult.Type] = [ProblemReport.self]
    let options: AnalysisOptions

    public init(options: AnalysisOptions) {
        self.options = options
    }

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let steps = try results.required(NavigationPath.self).steps
        var problems: [UsabilityProblem] = []
        var start = 0
        while start + 2 < steps.count {
            // Extend while each view repeats the one two steps earlier and differs from the one before it.
            var end = start + 1
            while end + 1 < steps.count, steps[end + 1].view == steps[end - 1].view, steps[end + 1].view != steps[end].view {
                end += 1
            }
            let roundTrips = (end - start) / 2
            if steps[start].view != steps[start + 1].view, roundTrips >= options.loopRoundTrips {
                let (a, b) = (steps[start].view, steps[start + 1].view)
                problems.append(UsabilityProblem(
                    kind: .navigationLoop, view: a, time: steps[start].time, occurrences: roundTrips,
                    screenshot: steps[start + 1].screenshot, frame: nil, point: nil,
                    evidence: "The user went from \(a) to \(b) and back \(roundTrips) times in \(formatSeconds(steps[end].time - steps[start].time)).",
                    recommendation: "Users look for something between \(a) and \(b): show what they need from \(b) in \(a) (a preview, a summary), or make the way forward clearer."))
                start = end
            } else {
                start += 1
            }
        }
        results.add(ProblemReport(detector: name, problems: problems))
    }
}
