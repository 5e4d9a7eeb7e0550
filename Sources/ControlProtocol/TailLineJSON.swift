public import SessionModel
internal import WireProtocol

/// Writes a tail reply line, `{"tail":{…}}`, with the keys and values JSONEncoder gives
/// `ControlReply(tail:)` (nil fields left out), byte by byte. A live tail writes one line per stored
/// event: with JSONEncoder, 50,000 events/s took most of a core and the tail fell a second behind
/// and skipped lines (`make bench`, docs/BENCHMARKS.md).
public enum TailLineJSON {
    /// Appends the line to `out`.
    public static func write(_ line: TailLine, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"tail":{"#.utf8)
        JSONObject.key("kind", to: &out)
        JSONString.append(line.kind.rawValue, to: &out)
        if let session = line.session { JSONObject.key("session", to: &out); JSONObject.integer(session, to: &out) }
        JSONObject.key("time", to: &out)
        JSONObject.number(line.time, to: &out)
        if let device = line.device { JSONObject.key("device", to: &out); JSONString.append(device, to: &out) }
        if let event = line.event {
            JSONObject.key("event", to: &out)
            out.append(UInt8(ascii: "{"))
            JSONObject.key("id", to: &out)
            JSONObject.integer(event.id, to: &out)
            JSONObject.key("device", to: &out)
            JSONString.append(event.device, to: &out)
            if let seq = event.seq { JSONObject.key("seq", to: &out); JSONObject.integer(seq, to: &out) }
            JSONObject.key("eventClass", to: &out)
            JSONString.append(event.eventClass, to: &out)
            JSONObject.key("timestamp", to: &out)
            JSONObject.number(event.timestamp, to: &out)
            JSONObject.key("timestampEstimated", to: &out)
            JSONObject.bool(event.timestampEstimated, to: &out)
            JSONObject.key("received", to: &out)
            JSONObject.number(event.received, to: &out)
            JSONObject.key("payload", to: &out)
            JSONString.append(event.payload, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        if let count = line.count { JSONObject.key("count", to: &out); JSONObject.integer(Int64(count), to: &out) }
        if let detail = line.detail { JSONObject.key("detail", to: &out); JSONString.append(detail, to: &out) }
        out.append(contentsOf: "}}".utf8)
    }
}
