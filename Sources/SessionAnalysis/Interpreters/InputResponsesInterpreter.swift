/// How long the app took to show something after an input (a stroke's touch-down): the evidence for
/// unresponsive taps and freezes. It keeps the UserInterfaceEvents' times, not an answer per stroke, so that it
/// grows with what the app showed rather than with the touches (issue 41).
public struct InputResponses: InterpretationResult, Equatable {
    /// The UserInterfaceEvents' times, in order.
    let updates: [Double]

    /// Seconds from `start` to the first UserInterfaceEvent at or after it; nil when none followed.
    public func latency(after start: Double) -> Double? {
        let next = updates.partitioningIndex { $0 >= start }
        return next < updates.count ? updates[next] - start : nil
    }
}

public struct InputResponsesInterpreter: Interpreter {
    public let name = "Input responses"
    public let requires: [any InterpretationResult.Type] = [Interactions.self]
    public let produces: [any InterpretationResult.Type] = [InputResponses.self]

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        results.add(InputResponses(updates: try results.required(Interactions.self).updates.map(\.time).sorted()))
    }
}
