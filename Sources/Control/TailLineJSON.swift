import CaptureServer
import JournalStorage

/// Writes a tail reply line, `{"tail":{…}}`, with the keys and values JSONEncoder gives
/// `ControlReply(tail:)` (nil fields left out), byte by byte. A live tail writes one line per stored
/// event: with JSONEncoder, 50,000 events/s took most of a core and the tail fell a second behind
/// and skipped lines (`make bench`, docs/BENCHMARKS.md).
enum TailLineJSON {
    /// Appends the line to `out`. Its numbers are finite: times come from the clock, and the wire
    /// decoder refuses an event whose timestamp is not a finite number.
    static func write(_ line: TailLine, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"tail":{"kind":"#.utf8)
        string(line.kind.rawValue, &out)
        if let session = line.session { member("session", &out); out.append(contentsOf: String(session).utf8) }
        member("time", &out)
        number(line.time, &out)
        if let device = line.device { member("device", &out); string(device, &out) }
        if let event = line.event {
            member("event", &out)
            out.append(contentsOf: #"{"id":"#.utf8)
            out.append(contentsOf: String(event.id).utf8)
            member("device", &out)
            string(event.device, &out)
            if let seq = event.seq { member("seq", &out); out.append(contentsOf: String(seq).utf8) }
            member("eventClass", &out)
            string(event.eventClass, &out)
            member("timestamp", &out)
            number(event.timestamp, &out)
            member("timestampEstimated", &out)
            out.append(contentsOf: (event.timestampEstimated ? "true" : "false").utf8)
            member("received", &out)
            number(event.received, &out)
            member("payload", &out)
            string(event.payload, &out)
            out.append(UInt8(ascii: "}"))
        }
        if let count = line.count { member("count", &out); out.append(contentsOf: String(count).utf8) }
        if let detail = line.detail { member("detail", &out); string(detail, &out) }
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

    private static let hex = Array("0123456789abcdef".utf8)

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as UTF-8.
    private static func string(_ value: String, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var runStart = 0
            for (i, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
                runStart = i + 1
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
                case UInt8(ascii: "\n"): out.append(contentsOf: #"\n"#.utf8)
                case UInt8(ascii: "\r"): out.append(contentsOf: #"\r"#.utf8)
                case UInt8(ascii: "\t"): out.append(contentsOf: #"\t"#.utf8)
                default: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
