import Dispatch
import Foundation
import GroupCommit
import MuEvalWire
import NIOConcurrencyHelpers
import WireProtocol
import XCTest

@testable import GroupCommit
@testable import JournalStorage

/// The sync of the file system that every session's commits share (`storage.shared_sync`): a commit is reported only
/// after a sync that started after it, and many sessions' commits share one sync.
final class SharedSyncTests: XCTestCase {
    private var directory: String!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("shared-sync-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func record(seq: Int64, device: String = "d1", origin: UInt64 = 1) -> JournalRecord {
        let payload = #"{"class":"UserInputEvent","seq":\#(seq)}"#
        return JournalRecord(device: device, received: 200,
                             event: WireEvent(eventClass: "UserInputEvent", timestamp: 100, seq: seq, sensor: nil,
                                              payload: Array(payload.utf8), blobs: []),
                             origin: origin)
    }

    // MARK: The state machine

    func testAWaiterIsCoveredOnlyByASyncThatStartedAfterItAsked() {
        var machine = SharedSyncStateMachine<String>()
        guard case .startSync = machine.wait("a") else { return XCTFail("an idle machine starts a sync at once") }
        guard case .none = machine.wait("b") else { return XCTFail("a running sync may have missed b's commit") }
        guard case .none = machine.wait("c") else { return XCTFail("c waits with b") }
        XCTAssertEqual(machine.waiting, 3)
        let first = machine.syncEnded()
        XCTAssertEqual(first.covered, ["a"])
        XCTAssertTrue(first.syncAgain, "b and c asked meanwhile: the next sync starts at once")
        guard case .none = machine.wait("d") else { return XCTFail("the second sync runs: d waits for a third") }
        let second = machine.syncEnded()
        XCTAssertEqual(second.covered, ["b", "c"])
        XCTAssertTrue(second.syncAgain)
        let third = machine.syncEnded()
        XCTAssertEqual(third.covered, ["d"])
        XCTAssertFalse(third.syncAgain)
        XCTAssertEqual(machine.waiting, 0)
        guard case .startSync = machine.wait("e") else { return XCTFail("idle again: a new waiter starts a sync") }
    }

    // MARK: SharedSync

    /// A sync that waits for the test to let it finish (until `open`), answers `results` in turn (then 0), and counts
    /// how often it ran (the opening probe included, which passes at once).
    private final class GatedSync: Sendable {
        let calls = NIOLockedValueBox(0)
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let results = NIOLockedValueBox<[CInt]>([])
        let isOpen = NIOLockedValueBox(false)

        func sync(_ descriptor: CInt) -> CInt {
            let call = calls.withLockedValue { $0 += 1; return $0 }
            if call == 1 || isOpen.withLockedValue({ $0 }) { return 0 }
            started.signal()
            gate.wait()
            let result = results.withLockedValue { $0.isEmpty ? 0 : $0.removeFirst() }
            if result != 0 { errno = EIO }
            return result
        }

        /// Every further sync passes at once (the one waiting at the gate too).
        func open() {
            isOpen.withLockedValue { $0 = true }
            gate.signal()
        }
    }

    func testWaitersThatAskDuringASyncShareTheNextOne() throws {
        let gated = GatedSync()
        let shared = try SharedSync(directory: directory, sync: { gated.sync($0) })
        let told = NIOLockedValueBox<[Int]>([])
        let allTold = DispatchSemaphore(value: 0)
        let waiter: (Int) -> SharedSync.Waiter = { id in { _ in
            if told.withLockedValue({ $0.append(id); return $0.count }) == 11 { allTold.signal() }
        } }
        shared.afterNextSync(waiter(0))
        gated.started.wait()
        for id in 1...10 { shared.afterNextSync(waiter(id)) }
        XCTAssertEqual(told.withLockedValue { $0 }, [], "nobody is told before the running sync ends")
        gated.gate.signal()
        gated.started.wait()
        XCTAssertEqual(told.withLockedValue { $0 }, [0], "the first sync covers only the waiter that was there when it started")
        gated.gate.signal()
        XCTAssertEqual(allTold.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(told.withLockedValue { $0 }, Array(0...10))
        XCTAssertEqual(shared.done.syncs, 2, "ten waiters, one sync")
    }

    func testAnUnopenableDirectoryIsAnErrorThatNamesIt() {
        XCTAssertThrowsError(try SharedSync(directory: directory + "/missing")) { error in
            XCTAssertTrue("\(error)".contains(directory + "/missing"), "\(error)")
        }
    }

    // MARK: Writers sharing it

    func testManySessionsCommitsShareSyncsAndEveryEventIsReportedStored() async throws {
        let shared = try SharedSync(directory: directory)
        let stored = NIOLockedValueBox(0)
        let writers = try (0..<20).map { index in
            try JournalWriter(path: directory + "/s\(index).sqlite", limits: .init(), sharedSync: shared) { report in
                XCTAssertNil(report.failure)
                stored.withLockedValue { $0 += report.rowIDs.compactMap { $0 }.count }
            }
        }
        for seq in 1...50 {
            for writer in writers { _ = writer.append([record(seq: Int64(seq))]) }
        }
        for writer in writers { try await writer.flush() }
        XCTAssertEqual(stored.withLockedValue { $0 }, 20 * 50)
        XCTAssertLessThan(shared.done.syncs, 20 * 50, "the sessions' commits share syncs")
        XCTAssertEqual(shared.done.failures, 0)
        for (index, writer) in writers.enumerated() {
            let synchronous = try await writer.perform { file in
                var value: Int64 = -1
                try file.database.prepare("PRAGMA synchronous").forEachRow { value = $0.int64(0) }
                return value
            }
            XCTAssertEqual(synchronous, 1, "session \(index): NORMAL, the shared sync makes commits durable")
            try await writer.close()
            XCTAssertEqual(try SessionReader(path: directory + "/s\(index).sqlite").eventCount(), 50)
        }
    }

    func testACommitIsReportedOnlyAfterItsSyncAndAFailedSyncIsReportedAsAFailure() async throws {
        let gated = GatedSync()
        gated.results.withLockedValue { $0 = [0, -1] }
        let shared = try SharedSync(directory: directory, sync: { gated.sync($0) })
        let reports = NIOLockedValueBox<[CommitReport]>([])
        let completion = NIOLockedValueBox<Result<[Int64?], SQLiteError>?>(nil)
        let writer = try JournalWriter(path: directory + "/s.sqlite", limits: .init(), sharedSync: shared) { report in
            reports.withLockedValue { $0.append(report) }
        }
        _ = writer.append([record(seq: 1)]) { result in completion.withLockedValue { $0 = result } }
        gated.started.wait()
        _ = writer.append([record(seq: 2), record(seq: 3)])
        XCTAssertTrue(reports.withLockedValue { $0.isEmpty }, "stored, not yet synced: no acknowledgement")
        XCTAssertNil(completion.withLockedValue { $0 })
        XCTAssertGreaterThan(writer.pendingBytes, 0, "its bytes count against the queue until the sync")

        gated.gate.signal()  // the first sync succeeds; seqs 2 and 3, which waited for it, are committed in one batch
        gated.started.wait()
        XCTAssertEqual(reports.withLockedValue { $0.map(\.records.count) }, [1])
        XCTAssertEqual(reports.withLockedValue { $0.first?.highestSeqByOrigin }, [1: 1])
        XCTAssertEqual(try completion.withLockedValue { try $0?.get() }, [1])

        gated.gate.signal()  // the second fails
        gated.open()
        try await writer.flush()
        let all = reports.withLockedValue { $0 }
        XCTAssertEqual(all.map(\.records.count), [1, 2])
        XCTAssertEqual(all.last?.failure?.code, SQLiteError.ioError, "a commit whose sync failed is not acknowledged")
        XCTAssertEqual(all.last?.highestSeqByOrigin, [:])
        XCTAssertEqual(shared.done.failures, 1)
        XCTAssertEqual(writer.pendingBytes, 0)
        try await writer.close()
    }

    /// A writer on a gated shared sync, and the number of commits it has reported.
    private func gatedWriter() throws -> (GatedSync, JournalWriter, NIOLockedValueBox<Int>) {
        let gated = GatedSync()
        let shared = try SharedSync(directory: directory, sync: { gated.sync($0) })
        let reports = NIOLockedValueBox(0)
        let writer = try JournalWriter(path: directory + "/s.sqlite", limits: .init(), sharedSync: shared) { _ in
            reports.withLockedValue { $0 += 1 }
        }
        return (gated, writer, reports)
    }

    func testPerformRunsAfterTheReportsOfEarlierEventsAndReturnsAfterTheSyncThatFollowsItsWrite() async throws {
        let (gated, writer, reports) = try gatedWriter()
        _ = writer.append([record(seq: 1)])
        gated.started.wait()
        _ = writer.append([record(seq: 2)])
        let reportsSeenByBody = NIOLockedValueBox(-1)
        let perform = Task {
            try await writer.perform { file in
                reportsSeenByBody.withLockedValue { $0 = reports.withLockedValue { $0 } }
                var count: Int64 = 0
                try file.database.prepare("SELECT COUNT(*) FROM events").forEachRow { count = $0.int64(0) }
                return count
            }
        }
        // perform commits seq 2 at once (metadata follows every event appended before it in the file), but its body
        // waits for the reports of seqs 1 and 2, which wait for the gated sync. (Waiting a little can only hide a body
        // that runs too early, never fail one that waits.)
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertEqual(reportsSeenByBody.withLockedValue { $0 }, -1, "the body waits for the earlier commits' reports")
        gated.open()
        let seen = try await perform.value
        XCTAssertEqual(seen, 2, "seq 2 was committed before the body")
        XCTAssertEqual(reportsSeenByBody.withLockedValue { $0 }, 2, "both commits were reported before the body ran")
        XCTAssertEqual(reports.withLockedValue { $0 }, 2)
        try await writer.close()
    }

    /// The tail's disconnect marker is published through submit: it must follow the connection's last events.
    func testSubmitsBodyFollowsTheReportsOfTheEventsAppendedBeforeIt() throws {
        let (gated, writer, reports) = try gatedWriter()
        _ = writer.append([record(seq: 1)])
        gated.started.wait()
        _ = writer.append([record(seq: 2), record(seq: 3)])
        let seen = NIOLockedValueBox(-1)
        let ran = DispatchSemaphore(value: 0)
        writer.submit({ _ in
            seen.withLockedValue { $0 = reports.withLockedValue { $0 } }
            ran.signal()
        }, onFailure: { XCTFail("\($0)") })
        gated.open()
        XCTAssertEqual(ran.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(seen.withLockedValue { $0 }, 2, "the body ran after both commits' reports")
    }
}
