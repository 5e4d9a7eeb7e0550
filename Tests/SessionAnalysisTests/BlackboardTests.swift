import SessionAnalysis
import SessionAnalysisTestSupport
import XCTest

/// The controller and the registry, with stand-in interpreters that leave a trace.
final class BlackboardTests: AnalysisTestCase {
    struct Trace: InterpretationResult { var interpreter: String }
    struct X: InterpretationResult {}
    struct Y: InterpretationResult {}
    struct Z: InterpretationResult {}
    struct Never: InterpretationResult {}

    struct Stub: Interpreter {
        var name: String
        var requires: [any InterpretationResult.Type]
        var produces: [any InterpretationResult.Type]
        var add: @Sendable (inout ResultStore) -> Void

        func run(on journal: SessionJournal, results: inout ResultStore) throws {
            results.add(Trace(interpreter: name))
            add(&results)
        }
    }

    func testControllerRunsEachReadyInterpreterOnceRoundAfterRoundUntilNoneCanContribute() async throws {
        let builder = try JournalBuilder(path: directory + "/s.sqlite")
        try await builder.finish()
        let interpreters: [any Interpreter] = [
            Stub(name: "needs Y", requires: [Y.self], produces: [Z.self]) { $0.add(Z()) },
            Stub(name: "needs X", requires: [X.self], produces: [Y.self]) { $0.add(Y()) },
            Stub(name: "first", requires: [], produces: [X.self]) { $0.add(X()) },
            Stub(name: "never", requires: [Never.self], produces: [X.self]) { $0.add(X()) },
        ]
        let (results, neverReady) = try InterpreterController(interpreters).run(on: SessionJournal(path: builder.path))
        XCTAssertEqual(results.all(Trace.self).map(\.interpreter), ["first", "needs X", "needs Y"])
        XCTAssertEqual(neverReady, ["never"])
        XCTAssertEqual(results.all(X.self).count, 1)
    }

    func testAnInterpreterThatDoesNotProduceWhatItDeclaresStopsTheAnalysis() async throws {
        let builder = try JournalBuilder(path: directory + "/s.sqlite")
        try await builder.finish()
        let liar = Stub(name: "liar", requires: [], produces: [X.self]) { _ in }
        XCTAssertThrowsError(try InterpreterController([liar]).run(on: SessionJournal(path: builder.path))) { error in
            XCTAssertEqual(error as? AnalysisError, .resultNotProduced(interpreter: "liar", result: "X"))
        }
    }

    func testStandardInterpretersHaveUniqueNamesAndEveryRequirementHasAProducer() {
        let interpreters = Interpreters.standard(options: AnalysisOptions())
        XCTAssertEqual(Set(interpreters.map(\.name)).count, interpreters.count)
        let produced = Set(interpreters.flatMap(\.produces).map(ObjectIdentifier.init))
        for interpreter in interpreters {
            for requirement in interpreter.requires {
                XCTAssertTrue(produced.contains(ObjectIdentifier(requirement)), "\(interpreter.name) requires \(requirement), which nothing produces")
            }
        }
    }

    func testEveryStandardInterpreterRunsOnAnEmptySession() async throws {
        let analysis = try await analyse { _ in }
        XCTAssertEqual(analysis.neverReady, [])
        XCTAssertEqual(try analysis.result(Overview.self).eventCount, 0)
        XCTAssertEqual(analysis.problems, [])
    }

    func testAFileThatIsNotASessionFileIsRefusedWithTheReason() throws {
        let path = directory + "/notes.txt"
        try "hello".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try AnalyzedSession(path: path)) { error in
            guard case .notASessionFile(let failing, _)? = error as? AnalysisError else { return XCTFail("\(error)") }
            XCTAssertEqual(failing, path)
        }
        XCTAssertThrowsError(try AnalyzedSession(path: directory + "/missing.sqlite")) { error in
            XCTAssertEqual(error as? AnalysisError, .fileNotFound(directory + "/missing.sqlite"))
        }
    }
}
