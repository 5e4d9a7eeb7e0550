internal import Foundation
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

/// Everything the Replay page needs before it can show the first frame, in one response: every
/// event's time, class and one-line summary as columns, and the screenshots, touches, views and
/// notes to draw. Payloads and screenshot bytes stay on the server until the page asks for them,
/// so a one-hour session (100,000 events) opens in one request of a few megabytes.
enum ReplayIndex {
    static func build(record: SessionRecord, problems: [ProblemMark]) throws -> [UInt8] {
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

        var classes: [String: Int] = [:]
        var classNames: [String] = []
        var ids: [UInt8] = [], times: [UInt8] = [], classColumn: [UInt8] = [], summaries: [UInt8] = []
        var screenshots: [UInt8] = [], touches: [UInt8] = [], views: [UInt8] = [], notes: [UInt8] = []
        var start = Double.infinity, end = -Double.infinity

        func separate(_ column: inout [UInt8]) {
            if !column.isEmpty { column.append(UInt8(ascii: ",")) }
        }
        try reader.forEachEvent { event in
            // An event at no plausible time has no place on the scrubber.
            guard ranges.isPlausible(time: event.timestamp) else { return }
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
            let payload = (try? TypedJSON.decodeLeavingBlobs(Array(event.payload.utf8))) ?? .dict([:])
            separate(&ids); JSONObject.integer(event.id, to: &ids)
            separate(&times); JSONObject.number(event.timestamp, to: &times)
            separate(&classColumn); JSONObject.integer(Int64(classIndex), to: &classColumn)
            separate(&summaries)
            JSONString.append(PayloadSummary.line(eventClass: event.eventClass, payload: payload), to: &summaries)

            switch event.eventClass {
            case EventClass.userInput.rawValue where payload["type"]?.string == "touch":
                guard let x = ranges.coordinate(payload["x"]?.number), let y = ranges.coordinate(payload["y"]?.number) else { break }
                separate(&touches)
                touches.append(contentsOf: #"{"t":"#.utf8); JSONObject.number(event.timestamp, to: &touches)
                touches.append(contentsOf: #","x":"#.utf8); JSONObject.number(x, to: &touches)
                touches.append(contentsOf: #","y":"#.utf8); JSONObject.number(y, to: &touches)
                touches.append(contentsOf: #","phase":"#.utf8); JSONString.append(payload["phase"]?.string ?? "", to: &touches)
                touches.append(UInt8(ascii: "}"))
            case EventClass.userInterface.rawValue:
                if let blob = payload.screenshot {
                    separate(&screenshots)
                    screenshots.append(contentsOf: #"{"t":"#.utf8); JSONObject.number(event.timestamp, to: &screenshots)
                    screenshots.append(contentsOf: #","sha":"#.utf8); JSONString.append(blob.sha256, to: &screenshots)
                    screenshots.append(contentsOf: #","event":"#.utf8); JSONObject.integer(event.id, to: &screenshots)
                    screenshots.append(UInt8(ascii: "}"))
                }
                if let view = payload["view"]?.string, payload["type"]?.string == "viewDidAppear" {
                    separate(&views)
                    views.append(contentsOf: #"{"t":"#.utf8); JSONObject.number(event.timestamp, to: &views)
                    views.append(contentsOf: #","view":"#.utf8); JSONString.append(view, to: &views)
                    views.append(UInt8(ascii: "}"))
                }
            case ObserverNote.eventClass:
                separate(&notes)
                notes.append(contentsOf: #"{"t":"#.utf8); JSONObject.number(event.timestamp, to: &notes)
                notes.append(contentsOf: #","text":"#.utf8); JSONString.append(payload["text"]?.string ?? "", to: &notes)
                notes.append(contentsOf: #","kind":"#.utf8); JSONString.append(payload["kind"]?.string ?? "", to: &notes)
                notes.append(contentsOf: #","event":"#.utf8); JSONObject.integer(event.id, to: &notes)
                notes.append(UInt8(ascii: "}"))
            default:
                break
            }
        }
        if start > end { start = record.started ?? record.created; end = start }

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var json: [UInt8] = Array(#"{"session":"#.utf8)
        json.append(contentsOf: try encoder.encode(record))
        json.append(contentsOf: #","device":"#.utf8)
        json.append(contentsOf: try device.map { Array(try encoder.encode($0)) } ?? Array("null".utf8))
        json.append(contentsOf: #","start":"#.utf8); JSONObject.number(start, to: &json)
        json.append(contentsOf: #","end":"#.utf8); JSONObject.number(end, to: &json)
        json.append(contentsOf: #","classes":"#.utf8); json.append(contentsOf: try encoder.encode(classNames))
        json.append(contentsOf: #","events":{"id":["#.utf8); json.append(contentsOf: ids)
        json.append(contentsOf: #"],"t":["#.utf8); json.append(contentsOf: times)
        json.append(contentsOf: #"],"c":["#.utf8); json.append(contentsOf: classColumn)
        json.append(contentsOf: #"],"s":["#.utf8); json.append(contentsOf: summaries)
        json.append(contentsOf: #"]},"screenshots":["#.utf8); json.append(contentsOf: screenshots)
        json.append(contentsOf: #"],"touches":["#.utf8); json.append(contentsOf: touches)
        json.append(contentsOf: #"],"views":["#.utf8); json.append(contentsOf: views)
        json.append(contentsOf: #"],"notes":["#.utf8); json.append(contentsOf: notes)
        json.append(contentsOf: #"],"problems":"#.utf8); json.append(contentsOf: try encoder.encode(problems))
        json.append(contentsOf: #","gaps":"#.utf8); json.append(contentsOf: try encoder.encode(gaps))
        json.append(UInt8(ascii: "}"))
        return json
    }
}
