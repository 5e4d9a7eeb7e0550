internal import Foundation
internal import Glibc
internal import JournalStorage
internal import MuEvalWire
package import ReportCritique
package import SessionModel
internal import WireProtocol

extension ReplayIndex {
    /// Writes the index of `record` to `path` (replacing it atomically once complete).
    package static func write(record: SessionRecord, problems: [ProblemMark], to path: String) throws {
        let stem = "\(path).tmp-\(UUID().uuidString)"
        let chunks = try BufferedFileWriter(path: stem + "-chunks")
        let table = try BufferedFileWriter(path: stem + "-table")
        let notes = try BufferedFileWriter(path: stem + "-notes")
        defer { for part in [chunks, table, notes] { part.remove() } }

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

        var chunk = OpenChunk(first: 0)
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
            chunk = OpenChunk(first: indexed)
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

        let whole = try BufferedFileWriter(path: stem)
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

    /// One chunk as it fills, until the writer closes it: its columns as JSON text (the element separators included).
    private struct OpenChunk {
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
