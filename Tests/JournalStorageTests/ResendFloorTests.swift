import Foundation
import GroupCommit
import MuEvalWire
import NIOConcurrencyHelpers
import XCTest

@testable import JournalStorage

/// A device's next session after one stopped for its drop takes that session's highest seq of the device
/// as stored (docs/SESSION-CORE.md, "Drops"): the ledger's floor, and what a file does with it.
final class ResendFloorTests: XCTestCase {
    func testTheHighestSeqIsFoundWhateverTheOrderNegativesAndFloorIncluded() {
        var ledger = SeqLedger()
        XCTAssertNil(ledger.highest(of: "a"), "nothing recorded")
        for seq: Int64 in [7, 130, 64, 63] { _ = ledger.insert(device: "a", seq: seq) }
        _ = ledger.insert(device: "b", seq: 1 << 40)
        XCTAssertEqual(ledger.highest(of: "a"), 130)
        XCTAssertEqual(ledger.highest(of: "b"), 1 << 40, "each device its own")
        ledger.remove(device: "a", seq: 130)
        XCTAssertEqual(ledger.highest(of: "a"), 64, "a removed seq is not stored")
        var negative = SeqLedger()
        for seq: Int64 in [-65, -1, -64] { _ = negative.insert(device: "n", seq: seq) }
        XCTAssertEqual(negative.highest(of: "n"), -1)
        _ = negative.insert(device: "x", seq: .max)
        XCTAssertEqual(negative.highest(of: "x"), .max)
        negative.setFloor(500, of: "n")
        XCTAssertEqual(negative.highest(of: "n"), 500, "the floor counts: the next session inherits it")
    }

    func testSeqsAtOrBelowTheFloorAreDuplicatesAndTheRestAreStoredOnce() {
        var ledger = SeqLedger()
        ledger.setFloor(10, of: "a")
        ledger.setFloor(5, of: "a")
        XCTAssertEqual([3, 10, 11, 11].map { ledger.insert(device: "a", seq: $0) }, [false, false, true, false],
                       "the higher floor stays; above it, stored once")
        XCTAssertTrue(ledger.insert(device: "b", seq: 3), "another device has no floor")
        XCTAssertEqual(ledger.highest(of: "a"), 11)
    }

    func testAFileWithAFloorAcknowledgesTheResentSeqsWithoutStoringThem() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("floor-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let reports = NIOLockedValueBox<[CommitReport]>([])
        let writer = try JournalWriter(path: directory + "/s.sqlite", limits: .init(synchronous: .normal)) { report in
            reports.withLockedValue { $0.append(report) }
        }
        try await writer.perform { $0.setResendFloor(4, of: "phone") }
        let records = (3...6).map { seq in
            JournalRecord(device: "phone", received: 200,
                          event: WireEvent(eventClass: "UserInputEvent", timestamp: 100, seq: Int64(seq), sensor: nil,
                                           payload: Array(#"{"class":"UserInputEvent"}"#.utf8), blobs: []),
                          origin: 1)
        }
        _ = writer.append(records)
        try await writer.flush()
        let all = reports.withLockedValue { $0 }
        XCTAssertEqual(all.flatMap(\.rowIDs).map { $0 != nil }, [false, false, true, true])
        XCTAssertEqual(all.compactMap { $0.highestSeqByOrigin[1] }.max(), 6, "the ack covers the resent seqs too")
        let highest = try await writer.perform { $0.highestSeq(of: "phone") }
        XCTAssertEqual(highest, 6)
        try await writer.close()
        XCTAssertEqual(try SessionReader(path: directory + "/s.sqlite").events().map(\.seq), [5, 6])
    }
}
