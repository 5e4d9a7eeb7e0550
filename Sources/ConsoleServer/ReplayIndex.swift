internal import Foundation
internal import Glibc
internal import JournalStorage
internal import MuEvalWire
internal import SessionModel
internal import ReportCritique
internal import WireProtocol

extension SessionReader {
    /// The device whose screen the pages draw: the session's own, else the last one seen in the file.
    func device(of record: SessionRecord) throws -> DeviceRecord? {
        let devices = try devices()
        return devices.last { $0.id == record.device } ?? devices.last
    }
}

/// What the Replay page plays a session from: a file the page reads by seeking (docs/CONSOLE.md, "The
/// replay index"), written in one pass over the journal in memory bounded by a chunk, whatever the
/// session's length or time span.
///
///     preamble  64 bytes of ASCII: `mueval-replay-index VERSION SESSION_EVENTS HEAD_BYTES`, space-padded, "\n"
///     head      JSON: session, device, start, end, events, classes, chunks (offset, bytes, first event,
///               count, times, the screenshot and view in effect where the chunk begins), notes, problems, gaps
///     chunks    JSON each: `first`, the chunk's own `classes`, the columns `id`, `t`, `c` (into `classes`)
///               and `s` (one-line summary), and the chunk's screenshots, touches and views
///
/// A chunk's `offset` counts from the end of the head. Events are in storage order, as `muevalctl
/// events` lists them; those at no plausible time are left out (they have no place on the scrubber).
/// Payloads and screenshot bytes stay on the server until the page asks for them.
enum ReplayIndex {
    /// Bumped whenever the layout changes: a file of another version is made again.
    static let version = 2
    static let fileName = "replay.index"
    static let preambleBytes = 64
    /// A chunk closes after this many events or bytes, whichever comes first: what the writer holds, and
    /// what the page fetches to draw a moment.
    static let eventsPerChunk = 1024
    static let chunkBytes = 256 << 10
    /// Class names the head lists for the page's filter; a session with more (a device's own) lists the
    /// first ones and says so (`classesComplete`), each chunk names its own.
    static let maxClassNames = 1000

    struct Preamble: Equatable {
        var version: Int
        /// The session's event count when the file was written (its freshness), not only the indexed ones.
        var sessionEvents: Int64
        var headBytes: Int64
    }

    static func preamble(_ preamble: Preamble) -> [UInt8] {
        var line = Array("mueval-replay-index \(preamble.version) \(preamble.sessionEvents) \(preamble.headBytes)".utf8)
        line += [UInt8](repeating: UInt8(ascii: " "), count: max(0, preambleBytes - 1 - line.count))
        return line + [UInt8(ascii: "\n")]
    }

    /// The preamble of a file, or nil when the bytes are not one of any version this reader knows the shape of.
    static func preamble(from bytes: [UInt8]) -> Preamble? {
        guard bytes.count >= preambleBytes, bytes[preambleBytes - 1] == UInt8(ascii: "\n") else { return nil }
        let words = String(decoding: bytes[..<(preambleBytes - 1)], as: UTF8.self).split(separator: " ")
        guard words.count == 4, words[0] == "mueval-replay-index",
              words[1...].allSatisfy({ $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }),
              let version = Int(words[1]), let events = Int64(words[2]), let head = Int64(words[3]) else { return nil }
        return Preamble(version: version, sessionEvents: events, headBytes: head)
    }

    // MARK: Writing

    /// Writes the index of `record` to `path` (replacing it atomically once complete).
    static func write(record: SessionRecord, problems: [ProblemMark], to path: String) throws {
        let stem = "\(path).tmp-\(UUID().uuidString)"
        let chunks = try Spool(path: stem + "-chunks")
        let table = try Spool(path: stem + "-table")
        let notes = try Spool(path: stem + "-notes")
        defer { for spool in [chunks, table, notes] { spool.remove() } }

        let reader = try SessionReader(path: record.path)
        let ranges = ValueRanges.default
        // Values out of their range are missing here as in analysis (docs/REPORTS.md, "Absurd numbers"),
        // and JSONEncoder refuses what is not finite.
        let device = try reader.device(of: record).map { device in
            var device = device
            device.screenWidth = ranges.size(device.screenWidth)
            device.screenHeight = ranges.size(device.screenHeight)
            device.screenScale = device.screenScale?.finite
            return device
        }
        let gaps = try reader.gaps().compactMap { gap in
            ranges.time(gap.start).map { SessionGap(start: $0, end: ranges.time(gap.end), reason: gap.reason) }
        }
        let problems = problems.filter { ranges.isPlausible(time: $0.t) }

        var chunk = Chunk(first: 0)
        var classNames: [String] = []
        var knownClassNames: Set<String> = []
        var indexed: Int64 = 0
        var start = Double.infinity, end = -Double.infinity
        // What a chunk begins with: the screenshot and view shown at its first event.
        var shot: [UInt8]?, view: [UInt8]?

        func close() throws {
            guard chunk.count > 0 else { return }
            let bytes = chunk.json()
            table.separate()
            table.append(#"{"offset":"#)
            table.append(integer: chunks.count)
            table.append(#","bytes":"#)
            table.append(integer: Int64(bytes.count))
            table.append(#","first":"#)
            table.append(integer: chunk.first)
            table.append(#","count":"#)
            table.append(integer: Int64(chunk.count))
            table.append(#","t":"#)
            table.append(number: chunk.start)
            table.append(#","end":"#)
            table.append(number: chunk.end)
            table.append(#","screenshot":"#)
            table.append(bytes: chunk.shotBefore ?? Array("null".utf8))
            table.append(#","view":"#)
            table.append(bytes: chunk.viewBefore ?? Array("null".utf8))
            table.append("}")
            try table.flushIfFull()
            try chunks.write(bytes)
            chunk = Chunk(first: indexed)
        }

        try reader.forEachEvent { event in
            // An event at no plausible time has no place on the scrubber.
            guard ranges.isPlausible(time: event.timestamp) else { return }
            if chunk.count == 0 { (chunk.shotBefore, chunk.viewBefore) = (shot, view) }
            indexed += 1
            start = min(start, event.timestamp)
            end = max(end, event.timestamp)
            if classNames.count < maxClassNames, knownClassNames.insert(event.eventClass).inserted { classNames.append(event.eventClass) }
            let payload = (try? TypedJSON.decodeLeavingBlobs(Array(event.payload.utf8))) ?? .dict([:])
            chunk.add(event, summary: PayloadSummary.line(eventClass: event.eventClass, payload: payload))

            switch event.eventClass {
            case EventClass.userInput.rawValue where payload["type"]?.string == "touch":
                guard let x = ranges.coordinate(payload["x"]?.number), let y = ranges.coordinate(payload["y"]?.number) else { break }
                var touch = Array(#"{"t":"#.utf8); JSONObject.number(event.timestamp, to: &touch)
                touch.append(contentsOf: #","x":"#.utf8); JSONObject.number(x, to: &touch)
                touch.append(contentsOf: #","y":"#.utf8); JSONObject.number(y, to: &touch)
                touch.append(contentsOf: #","phase":"#.utf8); JSONString.append(payload["phase"]?.string ?? "", to: &touch)
                touch.append(UInt8(ascii: "}"))
                chunk.touches.add(touch)
            case EventClass.userInterface.rawValue:
                if let blob = payload.screenshot {
                    var json = Array(#"{"t":"#.utf8); JSONObject.number(event.timestamp, to: &json)
                    json.append(contentsOf: #","sha":"#.utf8); JSONString.append(blob.sha256, to: &json)
                    json.append(contentsOf: #","event":"#.utf8); JSONObject.integer(event.id, to: &json)
                    json.append(UInt8(ascii: "}"))
                    chunk.screenshots.add(json)
                    shot = json
                }
                if let name = payload["view"]?.string, payload["type"]?.string == "viewDidAppear" {
                    var json = Array(#"{"t":"#.utf8); JSONObject.number(event.timestamp, to: &json)
                    json.append(contentsOf: #","view":"#.utf8); JSONString.append(name, to: &json)
                    json.append(UInt8(ascii: "}"))
                    chunk.views.add(json)
                    view = json
                }
            case ObserverNote.eventClass:
                notes.separate()
                notes.append(#"{"t":"#)
                notes.append(number: event.timestamp)
                notes.append(#","text":"#)
                notes.append(string: payload["text"]?.string ?? "")
                notes.append(#","kind":"#)
                notes.append(string: payload["kind"]?.string ?? "")
                notes.append(#","event":"#)
                notes.append(integer: event.id)
                notes.append("}")
                try notes.flushIfFull()
            default:
                break
            }
            if chunk.isFull { try close() }
        }
        try close()
        if start > end { start = record.started ?? record.created; end = start }

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var head: [UInt8] = Array(#"{"version":"#.utf8)
        JSONObject.integer(Int64(version), to: &head)
        head.append(contentsOf: #","session":"#.utf8); head.append(contentsOf: try encoder.encode(record))
        head.append(contentsOf: #","device":"#.utf8)
        head.append(contentsOf: try device.map { Array(try encoder.encode($0)) } ?? Array("null".utf8))
        head.append(contentsOf: #","start":"#.utf8); JSONObject.number(start, to: &head)
        head.append(contentsOf: #","end":"#.utf8); JSONObject.number(end, to: &head)
        head.append(contentsOf: #","events":"#.utf8); JSONObject.integer(indexed, to: &head)
        head.append(contentsOf: #","classes":"#.utf8); head.append(contentsOf: try encoder.encode(classNames))
        head.append(contentsOf: #","classesComplete":"#.utf8); JSONObject.bool(classNames.count < maxClassNames, to: &head)
        head.append(contentsOf: #","chunks":["#.utf8)
        var tail: [UInt8] = Array(#"],"problems":"#.utf8)
        tail.append(contentsOf: try encoder.encode(problems))
        tail.append(contentsOf: #","gaps":"#.utf8); tail.append(contentsOf: try encoder.encode(gaps))
        tail.append(contentsOf: #","notes":["#.utf8)
        let closing = Array("]}".utf8)
        let headBytes = Int64(head.count + tail.count + closing.count) + table.count + notes.count

        let whole = try Spool(path: stem)
        defer { whole.remove() }
        try whole.write(preamble(Preamble(version: version, sessionEvents: record.events, headBytes: headBytes)))
        try whole.write(head)
        try whole.copy(table)
        try whole.write(tail)
        try whole.copy(notes)
        try whole.write(closing)
        try whole.copy(chunks)
        try whole.finish()
        guard Glibc.rename(stem, path) == 0 else { throw ReplayIndexError("rename \(stem)", errno: errno) }
    }

    /// One chunk as it fills: its columns as JSON text (the element separators included).
    private struct Chunk {
        let first: Int64
        var count = 0
        var classes: [String: Int] = [:]
        var classNames: [String] = []
        var ids = Column(), times = Column(), classColumn = Column(), summaries = Column()
        var screenshots = Column(), touches = Column(), views = Column()
        var start = Double.infinity, end = -Double.infinity
        var shotBefore: [UInt8]?, viewBefore: [UInt8]?

        init(first: Int64) { self.first = first }

        var isFull: Bool {
            count >= ReplayIndex.eventsPerChunk
                || ids.bytes.count + times.bytes.count + summaries.bytes.count + screenshots.bytes.count + touches.bytes.count
                + views.bytes.count >= ReplayIndex.chunkBytes
        }

        mutating func add(_ event: StoredEvent, summary: String) {
            count += 1
            start = min(start, event.timestamp)
            end = max(end, event.timestamp)
            let classIndex: Int
            if let known = classes[event.eventClass] {
                classIndex = known
            } else {
                classIndex = classNames.count
                classes[event.eventClass] = classIndex
                classNames.append(event.eventClass)
            }
            ids.separate(); JSONObject.integer(event.id, to: &ids.bytes)
            times.separate(); JSONObject.number(event.timestamp, to: &times.bytes)
            classColumn.separate(); JSONObject.integer(Int64(classIndex), to: &classColumn.bytes)
            summaries.separate(); JSONString.append(summary, to: &summaries.bytes)
        }

        func json() -> [UInt8] {
            var json: [UInt8] = Array(#"{"first":"#.utf8)
            JSONObject.integer(first, to: &json)
            json.append(contentsOf: #","classes":["#.utf8)
            for (index, name) in classNames.enumerated() {
                if index > 0 { json.append(UInt8(ascii: ",")) }
                JSONString.append(name, to: &json)
            }
            for (name, column) in [("id", ids), ("t", times), ("c", classColumn), ("s", summaries), ("screenshots", screenshots),
                                   ("touches", touches), ("views", views)] {
                json.append(contentsOf: "],\"\(name)\":[".utf8)
                json.append(contentsOf: column.bytes)
            }
            json.append(contentsOf: "]}".utf8)
            return json
        }
    }

    private struct Column {
        var bytes: [UInt8] = []
        mutating func separate() { if !bytes.isEmpty { bytes.append(UInt8(ascii: ",")) } }
        mutating func add(_ element: [UInt8]) { separate(); bytes.append(contentsOf: element) }
    }
}

/// A file written through a small buffer (the replay index's parts before they are put together).
private final class Spool {
    let path: String
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var written: Int64 = 0
    private static let flushBytes = 64 << 10

    init(path: String) throws {
        self.path = path
        fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ReplayIndexError("open \(path)", errno: errno) }
    }

    deinit { Glibc.close(fd) }

    /// Bytes written so far, buffered ones included.
    var count: Int64 { written + Int64(buffer.count) }

    func separate() { if count > 0 { buffer.append(UInt8(ascii: ",")) } }
    func append(_ text: StaticString) { text.withUTF8Buffer { buffer.append(contentsOf: $0) } }
    func append(bytes: [UInt8]) { buffer.append(contentsOf: bytes) }
    func append(integer: Int64) { JSONObject.integer(integer, to: &buffer) }
    func append(number: Double) { JSONObject.number(number, to: &buffer) }
    func append(string: String) { JSONString.append(string, to: &buffer) }

    func flushIfFull() throws { if buffer.count >= Self.flushBytes { try flush() } }

    func write(_ bytes: [UInt8]) throws {
        buffer.append(contentsOf: bytes)
        try flushIfFull()
    }

    func flush() throws {
        try buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let count = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw ReplayIndexError("write \(path)", errno: errno)
                }
                offset += count
            }
        }
        written += Int64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Appends what `other` holds, a piece at a time.
    func copy(_ other: Spool) throws {
        try flush()
        try other.flush()
        let source = try ReplayIndexFile.Descriptor(path: other.path)
        var offset: Int64 = 0
        while offset < other.count {
            let piece = try source.read(offset..<min(other.count, offset + Int64(1 << 20)))
            guard !piece.isEmpty else { break }
            try write(piece)
            try flush()
            offset += Int64(piece.count)
        }
    }

    /// Flushed and on disk.
    func finish() throws {
        try flush()
        guard fsync(fd) == 0 else { throw ReplayIndexError("fsync \(path)", errno: errno) }
    }

    func remove() { unlink(path) }
}

/// A file operation of the replay index that failed, or a file of it that is not what was written.
struct ReplayIndexError: Error, CustomStringConvertible {
    let description: String
    init(_ what: String, errno: Int32) { description = "\(what): \(String(cString: strerror(errno)))" }
    init(damaged why: String) { description = "the replay index is damaged: \(why)" }
}

/// One replay index file opened for reading: what the Replay page's range requests and the JSON of
/// `GET /api/sessions/ID/replay` read. Reads are positional (`pread`), so one open file serves any
/// number of requests at once, and a file replaced meanwhile (rebuilt) is not seen half-way.
final class ReplayIndexFile: Sendable {
    let descriptor: Descriptor
    let size: Int64
    let preamble: ReplayIndex.Preamble
    /// Names this version of the file: a page that read its head sends it back (`If-Match`) with each range.
    let etag: String

    /// Nil when there is no file, or one of another version or shape (to be written again).
    init?(path: String) throws {
        guard let descriptor = try? Descriptor(path: path) else { return nil }
        var status = stat()
        guard fstat(descriptor.fd, &status) == 0 else { throw ReplayIndexError("stat \(path)", errno: errno) }
        let size = Int64(status.st_size)
        guard let preamble = ReplayIndex.preamble(from: try descriptor.read(0..<min(size, Int64(ReplayIndex.preambleBytes)))),
              preamble.version == ReplayIndex.version,
              preamble.headBytes <= size - Int64(ReplayIndex.preambleBytes) else { return nil }
        self.descriptor = descriptor
        self.size = size
        self.preamble = preamble
        etag = "\"\(preamble.version)-\(preamble.sessionEvents)-\(size)-\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)\""
    }

    /// Where the chunks begin.
    var chunksOffset: Int64 { Int64(ReplayIndex.preambleBytes) + preamble.headBytes }

    func head() throws -> Head {
        try JSONDecoder().decode(Head.self, from: Data(try descriptor.read(Int64(ReplayIndex.preambleBytes)..<chunksOffset)))
    }

    func chunk(_ entry: Head.ChunkEntry) throws -> Chunk {
        guard entry.offset >= 0, entry.bytes >= 0, let start = chunksOffset.checkedAdding(entry.offset),
              let end = start.checkedAdding(entry.bytes), end <= size else {
            throw ReplayIndexError(damaged: "it names a chunk beyond its end")
        }
        return try JSONDecoder().decode(Chunk.self, from: Data(try descriptor.read(start..<end)))
    }

    /// What `GET /api/sessions/ID/replay` answered before the index became a file (docs/CONSOLE.md): every
    /// event's id, time, class and summary as columns, and the screenshots, touches, views, notes,
    /// problems and gaps, in one JSON for scripts.
    func wholeJSON() throws -> [UInt8] {
        let head = try head()
        var classes: [String: Int] = [:], classNames: [String] = []
        var ids: [UInt8] = [], times: [UInt8] = [], classColumn: [UInt8] = [], summaries: [UInt8] = []
        var screenshots: [Chunk.Screenshot] = [], touches: [Chunk.Touch] = [], views: [Chunk.View] = []
        func separate(_ column: inout [UInt8]) { if !column.isEmpty { column.append(UInt8(ascii: ",")) } }
        for entry in head.chunks {
            let chunk = try self.chunk(entry)
            for (index, id) in chunk.id.enumerated() {
                guard chunk.t.indices.contains(index), chunk.c.indices.contains(index), chunk.classes.indices.contains(chunk.c[index]) else {
                    throw ReplayIndexError(damaged: "a chunk's columns differ in length")
                }
                let name = chunk.classes[chunk.c[index]]
                let global: Int
                if let known = classes[name] { global = known } else { global = classNames.count; classes[name] = global; classNames.append(name) }
                separate(&ids); JSONObject.integer(id, to: &ids)
                separate(&times); JSONObject.number(chunk.t[index], to: &times)
                separate(&classColumn); JSONObject.integer(Int64(global), to: &classColumn)
                separate(&summaries); JSONString.append(chunk.s.indices.contains(index) ? chunk.s[index] : "", to: &summaries)
            }
            screenshots += chunk.screenshots
            touches += chunk.touches
            views += chunk.views
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var json: [UInt8] = Array(#"{"session":"#.utf8)
        json.append(contentsOf: try encoder.encode(head.session))
        json.append(contentsOf: #","device":"#.utf8)
        json.append(contentsOf: try head.device.map { Array(try encoder.encode($0)) } ?? Array("null".utf8))
        json.append(contentsOf: #","start":"#.utf8); JSONObject.number(head.start, to: &json)
        json.append(contentsOf: #","end":"#.utf8); JSONObject.number(head.end, to: &json)
        json.append(contentsOf: #","classes":"#.utf8); json.append(contentsOf: try encoder.encode(classNames))
        json.append(contentsOf: #","events":{"id":["#.utf8); json.append(contentsOf: ids)
        json.append(contentsOf: #"],"t":["#.utf8); json.append(contentsOf: times)
        json.append(contentsOf: #"],"c":["#.utf8); json.append(contentsOf: classColumn)
        json.append(contentsOf: #"],"s":["#.utf8); json.append(contentsOf: summaries)
        json.append(contentsOf: #"]},"screenshots":"#.utf8); json.append(contentsOf: try encoder.encode(screenshots))
        json.append(contentsOf: #","touches":"#.utf8); json.append(contentsOf: try encoder.encode(touches))
        json.append(contentsOf: #","views":"#.utf8); json.append(contentsOf: try encoder.encode(views))
        json.append(contentsOf: #","notes":"#.utf8); json.append(contentsOf: try encoder.encode(head.notes))
        json.append(contentsOf: #","problems":"#.utf8); json.append(contentsOf: try encoder.encode(head.problems))
        json.append(contentsOf: #","gaps":"#.utf8); json.append(contentsOf: try encoder.encode(head.gaps))
        json.append(UInt8(ascii: "}"))
        return json
    }

    struct Head: Decodable {
        struct ChunkEntry: Decodable {
            var offset: Int64
            var bytes: Int64
            var first: Int64
            var count: Int
            var t: Double
            var end: Double
        }
        struct Note: Codable {
            var t: Double
            var text: String
            var kind: String
            var event: Int64
        }
        var version: Int
        var session: SessionRecord
        var device: DeviceRecord?
        var start: Double
        var end: Double
        var events: Int64
        var classes: [String]
        var classesComplete: Bool
        var chunks: [ChunkEntry]
        var notes: [Note]
        var problems: [ProblemMark]
        var gaps: [SessionGap]
    }

    struct Chunk: Decodable {
        struct Screenshot: Codable { var t: Double; var sha: String; var event: Int64 }
        struct Touch: Codable { var t: Double; var x: Double; var y: Double; var phase: String }
        struct View: Codable { var t: Double; var view: String }
        var first: Int64
        var classes: [String]
        var id: [Int64]
        var t: [Double]
        var c: [Int]
        var s: [String]
        var screenshots: [Screenshot]
        var touches: [Touch]
        var views: [View]
    }

    /// An open file, closed with its last user.
    final class Descriptor: Sendable {
        let fd: Int32

        init(path: String) throws {
            fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw ReplayIndexError("open \(path)", errno: errno) }
        }

        deinit { Glibc.close(fd) }

        /// The bytes of `range` (fewer where the file ends).
        func read(_ range: Range<Int64>) throws -> [UInt8] {
            guard !range.isEmpty else { return [] }
            var bytes = [UInt8](repeating: 0, count: Int(range.count))
            var done = 0
            while done < bytes.count {
                let count = bytes.withUnsafeMutableBytes { buffer in
                    pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(range.lowerBound + Int64(done)))
                }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw ReplayIndexError("read", errno: errno)
                }
                if count == 0 { break }
                done += count
            }
            return Array(bytes[..<done])
        }
    }
}
