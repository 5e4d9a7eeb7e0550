/// One step of the navigation path (thesis 5.3, `ViewChangesInterpreter`).
public struct NavigationStep: Equatable, Sendable {
    public var eventID: Int64
    public var time: Double
    public var view: String
    public var title: String?
    /// launch, push, modal, pop, dismiss.
    public var transition: String
    /// The view stack, root first.
    public var stack: [String]
    /// The screenshot of the view, or the last one before it when the event had none.
    public var screenshot: Int?

    /// The stack as the report prints it: `Blogs > Posts > Write`.
    public var stackText: String { stack.joined(separator: " > ") }
}

public struct NavigationPath: InterpretationResult, Equatable {
    public var steps: [NavigationStep]
}

public struct ViewChangesInterpreter: Interpreter {
    public let name = "View changes"
    public let requires: [any InterpretationResult.Type] = [Interactions.self, Screenshots.self]
    public let produces: [any InterpretationResult.Type] = [NavigationPath.self]

    public init() {}

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let screenshots = try results.required(Screenshots.self)
        let steps = try results.required(Interactions.self).appearances.map { appearance in
            NavigationStep(eventID: appearance.eventID, time: appearance.time, view: appearance.view, title: appearance.title,
                           transition: appearance.transition, stack: appearance.stack,
                           screenshot: screenshots.shown(at: appearance.time))
        }
        results.add(NavigationPath(steps: steps))
    }
}
