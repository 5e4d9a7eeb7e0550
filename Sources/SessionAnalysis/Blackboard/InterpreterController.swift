/// Runs interpreters on the blackboard round after round (thesis Listing 4.6), after the journal's one pass in which
/// every `JournalInterpreter` reads: each round runs every interpreter whose requirements are met and that has not
/// contributed yet; the analysis ends when a round finds none ready.
public struct InterpreterController: Sendable {
    public let interpreters: [any Interpreter]

    public init(_ interpreters: [any Interpreter]) {
        self.interpreters = interpreters
    }

    /// The blackboard after the analysis, and the interpreters that never became ready.
    public func run(on journal: SessionJournal) throws -> (results: ResultStore, neverReady: [String]) {
        var results = ResultStore()
        // Every interpreter whose evidence is the journal reads in one ordered pass, before the first round.
        let readers = interpreters.compactMap { $0 as? any JournalInterpreter }
        try journal.read(with: readers.map { $0.makeReader(for: journal) }, into: &results)
        try readers.forEach { try Self.check($0, produced: results) }
        var pending = interpreters.filter { !($0 is any JournalInterpreter) }
        while true {
            let ready = pending.filter { interpreter in interpreter.requires.allSatisfy { results.contains($0) } }
            if ready.isEmpty { break }
            for interpreter in ready {
                try interpreter.run(on: journal, results: &results)
                try Self.check(interpreter, produced: results)
            }
            let names = Set(ready.map(\.name))
            pending.removeAll { names.contains($0.name) }
        }
        return (results, pending.map(\.name))
    }

    /// An interpreter that promises a result and adds none would leave its dependants waiting for ever.
    private static func check(_ interpreter: any Interpreter, produced results: ResultStore) throws {
        if let missing = interpreter.produces.first(where: { !results.contains($0) }) {
            throw AnalysisError.resultNotProduced(interpreter: interpreter.name, result: String(describing: missing))
        }
    }
}
