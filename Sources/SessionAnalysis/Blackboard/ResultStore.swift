/// The blackboard: every result the interpreters produced, by type, in the order they were added.
public struct ResultStore: Sendable {
    private var results: [ObjectIdentifier: [any InterpretationResult]] = [:]

    public init() {}

    public mutating func add<R: InterpretationResult>(_ result: R) {
        results[ObjectIdentifier(R.self), default: []].append(result)
    }

    /// Every result of one type (the thesis's `get_results_of_type`).
    public func all<R: InterpretationResult>(_ type: R.Type) -> [R] {
        (results[ObjectIdentifier(type)] ?? []).map { $0 as! R }
    }

    /// The first result of a type; interpreters use it for types that have exactly one producer.
    public func first<R: InterpretationResult>(_ type: R.Type) -> R? {
        results[ObjectIdentifier(type)]?.first as? R
    }

    /// The result an interpreter declared in `requires`: the controller only runs it once this is there.
    public func required<R: InterpretationResult>(_ type: R.Type) throws -> R {
        guard let result = first(type) else { throw AnalysisError.missingResult(String(describing: type)) }
        return result
    }

    public func contains(_ type: any InterpretationResult.Type) -> Bool {
        !(results[ObjectIdentifier(type)] ?? []).isEmpty
    }
}
