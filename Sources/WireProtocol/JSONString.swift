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
