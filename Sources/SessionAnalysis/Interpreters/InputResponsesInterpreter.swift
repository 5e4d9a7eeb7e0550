/// How long the app took to show something after each input (a stroke): the evidence for unresponsive
/// taps and freezes.
public struct InputResponses: InterpretationResult, Equatable {
    public struct Response: Equatable, Sendable {
        /// Index into `Interactions.strokes`.
        public var stroke: Int
        /// Seconds from the touch-down to the first UserInterfaceEvent; nil when none followed.
        public var latency: Double?
    }

    public var responses: [Response]
}

public struct InputResponsesInterpreter: Interpreter {
    public let name = "Input responses"
    public let requires: [any InterpretationResult.Type] = [Interactions.self]
    public let produces: [any InterpretationResult.Type] = [InputResponses.self]

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let interactions = try results.required(Interactions.self)
        let updates = interactions.updates.map(\.time).sorted()
        var next = 0
        let responses = interactions.strokes.enumerated().map { index, stroke in
            while next < updates.count, updates[next] < stroke.start { next += 1 }
            return InputResponses.Response(stroke: index, latency: next < updates.count ? updates[next] - stroke.start : nil)
        }
        results.add(InputResponses(responses: responses))
    }
}
