/// One step of the navigation path (thesis 5.3, `ViewChangesInterpreter`): a view's appearance, whose fields read as
/// the step's own (`step.view`, `step.stack`), with the screenshot it showed.
@dynamicMemberLookup
public struct NavigationStep: Equatable, Sendable {
    public var appearance: ViewAppearance
    /// The screenshot of the view, or the last one before it when the event had none.
    public var screenshot: Int?

    public subscript<Value>(dynamicMember field: KeyPath<ViewAppearance, Value>) -> Value { appearance[keyPath: field] }

    /// The stack as the report prints it: `Blogs > Posts > Write`.
    public var stackText: String { appearance.stack.joined(separator: " > ") }
}

public struct NavigationPath: InterpretationResult, Equatable {
    public var steps: [NavigationStep]
}

public struct ViewChangesInterpreter: Interpreter {
    public let name = "View changes"
    public let requires: [any InterpretationResult.Type] = [Interactions.self, Screenshots.self]
    public let produces: [any InterpretationResult.Type] = [NavigationPath.self]

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let screenshots = try results.required(Screenshots.self)
        let steps = try results.required(Interactions.self).appearances.map { appearance in
            NavigationStep(appearance: appearance, screenshot: screenshots.shown(at: appearance.time))
        }
        results.add(NavigationPath(steps: steps))
    }
}
