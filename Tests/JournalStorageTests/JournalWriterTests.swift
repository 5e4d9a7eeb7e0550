import Foundation
import GroupCommit
import MuEvalWire
import NIOConcurrencyHelpers
import WireProtocol
import XCTest

@testable import JournalStorage
import SessionModel

final class JournalWriterTests: XCTestCase {
    private var directory: String!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func record(seq: Int64?, device: String = "d1", origin: UInt64 = 1, blobs: [Blob] = [], timestamp: Double? = 100) -> JournalRecord {
        let payload = #"{"class":"UserInputEvent","seq":\#(seq.map(String.init) ?? "null")}"#
        return JournalRecord(device: device, received: 200,
                             event: WireEvent(eventClass: "UserInputEvent", timestamp: timestamp, seq: seq, sensor: nil,
                                              payload: Array(payload.utf8), blobs: blobs),
                             origin: origin)
    }

    func testGroupCommitStoresEveryEventInOrderAndReportsHighestSeqPerOrigin() async throws {
        let reports = NIOLockedValueBox<[CommitReport]>([])
        let writer = try JournalWriter(path: directory + "/s.sqlite", limits: .init(synchronous: .normal)) { report in
            reports.withLockedValue { $0.append(report) }
        }
        for seq in 1...1000 {
            _ = writer.append([record(seq: Int64(seq), origin: UInt64(seq % 2))])
        }
        try await writer.flush()
        let all = reports.withLockedValue { $0 }
        XCTAssertEqual(all.reduce(0) { $0 + $1.records.count }, 1000)
        XCTAssertLessThan(all.count, 1000, "events should be committed in batches")
        XCTAssertEqual(all.compactMap { $0.highestSeqByOrigin[0] }.max(), 1000)
        XCTAssertEqual(all.compactMap { $0.highestSeqByOrigin[1] }.max(), 999)
        let events = try SessionReader(path: directory + "/s.sqlite").events()
        XCTAssertEqual(events.map(\.seq), (1...1000).map { Int64($0) })
        XCTAssertEqual(events.map(\.id), (1...1000).map { Int64($0) })
        try await writer.close()
    }

    /// SQLite's own 2,000 KiB filled up in every open session and stayed: 2 MB per session of a study's many.
    func testTheSessionFilesPageCacheIsTheConfiguredOne() async throws {
        for (limits, expected) in [(JournalWriterLimits(synchronous: .normal), -Int64(SessionFile.defaultCacheKiB)),
                                   (JournalWriterLimits(synchronous: .normal, cacheKiB: 64), -64)] {
            let writer = try JournalWriter(path: directory + "/cache-\(expected).sqlite", limits: limits) { _ in }
            let cacheSize = try await writer.perform { file in
                var size: Int64 = 0
                try file.database.prepare("PRAGMA cache_size").forEachRow { size = $0.int64(0) }
                return size
            }
            XCTAssertEqual(cacheSize, expected)
            XCTAssertEqual(SessionFile.defaultCacheKiB, 512)
            try await writer.close()
        }
    }

    func testACommitDelayGathersWhatArrivesMeanwhileIntoOneTransaction() async throws {
        let reports = NIOLockedValueBox<[CommitReport]>([])
        // A long delay, so that the appends below certainly fall within it.
        let writer = try JournalWriter(path: directory + "/s.sqlite", limits: .init(commitDelay: .seconds(1))) { report in
            reports.withLockedValue { $0.append(report) }
        }
        for seq in 1...50 { _ = writer.append([record(seq: Int64(seq))]) }
        XCTAssertTrue(reports.withLockedValue { $0.isEmpty }, "nothing is committed before the delay")
        try await writer.flush()
        XCTAssertEqual(reports.withLockedValue { $0.map(\.records.count) }, [50])
        try await writer.close()
    }

    func testDuplicateDeviceSeqIsStoredOnceButEventsWithoutSeqAlwaysStored() async throws {
        let reports = NIOLockedValueBox<[CommitReport]>([])
        let writer = try JournalWriter(path: directory + "/s.sqlite", limits: .init()) { report in
            reports.withLockedValue { $0.append(report) }
        }
        _ = writer.append([record(seq: 1), record(seq: 1), record(seq: 1, device: "d2"), record(seq: nil), record(seq: nil)])
        try await writer.flush()
        let rowIDs = reports.withLockedValue { $0.flatMap(\.rowIDs) }
        XCTAssertEqual(rowIDs.map { $0 != nil }, [true, false, true, true, true])
        XCTAssertEqual(try SessionReader(path: directory + "/s.sqlite").eventCount(), 4)
        try await writer.close()
    }

    func testIndexesAreBuiltAtCloseAndDuplicatesAreStillFoundAfterReopening() async throws {
        let path = directory + "/s.sqlite"
        let indexes = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' ORDER BY name"
        let allIndexes = "events_class\nevents_device_seq\nevents_received\nevents_timestamp\n"
        var writer = try JournalWriter(path: path, limits: .init()) { _ in }
        _ = writer.append((1...100).map { record(seq: Int64($0)) })
        try await writer.flush()
        XCTAssertEqual(try runSQLite(path, indexes), "", "a recording file has no indexes to keep up")
        try await writer.close()
        XCTAssertEqual(try runSQLite(path, indexes), allIndexes)

        // Reopened (as muevald does with a session that was open when it stopped): the seqs
        // already in the file are duplicates, new ones are not.
        let reports = NIOLockedValueBox<[CommitReport]>([])
        writer = try JournalWriter(path: path, limits: .init()) { report in reports.withLockedValue { $0.append(report) } }
        _ = writer.append([record(seq: 50), record(seq: 101), record(seq: 100, device: "d2"), record(seq: 101)])
        try await writer.close()
        XCTAssertEqual(reports.withLockedValue { $0.flatMap(\.rowIDs) }.map { $0 != nil }, [false, true, true, false])
        XCTAssertEqual(try runSQLite(path, indexes), allIndexes)
        XCTAssertEqual(try runSQLite(path, "SELECT COUNT(*), COUNT(DISTINCT device || '/' || seq) FROM events"), "102|102\n")
    }

    func testSeqLedgerKeepsScatteredAndNegativeSeqsApartAndForgetsRemovedOnes() {
        var ledger = SeqLedger()
        let seqs: [Int64] = [0, 63, 64, -1, -64, -65, .max, .min, 1 << 40, 7]
        XCTAssertEqual(seqs.map { ledger.insert(device: "a", seq: $0) }, Array(repeating: true, count: seqs.count))
        XCTAssertEqual(seqs.map { ledger.insert(device: "a", seq: $0) }, Array(repeating: false, count: seqs.count))
        XCTAssertTrue(ledger.insert(device: "b", seq: 7), "each device has its own seqs")
        XCTAssertTrue(ledger.insert(device: "a", seq: 62))
        ledger.remove(device: "a", seq: 63)
        XCTAssertTrue(ledger.insert(device: "a", seq: 63), "a removed seq can be stored again")
        XCTAssertFalse(ledger.insert(device: "a", seq: 62), "removing one seq leaves its neighbours")
    }

    func testMissingTimestampUsesReceiveTimeAndIsMarked() async throws {
        let writer = try JournalWriter(path: directory + "/s.sqlite", limits: .init()) { _ in }
        _ = writer.append([record(seq: 1, timestamp: nil), record(seq: 2, timestamp: 50)])
        try await writer.flush()
        let events = try SessionReader(path: directory + "/s.sqlite").events()
        XCTAssertEqual(events.map(\.timestamp), [200, 50])
        XCTAssertEqual(events.map(\.timestampEstimated), [true, false])
        try await writer.close()
    }

    func testIdenticalBinaryDataIsStoredOnce() async throws {
        let writer = try JournalWriter(path: directory + "/s.sqlite", limits: .init()) { _ in }
        let screenshot = Blob(sha256: String(repeating: "ab", count: 32), bytes: Array(repeating: 7, count: 48_000))
        _ = writer.append((1...10).map { record(seq: Int64($0), blobs: [screenshot]) })
        try await writer.flush()
        let reader = try SessionReader(path: directory + "/s.sqlite")
        XCTAssertEqual(try reader.blob(sha256: screenshot.sha256), screenshot.bytes)
        let count = try runSQLite(directory + "/s.sqlite", "SELECT COUNT(*), SUM(size) FROM blobs")
        XCTAssertEqual(count, "1|48000\n")
        try await writer.close()
    }

    func testAppendReportsOverloadAboveTheLimitAndResumesWhenDrained() async throws {
        let gate = DispatchSemaphore(value: 0)
        let writer = try JournalWriter(path: directory + "/s.sqlite", limits: .init(maxPendingBytes: 10_000)) { _ in
            gate.wait()  // hold the first commit, so that the queue fills
        }
        XCTAssertEqual(writer.append([record(seq: 1)]), .accepted)
        var admissions: [JournalWriter.Admission] = []
        for seq in 2...200 { admissions.append(writer.append([record(seq: Int64(seq))])) }
        XCTAssertEqual(admissions.last, .overloaded)
        let resumed = expectation(description: "resumed")
        let pendingAtResume = NIOLockedValueBox(Int.max)
        writer.whenDrained {
            pendingAtResume.withLockedValue { $0 = writer.pendingBytes }
            resumed.fulfill()
        }
        XCTAssertEqual(pendingAtResume.withLockedValue { $0 }, .max, "not resumed while the queue is full")
        for _ in 0..<400 { gate.signal() }
        await fulfillment(of: [resumed], timeout: 10)
        XCTAssertLessThanOrEqual(pendingAtResume.withLockedValue { $0 }, 5_000, "resumed once under half the limit")
        try await writer.close()
        XCTAssertEqual(try SessionReader(path: directory + "/s.sqlite").eventCount(), 200)
        XCTAssertEqual(writer.append([record(seq: 999)]), .closed)
    }

    func testACommitTakesAtMostAQuarterOfTheQueueLimitSoThatReadingGoesOnMeanwhile() async throws {
        let gate = DispatchSemaphore(value: 0)
        let sizes = NIOLockedValueBox<[Int]>([])
        let limit = 40_000
        let writer = try JournalWriter(path: directory + "/s.sqlite", limits: .init(maxPendingBytes: limit)) { report in
            sizes.withLockedValue { $0.append(report.records.count) }
            if sizes.withLockedValue({ $0.count }) == 1 { gate.wait() }  // hold the first commit while the queue fills
        }
        let chunk = (0..<10).map { record(seq: Int64($0)) }
        let chunkBytes = chunk.reduce(0) { $0 + $1.footprint }
        _ = writer.append(chunk)
        for n in 1..<20 { _ = writer.append((0..<10).map { record(seq: Int64(n * 10 + $0)) }) }
        gate.signal()
        try await writer.close()
        let committed = sizes.withLockedValue { $0 }
        XCTAssertEqual(committed.reduce(0, +), 200)
        XCTAssertLessThanOrEqual(committed.max() ?? 0, (limit / 4 / chunkBytes) * 10, "batches of \(committed)")
        XCTAssertEqual(try SessionReader(path: directory + "/s.sqlite").events().map(\.seq), (0..<200).map { Int64($0) })
    }

    /// An observer's note waits for its own commit and learns its row id, among device events appended around it.
    func testAnAppendsCompletionGetsTheRowIDsOfItsOwnRecordsAfterTheCommit() async throws {
        let committed = NIOLockedValueBox(false)
        let writer = try JournalWriter(path: directory + "/s.sqlite", limits: .init(synchronous: .normal)) { _ in
            committed.withLockedValue { $0 = true }
        }
        _ = writer.append([record(seq: 1), record(seq: 2)])
        let rowIDs = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Int64?], Error>) in
            // seq 2 again: a duplicate, which gets no row.
            XCTAssertEqual(writer.append([record(seq: 2), record(seq: nil)]) { result in
                XCTAssertTrue(committed.withLockedValue { $0 }, "the commit report comes first")
                continuation.resume(with: result)
            }, .accepted)
        }
        XCTAssertEqual(rowIDs, [nil, 3])
        _ = writer.append([record(seq: 3)])
        try await writer.close()
        XCTAssertEqual(writer.append([record(seq: nil)]) { _ in XCTFail("a closed writer calls no completion") }, .closed)
        XCTAssertEqual(try SessionReader(path: directory + "/s.sqlite").events().map(\.seq), [1, 2, nil, 3])
    }

    /// How a note made during replay is put on the device's clock: the newest device-timestamped event, notes left out.
    func testClockOffsetIsTheNewestDeviceTimestampedEventsNotesLeftOut() async throws {
        let writer = try JournalWriter(path: directory + "/s.sqlite", limits: .init(synchronous: .normal)) { _ in }
        let path = directory + "/s.sqlite"
        XCTAssertNil(try SessionReader(path: path).clockOffset())
        _ = writer.append([record(seq: 1, timestamp: 150), record(seq: 2, timestamp: 170), record(seq: 3, timestamp: nil)])
        var note = record(seq: nil, timestamp: 5)
        if case .event(var event) = note.content {
            event.eventClass = ObserverNote.eventClass
            note.content = .event(event)
        }
        _ = writer.append([note])
        try await writer.close()
        XCTAssertEqual(try SessionReader(path: path).clockOffset(), 30)
    }

    func testSessionFileIsPrivateAndCarriesItsMetadataAndGaps() async throws {
        let catalog = try Catalog(directory: directory + "/data")
        let session = try catalog.createSession(name: "jack", testUser: "Jack", notes: nil, sensors: ["UserInputEvent"],
                                                boundDevice: "iphone", now: 1000)
        let writer = try JournalWriter(path: session.path, limits: .init()) { _ in }
        try await writer.perform { file in
            try file.writeMetadata(session)
            try file.openGap(at: 1010, reason: "test")
            try file.closeGaps(at: 1020)
        }
        try await writer.close()
        let attributes = try FileManager.default.attributesOfItem(atPath: session.path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let directoryAttributes = try FileManager.default.attributesOfItem(atPath: directory + "/data")
        XCTAssertEqual((directoryAttributes[.posixPermissions] as? NSNumber)?.intValue, 0o700)
        let reader = try SessionReader(path: session.path)
        XCTAssertEqual(try reader.session()?.name, "jack")
        XCTAssertEqual(try reader.session()?.sensors, ["UserInputEvent"])
        XCTAssertEqual(try reader.gaps(), [SessionGap(start: 1010, end: 1020, reason: "test")])
    }

    func testCatalogAllocatesIdsListsAndDeletes() throws {
        let catalog = try Catalog(directory: directory + "/data")
        let first = try catalog.createSession(name: nil, testUser: nil, notes: nil, sensors: [], boundDevice: nil, now: 1)
        let second = try catalog.createSession(name: "b", testUser: "Jill", notes: "n", sensors: [], boundDevice: "x", now: 2)
        XCTAssertEqual([first.id, second.id], [1, 2])
        XCTAssertEqual(first.name, "session-1")
        XCTAssertEqual(try catalog.sessions().map(\.name), ["session-1", "b"])
        _ = FileManager.default.createFile(atPath: first.path, contents: Data("x".utf8))
        try catalog.deleteSession(first)
        XCTAssertFalse(FileManager.default.fileExists(atPath: first.path))
        XCTAssertEqual(try catalog.sessions().map(\.id), [2])
        // Reopening keeps what was written.
        XCTAssertEqual(try Catalog(directory: directory + "/data").session(id: 2)?.testUser, "Jill")
    }

    func testJSONLinesExportSplicesThePayloadUnchanged() async throws {
        let writer = try JournalWriter(path: directory + "/s.sqlite", limits: .init()) { _ in }
        _ = writer.append([record(seq: 7)])
        try await writer.close()
        var output: [UInt8] = []
        try JournalExporter(path: directory + "/s.sqlite", format: .jsonl).export { output += $0 }
        XCTAssertEqual(String(decoding: output, as: UTF8.self),
                       #"{"class":"UserInputEvent","device":"d1","id":1,"received":200,"seq":7,"timestamp":100,"timestampEstimated":false,"payload":{"class":"UserInputEvent","seq":7}}"# + "\n")
    }

    private func runSQLite(_ path: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path, sql]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

