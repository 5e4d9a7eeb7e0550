import Foundation
import GroupCommit
import MuEvalWire
import WireProtocol
import XCTest

@testable import JournalStorage

/// A voice stream's layout as one file when its chunks carry absurd starts and parts (docs/STORAGE.md,
/// "Media"): silence stands in for lost chunks within a budget, and nothing traps or allocates without bound.
final class MediaLayoutTests: XCTestCase {
    private var directory: String!
    /// 16 kHz mono 16-bit: 32,000 bytes a second.
    private let byteRate = 32_000

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("media-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Writes one WAV stream whose chunk `part` starts at `start` and holds one second of samples.
    private func stream(_ chunks: [(part: Int64, start: Double)]) async throws -> (SessionReader, MediaStreamLayout) {
        let path = directory + "/s.sqlite"
        let writer = try JournalWriter(path: path, limits: .init(synchronous: .normal)) { _ in }
        let second = [UInt8](repeating: 1, count: byteRate)
        _ = writer.append(chunks.map { chunk in
            let bytes = chunk.part == 0 ? WAVFile.header(sampleRate: 16_000, dataBytes: nil) + second : second
            return JournalRecord(device: "d1", received: 0, content: .media(WireMedia(
                stream: "voice-1", format: .wav, part: chunk.part, start: chunk.start, duration: 1, seq: nil, bytes: bytes)), origin: 1)
        })
        try await writer.flush()
        try await writer.close()
        let reader = try SessionReader(path: path)
        return (reader, try XCTUnwrap(try reader.mediaLayout(device: "d1", stream: "voice-1")))
    }

    private func silence(_ layout: MediaStreamLayout) -> [Int64] {
        layout.pieces.filter { $0.row == nil }.map(\.length)
    }

    func testALostChunkBecomesSilenceAsLongAsItsGap() async throws {
        let (_, layout) = try await stream([(0, 1_700_000_000), (2, 1_700_000_002)])
        XCTAssertEqual(silence(layout), [Int64(byteRate)], "chunk 1's second")
    }

    /// 3×10⁸ s between two chunks (a clock gone wrong, a crafted stream): the gap is missing, not
    /// 9.6 TB of zeros; the file is the chunks that came.
    func testAGapOfYearsIsMissingNotSilence() async throws {
        let (reader, layout) = try await stream([(0, 1_700_000_000), (2, 2_000_000_000), (3, .infinity), (5, -.infinity)])
        XCTAssertEqual(silence(layout), [])
        XCTAssertEqual(layout.totalBytes, Int64(44 + 4 * byteRate))
        var written = 0
        try reader.writeMedia(layout) { written += $0.count }
        XCTAssertEqual(Int64(written), layout.totalBytes)
    }

    /// Silence for lost chunks adds up to at most an hour per stream: the file stays bounded whatever the gaps.
    func testSilenceHasAnHourBudgetAndIsWrittenAMebibyteAtATime() async throws {
        let start = 1_700_000_000.0
        let (reader, layout) = try await stream([(0, start), (2, start + 1 + 2_400), (4, start + 2 + 4_800)])
        XCTAssertEqual(silence(layout), [Int64(2_400 * byteRate)], "40 minutes fit the budget, the next 40 do not")
        var largest = 0, total = 0
        try reader.writeMedia(layout) { bytes in
            largest = max(largest, bytes.count)
            total += bytes.count
        }
        XCTAssertEqual(Int64(total), layout.totalBytes)
        XCTAssertLessThanOrEqual(largest, 1 << 20, "no piece of silence is held whole")
    }

    /// Parts at the ends of Int64 (a file recorded before parts were checked at the edge): no overflow
    /// in `part + 1`, and no count of lost chunks made up from them.
    func testPartsAtTheEndsOfInt64() async throws {
        let (reader, layout) = try await stream([(0, 1_700_000_000), (.max - 1, 1_700_000_001), (.max, 1_700_000_002)])
        XCTAssertEqual(layout.pieces.count, 3)
        let record = try XCTUnwrap(try reader.mediaStreams().first)
        XCTAssertEqual(record.parts, 3)
        XCTAssertEqual(record.missingParts, 0)
        XCTAssertEqual(SessionReader.missingParts(highest: 4, stored: 3), 2)
    }

    func testSilenceOfAGapIsWholeFramesWithinItsBudget() throws {
        let header = try XCTUnwrap(WAVHeader(WAVFile.header(sampleRate: 16_000, dataBytes: nil)))
        XCTAssertEqual(header.silence(seconds: 0.50001, budget: 3_600), 16_000, "whole 2-byte frames")
        for seconds in [Double.nan, .infinity, -1, 0, 3_601, 1e300] {
            XCTAssertEqual(header.silence(seconds: seconds, budget: 3_600), 0, "\(seconds)")
        }
        XCTAssertEqual(header.silence(seconds: 10, budget: 5), 0, "over what is left of the budget")
    }
}
