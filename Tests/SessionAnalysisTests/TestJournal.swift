import Foundation
import SessionAnalysis
import SessionAnalysisTestSupport
import XCTest

/// A temporary directory per test, removed afterwards.
class AnalysisTestCase: XCTestCase {
    var directory = ""

    override func setUp() async throws {
        try await super.setUp()
        directory = NSTemporaryDirectory() + "mueval-analysis-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// MUEVAL_KEEP_TEST_FILES=1 keeps the session files and reports, to open them after a failure.
    override func tearDownWithError() throws {
        if ProcessInfo.processInfo.environment["MUEVAL_KEEP_TEST_FILES"] == nil {
            try? FileManager.default.removeItem(atPath: directory)
        } else {
            print("kept \(directory)")
        }
    }

    /// Writes a session file with the events `build` adds, and analyses it with the standard interpreters.
    func analyse(options: AnalysisOptions = AnalysisOptions(), name: String = "s.sqlite", testUser: String = "Jack",
                 _ build: (JournalBuilder) throws -> Void) async throws -> AnalyzedSession {
        let builder = try JournalBuilder(path: directory + "/" + name, testUser: testUser)
        try build(builder)
        try await builder.finish()
        return try AnalyzedSession(path: builder.path, options: options)
    }

    /// Distinct stand-in screenshot bytes (interpreters never decode them).
    func image(_ tag: String) -> [UInt8] { Array("PNG \(tag)".utf8) }
}

extension AnalyzedSession {
    func result<R: InterpretationResult>(_ type: R.Type, file: StaticString = #filePath, line: UInt = #line) throws -> R {
        try XCTUnwrap(results.first(type), "no \(type) on the blackboard", file: file, line: line)
    }

    func problems(_ kind: UsabilityProblem.Kind) -> [UsabilityProblem] { problems.filter { $0.kind == kind } }
}

/// Time 0 of the synthetic journals.
let t0 = 1_300_000_000.0
