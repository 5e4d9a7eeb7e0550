/// Reads the XML of one complete frame: tags, character data with references and CDATA, comments.
/// Names stay byte ranges of the frame; text stays a slice of the frame unless it needs decoding.
struct XMLCursor {
    struct Tag {
        var name: Range<Int>
        /// `<name/>`.
        var isEmpty: Bool
    }

    /// Where the text of an element is: a slice of the frame, or decoded into `scratch`.
    enum Text {
        case frame(Range<Int>)
        case scratch
    }

    let bytes: UnsafeBufferPointer<UInt8>
    private(set) var index = 0
    /// Decoded text; reused across messages by `MessageParser`.
    var scratch: [UInt8]

    init(_ bytes: UnsafeBufferPointer<UInt8>, scratch: [UInt8]) {
        self.bytes = bytes
        self.scratch = scratch
    }

    var atEnd: Bool { index >= bytes.count }

    /// The byte `offset` past the current one, or 0 past the end.
    @inline(__always)
    func peek(_ offset: Int = 0) -> UInt8 {
        index + offset < bytes.count ? bytes[index + offset] : 0
    }

    func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[range]) }

    func name(_ range: Range<Int>) -> String { String(decoding: slice(range), as: UTF8.self) }

    /// An excerpt of what comes next, for error messages.
    var upcoming: String {
        index < bytes.count ? excerpt(UnsafeBufferPointer(rebasing: bytes[index...])) : "the end of the message"
    }

    func withText<R>(_ text: Text, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        switch text {
        case .frame(let range): return body(slice(range))
        case .scratch: return scratch.withUnsafeBufferPointer(body)
        }
    }

    /// Skips whitespace and comments, which may stand between any two elements.
    mutating func skipMisc() throws(ParseFailure) {
        while index < bytes.count {
            let b = bytes[index]
            if isXMLWhitespace(b) {
                index += 1
            } else if b == ASCII.lessThan && peek(1) == ASCII.exclamation && matchPrefix(bytes, at: index, "<!--") == .yes {
                try skipComment()
            } else {
                return
            }
        }
    }

    private mutating func skipComment() throws(ParseFailure) {
        guard let end = find("-->", from: index + 4) else { throw ParseFailure(.malformedXML, "unterminated comment") }
        index = end + 3
    }

    private func find(_ literal: StaticString, from start: Int) -> Int? {
        let first = literal.utf8Start.pointee
        var i = start
        while true {
            i = firstIndex(of: first, in: bytes, from: i)
            guard i < bytes.count else { return nil }
            if matchPrefix(bytes, at: i, literal) == .yes { return i }
            i += 1
        }
    }

    private mutating func skipWhitespace() -> Bool {
        let start = index
        while index < bytes.count, isXMLWhitespace(bytes[index]) { index += 1 }
        return index > start
    }

    private mutating func skipName() -> Range<Int>? {
        let start = index
        guard isNameStart(peek()) else { return nil }
        index += 1
        while isNameByte(peek()) { index += 1 }
        return start..<index
    }

    /// Reads `<name attr="value" …>` or `<name …/>`; attributes are checked for syntax and ignored.
    mutating func startTag() throws(ParseFailure) -> Tag {
        index += 1  // '<'
        guard let name = skipName() else {
            throw ParseFailure(.malformedXML, "expected an element name after '<', found \(upcoming)")
        }
        while true {
            let hadSpace = skipWhitespace()
            switch peek() {
            case ASCII.greaterThan:
                index += 1
                return Tag(name: name, isEmpty: false)
            case ASCII.slash where peek(1) == ASCII.greaterThan:
                index += 2
                return Tag(name: name, isEmpty: true)
            default:
                guard hadSpace, skipName() != nil else {
                    throw ParseFailure(.malformedXML, "malformed tag <\(self.name(name))>: unexpected \(upcoming)")
                }
                _ = skipWhitespace()
                guard peek() == ASCII.equals else {
                    throw ParseFailure(.malformedXML, "attribute in <\(self.name(name))> has no '=value'")
                }
                index += 1
                _ = skipWhitespace()
                let quote = peek()
                guard quote == ASCII.quote || quote == ASCII.apostrophe,
                      case let end = firstIndex(of: quote, in: bytes, from: index + 1), end < bytes.count
                else {
                    throw ParseFailure(.malformedXML, "attribute value in <\(self.name(name))> must be quoted")
                }
                // XML forbids '<' in attribute values; FrameScanner refuses it too, and the two must agree.
                guard firstIndex(of: ASCII.lessThan, in: slice(index + 1..<end), from: 0) == end - index - 1 else {
                    throw ParseFailure(.malformedXML, "'<' in an attribute value of <\(self.name(name))>")
                }
                index = end + 1
            }
        }
    }

    /// Reads `</name>` for the element `name` opened.
    mutating func endTag(_ name: Range<Int>) throws(ParseFailure) {
        guard peek() == ASCII.lessThan, peek(1) == ASCII.slash else {
            throw ParseFailure(.malformedXML, "expected </\(self.name(name))>, found \(upcoming)")
        }
        let start = index
        index += 2
        // The expected name, then a byte that cannot continue a name: the same test as reading the
        // whole name and comparing, without looking up each of its bytes.
        let nameEnd = index + name.count
        guard nameEnd <= bytes.count, bytesEqual(slice(index..<nameEnd), slice(name)), !isNameByte(peek(name.count)) else {
            index = start
            throw ParseFailure(.malformedXML, "<\(self.name(name))> is closed by \(upcoming) (misnested tags)")
        }
        index = nameEnd
        _ = skipWhitespace()
        guard peek() == ASCII.greaterThan else {
            throw ParseFailure(.malformedXML, "malformed closing tag </\(self.name(name))>")
        }
        index += 1
    }

    /// Reads character data up to the next tag, decoding references and CDATA sections and dropping comments.
    mutating func readText() throws(ParseFailure) -> Text {
        let start = index
        let lessThan = firstIndex(of: ASCII.lessThan, in: bytes, from: index)
        let plain = firstIndex(of: ASCII.ampersand, in: slice(start..<lessThan), from: 0) == lessThan - start
        if plain && (lessThan == bytes.count || bytes[lessThan + 1] != ASCII.exclamation) {
            index = lessThan
            return .frame(start..<lessThan)
        }
        scratch.removeAll(keepingCapacity: true)
        while index < bytes.count {
            let b = bytes[index]
            if b == ASCII.ampersand {
                try decodeReference()
            } else if b == ASCII.lessThan {
                if matchPrefix(bytes, at: index, "<![CDATA[") == .yes {
                    guard let end = find("]]>", from: index + 9) else {
                        throw ParseFailure(.malformedXML, "unterminated CDATA section")
                    }
                    scratch.append(contentsOf: slice(index + 9..<end))
                    index = end + 3
                } else if matchPrefix(bytes, at: index, "<!--") == .yes {
                    try skipComment()
                } else {
                    break
                }
            } else {
                var end = index + 1
                while end < bytes.count, bytes[end] != ASCII.lessThan, bytes[end] != ASCII.ampersand { end += 1 }
                scratch.append(contentsOf: slice(index..<end))
                index = end
            }
        }
        return .scratch
    }

    /// Decodes `&lt;` `&gt;` `&amp;` `&quot;` `&apos;` `&#NNN;` `&#xHH;` into `scratch`; nothing else is expanded.
    private mutating func decodeReference() throws(ParseFailure) {
        let semicolon = firstIndex(of: ASCII.semicolon, in: slice(index..<min(index + 64, bytes.count)), from: 1)
        guard index + semicolon < bytes.count, bytes[index + semicolon] == ASCII.semicolon else {
            throw ParseFailure(.malformedXML, "'&' must start a reference such as &amp; (found \(upcoming))")
        }
        let body = slice(index + 1..<index + semicolon)
        let reference = "&" + String(decoding: body, as: UTF8.self) + ";"
        if bytesEqual(body, "lt") {
            scratch.append(ASCII.lessThan)
        } else if bytesEqual(body, "gt") {
            scratch.append(ASCII.greaterThan)
        } else if bytesEqual(body, "amp") {
            scratch.append(ASCII.ampersand)
        } else if bytesEqual(body, "quot") {
            scratch.append(ASCII.quote)
        } else if bytesEqual(body, "apos") {
            scratch.append(ASCII.apostrophe)
        } else if body.first == 0x23 /* # */ {
            guard let scalar = Self.characterReference(UnsafeBufferPointer(rebasing: body.dropFirst())) else {
                throw ParseFailure(.malformedXML, "\(reference) is not a valid character reference")
            }
            appendUTF8(scalar, to: &scratch)
        } else if let first = body.first, isNameStart(first), body.allSatisfy(isNameByte) {
            throw ParseFailure(.unknownEntity,
                "unknown entity \(reference); only &lt; &gt; &amp; &quot; &apos; and numeric references are allowed")
        } else {
            throw ParseFailure(.malformedXML, "'&' must start a reference such as &amp; (found \(reference))")
        }
        index += semicolon + 1
    }

    /// The scalar of `NNN` or `xHH`; nil for 0, surrogates, values above U+10FFFF and bad digits.
    private static func characterReference(_ digits: UnsafeBufferPointer<UInt8>) -> UInt32? {
        var text = digits[...]
        let radix: UInt32 = text.first == 0x78 /* x */ ? 16 : 10
        if radix == 16 { text = text.dropFirst() }
        guard !text.isEmpty, text.count <= 8 else { return nil }
        var value: UInt32 = 0
        for b in text {
            let digit: UInt32
            switch b {
            case ASCII.zero...ASCII.nine: digit = UInt32(b - ASCII.zero)
            case 0x61...0x66 where radix == 16: digit = UInt32(b - 0x61 + 10)
            case 0x41...0x46 where radix == 16: digit = UInt32(b - 0x41 + 10)
            default: return nil
            }
            value = value * radix + digit
        }
        guard value != 0, value <= 0x10FFFF, !(0xD800...0xDFFF).contains(value) else { return nil }
        return value
    }
}
