internal import SessionModel

/// JSON string escaping: the one escaper for stored payloads, control-socket lines and reports.
///
/// Written by hand rather than through JSONEncoder because it runs once per stored event on the
/// ingest path and once per tail line, copying runs of bytes that need no escape at once
/// (docs/BENCHMARKS.md).
public enum JSONString {
    /// Appends `text` quoted as a JSON string. With `scriptSafe`, `<`, U+2028 and U+2029 are
    /// escaped as well, so that the string can stand inside an HTML `<script>` element.
    public static func append(_ text: String, to out: inout [UInt8], scriptSafe: Bool = false) {
        var text = text
        text.withUTF8 { append($0, to: &out, scriptSafe: scriptSafe) }
    }

    public static func append(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8], scriptSafe: Bool = false) {
        out.append(ASCII.quote)
        appendEscaped(utf8, to: &out, scriptSafe: scriptSafe)
        out.append(ASCII.quote)
    }

    /// `text` as a quoted JSON string.
    public static func quoted(_ text: String, scriptSafe: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        append(text, to: &out, scriptSafe: scriptSafe)
        return String(decoding: out, as: UTF8.self)
    }

    /// The string's contents escaped, without the quotes.
    @inline(__always)
    static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8], scriptSafe: Bool) {
        var runStart = 0
        var i = 0
        while i < utf8.count {
            let b = utf8[i]
            let needsEscape = b < 0x20 || b == ASCII.quote || b == ASCII.backslash
                || (scriptSafe && (b == ASCII.lessThan || (b == 0xE2 && isLineOrParagraphSeparator(utf8, at: i))))
            guard needsEscape else {
                i += 1
                continue
            }
            if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
            out.append(ASCII.backslash)
            switch b {
            case ASCII.quote, ASCII.backslash: out.append(b)
            case ASCII.newline: out.append(0x6E)  // n
            case ASCII.carriageReturn: out.append(0x72)  // r
            case ASCII.tab: out.append(0x74)  // t
            case 0x08: out.append(0x62)  // b
            case 0x0C: out.append(0x66)  // f
            case 0xE2:
                // U+2028 / U+2029 (E2 80 A8 / E2 80 A9): valid JSON, but line ends in JavaScript source.
                out.append(contentsOf: utf8[i + 2] == 0xA8 ? Array("u2028".utf8) : Array("u2029".utf8))
                i += 2
            default:
                out.append(contentsOf: [0x75, ASCII.zero, ASCII.zero, hexDigit(b >> 4), hexDigit(b & 0xF)])  // u00XX
            }
            i += 1
            runStart = i
        }
        if runStart < utf8.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
    }

    private static func isLineOrParagraphSeparator(_ utf8: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        i + 2 < utf8.count && utf8[i + 1] == 0x80 && (utf8[i + 2] == 0xA8 || utf8[i + 2] == 0xA9)
    }
}

/// The other pieces of a JSON object written by hand, next to `JSONString`: the live tail's lines
/// and the JSONL export write one object per event, where JSONEncoder took most of a core.
public enum JSONObject {
    /// `"key":`, after a comma unless the object (or array) has just opened.
    public static func key(_ key: StaticString, to out: inout [UInt8]) {
        if let last = out.last, last != ASCII.leftBrace, last != ASCII.leftBracket { out.append(ASCII.comma) }
        out.append(ASCII.quote)
        key.withUTF8Buffer { out.append(contentsOf: $0) }
        out.append(ASCII.quote)
        out.append(ASCII.colon)
    }

    /// As JSONEncoder writes it: whole numbers without a fraction ("200"), others in Swift's shortest
    /// representation that reads back to the same Double ("1298155386.125", "1e-05"). The callers'
    /// numbers are finite: times come from the clock, and the wire decoder refuses an event whose
    /// timestamp is not a finite number.
    public static func number(_ value: Double, to out: inout [UInt8]) {
        if value == value.rounded(), abs(value) < 1e15 {
            integer(Int64(value), to: &out)
        } else {
            out.append(contentsOf: value.description.utf8)
        }
    }

    public static func integer(_ value: Int64, to out: inout [UInt8]) {
        out.append(contentsOf: String(value).utf8)
    }

    public static func bool(_ value: Bool, to out: inout [UInt8]) {
        out.append(contentsOf: (value ? "true" : "false").utf8)
    }
}
