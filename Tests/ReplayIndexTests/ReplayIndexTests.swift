@testable import ReplayIndex
import Foundation
import GroupCommit
import JournalStorage
import MuEvalWire
import ReportCritique
import SessionModel
import Testing

/// The replay index file: written in one pass, read back by its head and chunks, whatever the session holds.
@Suite struct ReplayIndexTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("replay-index-\(UUID().uuidString.prefix(8))").path

    /// A session file holding `events` (class, device time, payload fields), as muevald stores them.
    func session(_ events: [(String, Double, String)]) async throws -> SessionRecord {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/session.sqlite"
        let writer = try JournalWriter(path: path, limits: .init()) { _ in }
        for (seq, (eventClass, time, fields)) in events.enumerated() {
            let payload = #"{"class":"\#(eventClass)"\#(fields.isEmpty ? "" : "," + fields)}"#
            _ = writer.append([JournalRecord(device: "d1", received: 1_000,
                                             event: WireEvent(eventClass: eventClass, timestamp: time, seq: Int64(seq + 1), sensor: nil,
                                                              payload: Array(payload.utf8), blobs: []),
                                             origin: 1)])
        }
        try await writer.flush()
        try await writer.close()
        return SessionRecord(id: 7, uuid: "u7", name: "s7", created: 500, path: path, events: Int64(events.count))
    }

    func written(_ record: SessionRecord, problems: [ProblemMark] = []) throws -> ReplayIndexFile {
        let path = directory + "/" + ReplayIndex.fileName
        try ReplayIndex.write(record: record, problems: problems, to: path)
        return try #require(try ReplayIndexFile(path: path))
    }

    func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func absurdTimesAndNumbersAreLeftOutAndTheFileStaysJSON() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = try await session([
            ("UserInputEvent", 1e300, #""type":"touch","x":1,"y":2"#),
            ("UserInputEvent", -1e18, #""type":"touch","x":1,"y":2"#),
            ("UserInputEvent", 1e18, #""type":"touch","x":1,"y":2"#),
            ("UserInputEvent", 1_000, #""type":"touch","x":1e300,"y":2,"phase":"began""#),
            ("UserInterfaceEvent", 1_001, #""type":"viewDidAppear","view":"Posts""#),
            ("ObserverNote", 1_002, #""text":"hesitates","kind":"problem""#),
            // 2099: the latest plausible time, a span of 129 years from the first.
            ("UserInputEvent", 4_000_000_000, #""type":"touch","x":10,"y":20,"phase":"ended""#),
        ])
        let file = try written(record, problems: [ProblemMark(t: .nan, title: "nan"), ProblemMark(t: 1e300, title: "far"),
                                                  ProblemMark(t: 1_001, title: "real")])
        #expect(file.preamble == .init(version: ReplayIndex.version, sessionEvents: 7, headBytes: file.preamble.headBytes))
        let head = try file.head()
        #expect(head.events == 4)
        #expect(head.start == 1_000)
        #expect(head.end == 4_000_000_000)
        #expect(head.problems.map(\.title) == ["real"])
        #expect(head.notes.map(\.text) == ["hesitates"])
        #expect(head.chunks.count == 1)
        let chunk = try file.chunk(head.chunks[0])
        #expect(chunk.t == [1_000, 1_001, 1_002, 4_000_000_000])
        #expect(chunk.touches.map(\.x) == [10], "a touch at an absurd coordinate is missing")
        #expect(chunk.views.map(\.view) == ["Posts"])
        // The one JSON for scripts parses (no NaN or infinity in it) and says the same.
        let whole = try json(try file.wholeJSON())
        #expect((whole["events"] as? [String: Any])?["id"] as? [Int] == [4, 5, 6, 7])
        #expect(whole["end"] as? Double == 4_000_000_000)
    }

    @Test func anEmptySessionHasAHeadAndNoChunks() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try written(try await session([]))
        let head = try file.head()
        #expect(head.events == 0)
        #expect(head.chunks.isEmpty)
        #expect(head.start == 500, "an empty session starts when it was made")
        #expect(head.end == 500)
        #expect(file.size == file.chunksOffset)
        let whole = try json(try file.wholeJSON())
        #expect((whole["events"] as? [String: Any])?["t"] as? [Double] == [])
    }

    @Test func chunksHoldEveryEventOnceInOrderAndWhatWasShownBeforeThem() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let count = ReplayIndex.eventsPerChunk * 2 + 100
        let record = try await session((0..<count).map { index in
            index % 100 == 0 ? ("UserInterfaceEvent", 1_000 + Double(index), #""type":"viewDidAppear","view":"V\#(index)""#)
                : ("UserInputEvent", 1_000 + Double(index), #""type":"touch","x":1,"y":2"#)
        })
        let file = try written(record)
        let head = try file.head()
        #expect(head.chunks.map(\.count) == [ReplayIndex.eventsPerChunk, ReplayIndex.eventsPerChunk, 100])
        #expect(head.chunks.map(\.first) == [0, Int64(ReplayIndex.eventsPerChunk), Int64(ReplayIndex.eventsPerChunk * 2)])
        var ids: [Int64] = []
        var offset: Int64 = 0
        for entry in head.chunks {
            #expect(entry.offset == offset, "chunks follow each other")
            offset += entry.bytes
            let chunk = try file.chunk(entry)
            #expect(chunk.first == entry.first)
            #expect(chunk.t.first == entry.t)
            #expect(Set(chunk.classes) == ["UserInputEvent", "UserInterfaceEvent"])
            ids += chunk.id
        }
        #expect(file.chunksOffset + offset == file.size)
        #expect(ids == (1...Int64(count)).map { $0 })
        // The second chunk begins at event 1024, after the view of event 1000.
        let second = try json(try file.descriptor.read(0..<file.size).dropFirst(ReplayIndex.preambleBytes).prefix(Int(file.preamble.headBytes)).map { $0 })
        let entry = try #require((second["chunks"] as? [[String: Any]])?[1])
        #expect((entry["view"] as? [String: Any])?["view"] as? String == "V1000")
    }

    @Test func preamblesAreReadTotally() throws {
        let good = ReplayIndex.preamble(.init(version: 2, sessionEvents: 100_001, headBytes: 12_345))
        #expect(good.count == ReplayIndex.preambleBytes)
        #expect(ReplayIndex.preamble(from: good) == .init(version: 2, sessionEvents: 100_001, headBytes: 12_345))
        func line(_ text: String) -> [UInt8] {
            Array(text.utf8) + [UInt8](repeating: UInt8(ascii: " "), count: max(0, 63 - text.utf8.count)) + [UInt8(ascii: "\n")]
        }
        for bad in ["mueval-replay-index 2 1 99999999999999999999999999", "mueval-replay-index 2 -1 5", "mueval-replay-index 2 1e300 5",
                    "mueval-replay-index 2 nan 5", "something-else 2 1 5", "mueval-replay-index 2 1", "{\"session\":{}}"] {
            #expect(ReplayIndex.preamble(from: line(bad)) == nil, "\(bad)")
        }
        #expect(ReplayIndex.preamble(from: Array(good.prefix(10))) == nil)
    }

    @Test func aFileOfTheFirstVersionOrAHeadBeyondItsEndIsNotRead() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + ReplayIndex.fileName
        // The index's first version was one JSON.
        try Data(#"{"session":{},"events":{"id":[]}}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(try ReplayIndexFile(path: path) == nil)
        try Data(ReplayIndex.preamble(.init(version: 2, sessionEvents: 1, headBytes: Int64.max))).write(to: URL(fileURLWithPath: path))
        #expect(try ReplayIndexFile(path: path) == nil)
        try Data(ReplayIndex.preamble(.init(version: 1, sessionEvents: 1, headBytes: 0))).write(to: URL(fileURLWithPath: path))
        #expect(try ReplayIndexFile(path: path) == nil)
        #expect(try ReplayIndexFile(path: directory + "/absent") == nil)
    }
}
