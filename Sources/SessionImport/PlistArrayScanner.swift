/// Splits an Apple XML property list whose root is an array (`muevalctl export --format plist`) into
/// the elements of that array as the bytes stream in; each element is then parsed on its own with the
/// wire protocol's parser (`PlistElementReader`). Hand-written for the same reason as
/// `JSONArrayScanner`: Foundation's plist reader takes whole documents, and an export can be gigabytes.
///
/// It follows tags only (with comments, CDATA and quoted attribute values, where a `<` or `>` means
/// nothing): their nesting tells where an element of the root array begins and ends.
struct PlistArrayScanner: ElementScanner {
    private enum Lexer {
        case text
        /// After `<`, before knowing what it opens.
        case open
        /// In a tag; `closing` for `</…>`, `quote` inside an attribute value.
        case tag(closing: Bool, quote: UInt8?)
        case markup(terminator: StaticString, matched: Int)
    }

    private var lexer = Lexer.text
    private(set) var position = TextPosition()
    /// Open elements: 1 inside `<plist>`, 2 inside its `<array>`, 3+ inside one of the array's elements.
    private var depth = 0
    private var tagName: [UInt8] = []
    private var lastByte: UInt8 = 0
    private var tagStart = TextPosition()
    private var element: [UInt8] = []
    private var elementStart = TextPosition()
    private var closed = false
    static let maxElementBytes = 64 << 20

    var finished: Bool { closed }

    mutating func scan(_ chunk: [UInt8], _ body: ([UInt8], TextPosition) -> Void) throws(ScanFailure) {
        for byte in chunk {
            if depth >= 3 || (depth == 2 && isElementStart) { element.append(byte) }
            try step(byte, body)
            if byte == UInt8(ascii: "\n") {
                position.line += 1
                position.column = 1
            } else if byte & 0xC0 != 0x80 {
                position.column += 1
            }
        }
        guard element.count <= Self.maxElementBytes else {
            throw ScanFailure(reason: "an element longer than \(Self.maxElementBytes >> 20) MiB", position: elementStart)
        }
    }

    /// Whether the current tag, at the array's level, is an element's start tag being read.
    private var isElementStart: Bool {
        if case .tag(closing: false, _) = lexer { return true }
        return false
    }

    private mutating func step(_ byte: UInt8, _ body: ([UInt8], TextPosition) -> Void) throws(ScanFailure) {
        switch lexer {
        case .text:
            if byte == UInt8(ascii: "<") {
                lexer = .open
                tagStart = position
            } else if depth < 3, !isWhitespace(byte) {
                throw ScanFailure(reason: depth == 0 && !closed ? "expected a property list (<plist>), found text" : "text where only elements belong",
                              position: position)
            }
        case .open:
            switch byte {
            case UInt8(ascii: "/"):
                lexer = .tag(closing: true, quote: nil)
                tagName = []
            case UInt8(ascii: "!"):
                lexer = .markup(terminator: ">", matched: 0)  // a comment, CDATA or DOCTYPE: refined below
                tagName = [byte]
            case UInt8(ascii: "?"):
                lexer = .markup(terminator: "?>", matched: 0)
            default:
                if depth == 2, !closed {
                    element = [UInt8(ascii: "<"), byte]
                    elementStart = tagStart
                }
                lexer = .tag(closing: false, quote: nil)
                tagName = [byte]
            }
        case .tag(let closing, let quote):
            if let quote {
                if byte == quote { lexer = .tag(closing: closing, quote: nil) }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                lexer = .tag(closing: closing, quote: byte)
            } else if byte == UInt8(ascii: ">") {
                lexer = .text
                try endTag(closing: closing, empty: lastByte == UInt8(ascii: "/"), body)
            } else if tagName.count < 16, !isWhitespace(byte), byte != UInt8(ascii: "/"), tagName.last != 0 {
                tagName.append(byte)
            } else if isWhitespace(byte) || byte == UInt8(ascii: "/") {
                tagName.append(0)  // the name has ended
            }
        case .markup(let terminator, var matched):
            if tagName == [UInt8(ascii: "!")], byte == UInt8(ascii: "-") {
                lexer = .markup(terminator: "-->", matched: 0)
                tagName = []
                return
            }
            if tagName == [UInt8(ascii: "!")], byte == UInt8(ascii: "[") {
                lexer = .markup(terminator: "]]>", matched: 0)
                tagName = []
                return
            }
            tagName = []
            let bytes = UnsafeBufferPointer(start: terminator.utf8Start, count: terminator.utf8CodeUnitCount)
            if byte == bytes[matched] {
                matched += 1
            } else {
                matched = byte == bytes[0] ? 1 : 0
            }
            lexer = matched == bytes.count ? .text : .markup(terminator: terminator, matched: matched)
        }
        lastByte = byte
    }

    private mutating func endTag(closing: Bool, empty: Bool, _ body: ([UInt8], TextPosition) -> Void) throws(ScanFailure) {
        let name = String(decoding: tagName.prefix { $0 != 0 }, as: UTF8.self)
        if closing {
            depth -= 1
            if depth == 2 {
                body(element, elementStart)
                element.removeAll(keepingCapacity: element.capacity <= 1 << 20)
            } else if depth == 0 {
                closed = true
            } else if depth < 0 {
                throw ScanFailure(reason: "</\(name)> closes nothing", position: tagStart)
            }
            return
        }
        if closed { throw ScanFailure(reason: "<\(name)> after the end of the property list", position: tagStart) }
        if depth == 0, name != "plist" {
            throw ScanFailure(reason: "the root element is <\(name)>, not <plist>: not a muEval plist export", position: tagStart)
        }
        if depth == 1, name != "array" {
            throw ScanFailure(reason: "the property list holds <\(name)>, not the <array> of a muEval export", position: tagStart)
        }
        if empty {
            if depth == 2 {
                body(element, elementStart)
                element.removeAll(keepingCapacity: true)
            } else if depth < 2 {
                if depth == 0 { closed = true }
            }
            return
        }
        depth += 1
    }

    /// Whether the input ended with the property list closed.
    var ending: (closed: Bool, insideElementAt: TextPosition?) {
        (closed, depth >= 3 ? elementStart : nil)
    }

    private func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
