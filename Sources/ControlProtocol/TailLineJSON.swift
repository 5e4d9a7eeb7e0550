internal import WireProtocol

/// Writes a tail reply line, `{"tail":{…}}`, with the keys and values JSONEncoder gives
/// `ControlReply(tail:)` (nil fields left out), byte by byte. A live tail writes one line per stored
/// event: with JSONEncoder, 50,000 events/s took most of a core and the tail fell a second behind
/// and skipped lines (`make bench`, docs/BENCHMARKS.md).
public enum TailLineJSON {
    /// Appends the line to `out`. Its numbers are finite: times come from the clock, and the wire
    /// decoder refuses an event whose timestamp is not a finite number.
    public static func write(_ line: TailLine, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"tail":{"kind":"#.utf8)
        JSONString.append(line.kind.rawValue, to: &out)
        if let session = line.session { member("session", &out); out.append(contentsOf: String(session).utf8) }
        member("time", &out)
        number(line.time, &out)
        if let device = line.device { member("device", &out); JSONString.append(device, to: &out) }
        if let event = line.event {
            member("event", &out)
            out.append(contentsOf: #"{"id":"#.utf8)
            out.append(contentsOf: String(event.id).utf8)
            member("device", &out)
            JSONString.append(event.device, to: &out)
            if let seq = event.seq { member("seq", &out); out.append(contentsOf: String(seq).utf8) }
            member("eventClass", &out)
            JSONString.append(event.eventClass, to: &out)
            member("timestamp", &out)
            number(event.timestamp, &out)
            member("timestampEstimated", &out)
            out.append(contentsOf: (event.timestampEstimated ? "true" : "false").utf8)
            member("received", &out)
            number(event.received, &out)
            member("payload", &out)
            JSONString.append(event.payload, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        if let count = line.count { member("count", &out); out.append(contentsOf: String(count).utf8) }
        if let detail = line.detail { member("detail", &out); JSONString.append(detail, to: &out) }
        out.append(contentsOf: "}}".utf8)
    }

    private static func member(_ key: StaticString, _ out: inout [UInt8]) {
        out.append(contentsOf: #",""#.utf8)
        key.withUTF8Buffer { out.append(contentsOf: $0) }
        out.append(contentsOf: #"":"#.utf8)
    }

    /// Swift's shortest representation that reads back to the same Double ("1298155386.125", "1e-05").
    private static func number(_ value: Double, _ out: inout [UInt8]) {
        out.append(contentsOf: value.description.utf8)
    }

}
