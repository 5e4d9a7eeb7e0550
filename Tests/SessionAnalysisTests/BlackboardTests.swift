@testable import SessionAnalysis
import SessionAnalysisTestSupport
import SessionModel
import UnlinkedFiles
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
        XCTAssertTrue(analysis.problems.isEmpty)
    }

    func testProblemsOfEveryDetectorAreInTimeOrderWithoutACopy() {
        func problem(_ time: Double, _ evidence: String) -> UsabilityProblem {
            UsabilityProblem(kind: .rageTap, view: nil, time: time, occurrences: 1, screenshot: nil, frame: nil, point: nil,
                             evidence: evidence, recommendation: "", element: nil)
        }
        let problems = Problems([[problem(3, "a3"), problem(5, "a5")], [], [problem(1, "b1"), problem(3, "b3"), problem(9, "b9")]])
        XCTAssertEqual(problems.map(\.evidence), ["b1", "a3", "b3", "a5", "b9"], "equal times in the detectors' order")
        XCTAssertEqual(problems.count, 5)
        XCTAssertEqual(problems[4].time, 9)
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

    /// What stand-in journal readers were handed, in the order they were handed it.
    final class Log: @unchecked Sendable {
        var lines: [String] = []
    }

    struct Reading: JournalInterpreter {
        var name: String
        var classes: Set<String>?
        var payloads: Bool
        var log: Log
        var produces: [any InterpretationResult.Type] { [Trace.self] }

        func makeReader(for journal: SessionJournal) -> any JournalReader { Reader(of: self) }

        final class Reader: JournalReader {
            let of: Reading
            init(of: Reading) { self.of = of }
            var eventClasses: Set<String>? { of.classes }
            var readsPayloads: Bool { of.payloads }
            func read(_ event: JournalEvent) {
                of.log.lines.append("\(of.name) \(event.id) \(event["n"]?.number.map { "n=\($0)" } ?? "-")")
            }
            func skip(implausible event: StoredEvent) { of.log.lines.append("\(of.name) skips \(event.id)") }
            func finish(into results: inout ResultStore) { results.add(Trace(interpreter: of.name)) }
        }
    }

    func testJournalInterpretersReadInOnePassEachItsClassesInStorageOrderDecodedOnlyWhereNeeded() async throws {
        let builder = try JournalBuilder(path: directory + "/s.sqlite")
        builder.add("A", at: t0, ["n": .integer(1)])
        builder.add("B", at: t0 + 1, ["n": .integer(2)])
        builder.add("A", at: 1e300, ["n": .integer(3)])
        builder.add("A", at: t0 + 2, ["n": .integer(4)])
        try await builder.finish()
        let log = Log()
        let interpreters: [any Interpreter] = [
            Reading(name: "a", classes: ["A"], payloads: true, log: log),
            Reading(name: "all", classes: nil, payloads: false, log: log),
            Stub(name: "after", requires: [Trace.self], produces: [X.self]) { $0.add(X()) },
        ]
        let (results, neverReady) = try InterpreterController(interpreters).run(on: SessionJournal(path: builder.path))
        // Interleaved by event: one pass, not one per reader. "all" sees A's payloads (decoded for "a") and not B's.
        XCTAssertEqual(log.lines, ["a 1 n=1.0", "all 1 n=1.0", "all 2 -", "a skips 3", "all skips 3", "a 4 n=4.0", "all 4 n=4.0"])
        XCTAssertEqual(results.all(Trace.self).map(\.interpreter), ["a", "all", "after"])
        XCTAssertEqual(neverReady, [])
    }

    func testTimelineLinesComeBackWholeFromTheirFileWhichLeavesNothingBehind() async throws {
        let views: [String?] = ["Über ✓ ", nil, String(repeating: "v", count: 300), ""]
        let analysis = try await analyse { journal in
            for index in 0..<3_000 {
                let note = String(repeating: "x", count: index % 200)
                if let view = views[index % 4] {
                    journal.add("CustomEvent", at: t0 + Double(index), ["name": .string("e"), "view": .string(view), "note": .string(note)])
                } else {
                    journal.add("CustomEvent", at: t0 + Double(index), ["name": .string("e"), "note": .string(note)])
                }
            }
        }
        var entries: [TimelineEntry] = []
        try analysis.result(Timeline.self).forEachEntry(screenshots: nil) { entries.append($0) }
        // More than one of the spool's 64 KiB pieces, read back line by line.
        XCTAssertEqual(entries.count, 3_000)
        XCTAssertEqual(entries.map(\.eventID), Array(1...3_000))
        XCTAssertEqual(entries.map(\.view), (0..<3_000).map { views[$0 % 4] })
        XCTAssertEqual(entries[2_999].time, t0 + 2_999)
        XCTAssertEqual(entries[7].summary, "name=e note=xxxxxxx")
        XCTAssertEqual(entries[199].summary.count, 160, "cut at the timeline's limit")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix("s.sqlite") }, [])
        // Open while the analysis lives, unlinked, and never inherited by a child process (the face scan).
        let spools = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { name -> Int32? in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)
            return target.map { $0.hasPrefix(directory + "/.mueval-timeline-") && $0.hasSuffix(" (deleted)") } == true ? Int32(name) : nil
        }
        XCTAssertEqual(spools.count, 1)
        for descriptor in spools { XCTAssertNotEqual(fcntl(descriptor, F_GETFD) & FD_CLOEXEC, 0) }
        withExtendedLifetime(analysis) {}
    }

    /// The spool's file (and the vocabulary's): in the first directory that takes one, else an error naming them all.
    func testAnUnlinkedFileIsMadeInTheFirstDirectoryThatTakesOne() throws {
        let descriptor = try UnlinkedFile.create(in: [directory + "/missing", directory], prefix: "mueval-test")
        defer { close(descriptor) }
        let target = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
        XCTAssertTrue(target.hasPrefix(directory + "/.mueval-test-") && target.hasSuffix(" (deleted)"), target)
        XCTAssertNotEqual(fcntl(descriptor, F_GETFD) & FD_CLOEXEC, 0)
        XCTAssertThrowsError(try UnlinkedFile.create(in: [directory + "/missing", directory + "/gone"], prefix: "mueval-test")) { error in
            XCTAssertEqual("\(error)", "cannot make a temporary file in \(directory)/missing or \(directory)/gone: No such file or directory")
        }
    }

    struct Failing: JournalInterpreter {
        struct Failure: Error, Equatable {}
        let name = "failing"
        var produces: [any InterpretationResult.Type] { [X.self] }
        func makeReader(for journal: SessionJournal) -> any JournalReader { Reader() }

        final class Reader: JournalReader {
            let eventClasses: Set<String>? = nil
            func read(_ event: JournalEvent) throws {
                if event.id == 1_500 { throw Failure() }
            }
            func finish(into results: inout ResultStore) { results.add(X()) }
        }
    }

    func testAReaderThatFailsStopsThePassWithItsErrorAndTheReadingThreadEnds() async throws {
        let builder = try JournalBuilder(path: directory + "/s.sqlite")
        // Many batches: the reading thread is waiting on a full queue when the reader fails.
        for index in 0..<20_000 { builder.add("A", at: t0 + Double(index), [:]) }
        try await builder.finish()
        let journal = try SessionJournal(path: builder.path)
        XCTAssertThrowsError(try InterpreterController([Failing()]).run(on: journal)) { error in
            XCTAssertEqual(error as? Failing.Failure, Failing.Failure())
        }
        // The journal is usable again: the reading thread let go of it.
        let log = Log()
        _ = try InterpreterController([Reading(name: "r", classes: nil, payloads: false, log: log)]).run(on: journal)
        XCTAssertEqual(log.lines.count, 20_000)
    }
}
