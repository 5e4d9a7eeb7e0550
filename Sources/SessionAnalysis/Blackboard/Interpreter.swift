/// A result an interpreter puts on the blackboard (thesis 4.2.2: `InterpretationResult`).
/// The store holds results by their type; several interpreters may add results of one type.
public protocol InterpretationResult: Sendable {}

/// An expert on the blackboard: reads the session journal and the results of others, adds its own.
///
/// To add one: write a type that conforms, and list it in `Interpreters.standard`. Adding one, or changing what
/// one finds, adds one to `AnalysisVersion.current`, so that digests stored by the older analysis are made again.
/// Every interpreter contributes once (the thesis's `ContributeOnceInterpreter`): the controller runs it in
/// the first round in which everything it `requires` is on the blackboard.
public protocol Interpreter: Sendable {
    /// A short name for diagnostics and the documentation.
    var name: String { get }
    /// Result types that must be on the blackboard before this interpreter can contribute.
    var requires: [any InterpretationResult.Type] { get }
    /// Result types this interpreter adds (at least one of each), checked by the controller.
    var produces: [any InterpretationResult.Type] { get }
    func run(on journal: SessionJournal, results: inout ResultStore) throws
}
