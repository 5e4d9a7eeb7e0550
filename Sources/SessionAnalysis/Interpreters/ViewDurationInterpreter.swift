/// Time on one view, or on one functionality (a group of views).
public struct TimeShare: Equatable, Sendable {
    public var name: String
    public var seconds: Double
    /// Of all the time a view was on screen, 0…1.
    public var share: Double
    public var visits: Int
}

/// How long each view was on screen, most used first (thesis 5.3, `ViewDurationInterpreter`), and the
/// time per functionality (seed 001 Fig. 1). Time in the background or between runs of the app counts for no view.
public struct ViewDurations: InterpretationResult, Equatable {
    public var total: Double
    public var views: [TimeShare]
    public var functionalities: [TimeShare]
}

public struct ViewDurationInterpreter: Interpreter {
    public let name = "View durations"
    public let requires: [any InterpretationResult.Type] = [Overview.self, NavigationPath.self, Interactions.self]
    public let produces: [any InterpretationResult.Type] = [ViewDurations.self]
    let options: AnalysisOptions

    public init(options: AnalysisOptions) {
        self.options = options
    }

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let steps = try results.required(NavigationPath.self).steps
        let end = try results.required(Overview.self).end ?? 0
        let away = Self.inactiveSpans(try results.required(Interactions.self).lifecycle, sessionEnd: end)
        var seconds: [String: Double] = [:], visits: [String: Int] = [:]
        for (index, step) in steps.enumerated() {
            let until = index + 1 < steps.count ? steps[index + 1].time : end
            seconds[step.view, default: 0] += Self.activeTime(from: step.time, to: until, excluding: away)
            visits[step.view, default: 0] += 1
        }
        let total = seconds.values.reduce(0, +)
        var perFunctionality: [String: (seconds: Double, visits: Int)] = [:]
        for (view, time) in seconds {
            perFunctionality[options.functionality(of: view), default: (0, 0)].seconds += time
            perFunctionality[options.functionality(of: view), default: (0, 0)].visits += visits[view]!
        }
        func shares(_ list: [(String, Double, Int)]) -> [TimeShare] {
            list.map { TimeShare(name: $0.0, seconds: $0.1, share: total > 0 ? $0.1 / total : 0, visits: $0.2) }
                .sorted { ($0.seconds, $1.name) > ($1.seconds, $0.name) }
        }
        results.add(ViewDurations(total: total,
                                  views: shares(seconds.map { ($0.key, $0.value, visits[$0.key]!) }),
                                  functionalities: shares(perFunctionality.map { ($0.key, $0.value.seconds, $0.value.visits) })))
    }

    /// Background → foreground, and terminate → the next launch (or the session's end).
    static func inactiveSpans(_ lifecycle: [LifecycleEvent], sessionEnd: Double) -> [ClosedRange<Double>] {
        var spans: [ClosedRange<Double>] = []
        var leftAt: Double?
        for event in lifecycle {
            switch event.type {
            case "background", "terminate": leftAt = leftAt ?? event.time
            case "foreground", "launch":
                if let start = leftAt, event.time >= start { spans.append(start...event.time) }
                leftAt = nil
            default: break
            }
        }
        if let start = leftAt, sessionEnd >= start { spans.append(start...sessionEnd) }
        return spans
    }

    static func activeTime(from start: Double, to end: Double, excluding spans: [ClosedRange<Double>]) -> Double {
        guard end > start else { return 0 }
        let inactive = spans.reduce(0.0) { sum, span in sum + max(0, min(end, span.upperBound) - max(start, span.lowerBound)) }
        return end - start - inactive
    }
}
