/// Finds where each top-level message ("frame") ends in a growing buffer, resumably: it keeps its position and a
/// small lexical state between appends, so every byte is looked at once however the stream is split.
///
/// It checks just enough syntax to keep framing honest — tag bytes, quotes, comments, CDATA, element depth — and
/// leaves the rest to `MessageParser`. A frame ends when element depth returns to 0 or at a closing tag with the
/// root's name at any depth, so a misnested message still ends where its sender meant it to.
///
/// Between frames it skips whitespace, comments, `<?…?>` and `<!DOCTYPE …>`; a DOCTYPE with an internal subset is
/// reported and never expanded. Anything else is junk: skipped to the next `<`, reported once per run, and fatal
/// past `maxJunkBytes` without a message in between.
struct FrameScanner {
    enum Outcome {
        case needMore
        /// A complete frame: buffer indices from its `<` to its final `>`.
        case frame(Range<Int>)
        case failure(WireError)
    }

    private enum State: UInt8 {
        case top, startName, inTag, tagSlash, quoted, content, endName, endAfterName, comment, cdata, pi, doctype
    }

    /// Consecutive bytes between messages that are not whitespace before the peer is taken not to speak XML.
    static let maxJunkBytes = 64 << 10
    /// Root names longer than this never match a closing tag (no message has one); keeps memory bounded.
    private static let maxRootName = 256

    private let maxMessageBytes: Int
    private let maxElementDepth: Int

    private var state = State.top
    /// Next buffer index to look at.
    private(set) var position = 0
    private var frameStart = 0
    private var inFrame = false
    private var depth = 0
    private var rootName: [UInt8] = []
    private var readingRootName = false
    private var rootNameTooLong = false
    private var endNameLength = 0
    private var endNameMatchesRoot = true
    private var quote: UInt8 = 0
    /// Trailing `-`, `]` or `?` seen in a comment, CDATA section or processing instruction.
    private var closerRun = 0
    private var doctypeBrackets = 0
    private var doctypeQuote: UInt8 = 0
    private var doctypeHasSubset = false
    /// Set when the frame is over a limit: its bytes are dropped while scanning on to its end, then this is reported.
    private var discarding: WireError?
    private var junkBytes = 0
    private var junkReported = false

    init(limits: WireLimits) {
        maxMessageBytes = limits.maxMessageBytes
        maxElementDepth = limits.maxDepth * 2 + 4
    }

    /// Buffer bytes before this index are no longer needed.
    var firstNeededIndex: Int { inFrame && discarding == nil ? frameStart : position }

    /// Shifts indices after the buffer dropped its first `count` bytes.
    mutating func bufferDropped(_ count: Int) {
        position -= count
        frameStart -= count
    }

    /// Where the next message starts, when the scanner is between messages (whitespace skipped), so that
    /// `WireDecoder` can take a message that arrived whole without scanning it byte by byte.
    mutating func messageStart(in p: UnsafeBufferPointer<UInt8>) -> Int? {
        guard state == .top, !inFrame else { return nil }
        var i = position
        while i < p.count, isXMLWhitespace(p[i]) { i += 1 }
        position = i
        guard i + 1 < p.count, p[i] == ASCII.lessThan, isNameStart(p[i + 1]) else { return nil }
        return i
    }

    /// Steps over a message that `WireDecoder` took whole, leaving the scanner as `scan` would have.
    mutating func skipMessage(to end: Int) {
        position = end
        junkBytes = 0
        junkReported = false
    }

    /// What the stream ends inside of, or nil when it ends between messages.
    func unfinished(bufferCount: Int) -> String? {
        if inFrame { return "a <\(String(decoding: rootName, as: UTF8.self))> message" }
        switch state {
        case .comment: return "a comment"
        case .pi: return "a processing instruction"
        case .doctype: return "a <!DOCTYPE>"
        default: return position < bufferCount ? "a tag" : nil
        }
    }

    mutating func scan(_ p: UnsafeBufferPointer<UInt8>) -> Outcome {
        var i = position
        defer { position = i }
        let n = p.count
        while i < n {
            let b = p[i]
            switch state {
            case .top:
                if isXMLWhitespace(b) {
                    i += 1
                    while i < n, isXMLWhitespace(p[i]) { i += 1 }
                    continue
                }
                guard b == ASCII.lessThan else {
                    if let outcome = skipJunk(p, &i) { return outcome }
                    continue
                }
                guard i + 1 < n else { return needMore(at: i) }
                let next = p[i + 1]
                if isNameStart(next) {
                    beginFrame(at: i)
                    i += 1
                } else if next == ASCII.question {
                    state = .pi
                    closerRun = 0
                    i += 2
                } else if next == ASCII.exclamation, case let comment = matchPrefix(p, at: i, "<!--"), comment != .no {
                    guard comment == .yes else { return needMore(at: i) }
                    state = .comment
                    closerRun = 0
                    i += 4
                } else if next == ASCII.exclamation, case let doctype = matchPrefix(p, at: i, "<!DOCTYPE"), doctype != .no {
                    guard doctype == .yes else { return needMore(at: i) }
                    state = .doctype
                    doctypeBrackets = 0
                    doctypeQuote = 0
                    doctypeHasSubset = false
                    i += 9
                } else if let outcome = skipJunk(p, &i) {
                    return outcome
                }

            case .startName:
                if isNameByte(b) {
                    let start = i
                    i += 1
                    while i < n, isNameByte(p[i]) { i += 1 }
                    if readingRootName { appendRootName(UnsafeBufferPointer(rebasing: p[start..<i])) }
                    continue
                }
                readingRootName = false
                if isXMLWhitespace(b) {
                    state = .inTag
                    i += 1
                } else if b == ASCII.greaterThan {
                    i += 1
                    openElement()
                } else if b == ASCII.slash {
                    state = .tagSlash
                    i += 1
                } else if let outcome = abandonFrame(at: i, "byte \(describeByte(b)) is not allowed in a tag name") {
                    return outcome
                }

            case .inTag:
                if b == ASCII.greaterThan {
                    i += 1
                    openElement()
                } else if isXMLWhitespace(b) || isNameByte(b) || b == ASCII.equals {
                    i += 1
                    while i < n, case let c = p[i], isXMLWhitespace(c) || isNameByte(c) || c == ASCII.equals { i += 1 }
                } else if b == ASCII.quote || b == ASCII.apostrophe {
                    quote = b
                    state = .quoted
                    i += 1
                } else if b == ASCII.slash {
                    state = .tagSlash
                    i += 1
                } else if let outcome = abandonFrame(at: i, "byte \(describeByte(b)) is not allowed in a tag") {
                    return outcome
                }

            case .quoted:
                if b == quote {
                    state = .inTag
                } else if b == ASCII.lessThan {
                    if let outcome = abandonFrame(at: i, "'<' in an attribute value") { return outcome }
                    continue
                }
                i += 1

            case .tagSlash:
                guard b == ASCII.greaterThan else {
                    if let outcome = abandonFrame(at: i, "'/' in a tag must be followed by '>'") { return outcome }
                    continue
                }
                i += 1
                if depth == 0 { return completeFrame(end: i) }
                state = .content

            case .content:
                guard b == ASCII.lessThan else {
                    i = firstIndex(of: ASCII.lessThan, in: p, from: i + 1)
                    continue
                }
                guard i + 1 < n else { return needMore(at: i) }
                let next = p[i + 1]
                if isNameStart(next) {
                    // Fast path for `<name>` and `<name/>` without attributes, the usual plist tags, so the
                    // common case stays in this state; anything else goes through the general states.
                    var end = i + 2
                    while end < n, isNameByte(p[end]) { end += 1 }
                    // A name cut by the end of the buffer is read whole when more arrives (it may be the root's).
                    if end == n && end - i <= Self.maxRootName { return needMore(at: i) }
                    if end < n && p[end] == ASCII.greaterThan {
                        // `<event>` inside an `<event>` (likewise hello, plist) is never valid: the sender cut
                        // the message off and began the next. End the cut one here, so that its error names its
                        // seq, and read the new one on its own instead of refusing both.
                        if isRootName(UnsafeBufferPointer(rebasing: p[i + 1..<end])) { return completeFrame(end: i) }
                        i = end + 1
                        openElement()
                    } else if end + 1 < n && p[end] == ASCII.slash && p[end + 1] == ASCII.greaterThan {
                        i = end + 2
                    } else {
                        state = .startName
                        i += 1
                    }
                } else if next == ASCII.slash {
                    endNameLength = 0
                    endNameMatchesRoot = !rootNameTooLong
                    var end = i + 2
                    if end < n && isNameStart(p[end]) {
                        while end < n, isNameByte(p[end]) { end += 1 }
                    }
                    if end > i + 2 && end < n && p[end] == ASCII.greaterThan {
                        matchEndName(UnsafeBufferPointer(rebasing: p[i + 2..<end]))
                        i = end + 1
                        if closeElement() { return completeFrame(end: i) }
                    } else {
                        state = .endName
                        i += 2
                    }
                } else if next == ASCII.question {
                    state = .pi
                    closerRun = 0
                    i += 2
                } else if next == ASCII.exclamation, case let comment = matchPrefix(p, at: i, "<!--"), comment != .no {
                    guard comment == .yes else { return needMore(at: i) }
                    state = .comment
                    closerRun = 0
                    i += 4
                } else if next == ASCII.exclamation, case let cdata = matchPrefix(p, at: i, "<![CDATA["), cdata != .no {
                    guard cdata == .yes else { return needMore(at: i) }
                    state = .cdata
                    closerRun = 0
                    i += 9
                } else if let outcome = abandonFrame(at: i, "'<' must start a tag (write '&lt;' in text)") {
                    return outcome
                }

            case .endName:
                if endNameLength == 0 ? isNameStart(b) : isNameByte(b) {
                    let start = i
                    i += 1
                    while i < n, isNameByte(p[i]) { i += 1 }
                    matchEndName(UnsafeBufferPointer(rebasing: p[start..<i]))
                } else if endNameLength > 0 && isXMLWhitespace(b) {
                    state = .endAfterName
                    i += 1
                } else if endNameLength > 0 && b == ASCII.greaterThan {
                    i += 1
                    if closeElement() { return completeFrame(end: i) }
                } else if let outcome = abandonFrame(at: i, "malformed closing tag") {
                    return outcome
                }

            case .endAfterName:
                if isXMLWhitespace(b) {
                    i += 1
                } else if b == ASCII.greaterThan {
                    i += 1
                    if closeElement() { return completeFrame(end: i) }
                } else if let outcome = abandonFrame(at: i, "malformed closing tag") {
                    return outcome
                }

            case .comment, .cdata, .pi:
                if !inFrame { junkBytes += 1 }
                i += 1
                let closer: UInt8 = state == .comment ? ASCII.minus : state == .cdata ? ASCII.rightBracket : ASCII.question
                let needed = state == .pi ? 1 : 2
                if b == closer {
                    closerRun = min(closerRun + 1, needed)
                } else if b == ASCII.greaterThan && closerRun == needed {
                    state = inFrame ? .content : .top
                } else {
                    closerRun = 0
                }

            case .doctype:
                junkBytes += 1
                i += 1
                if doctypeQuote != 0 {
                    if b == doctypeQuote { doctypeQuote = 0 }
                } else if b == ASCII.quote || b == ASCII.apostrophe {
                    doctypeQuote = b
                } else if b == ASCII.leftBracket {
                    doctypeBrackets += 1
                    doctypeHasSubset = true
                } else if b == ASCII.rightBracket {
                    doctypeBrackets = max(doctypeBrackets - 1, 0)
                } else if b == ASCII.greaterThan && doctypeBrackets == 0 {
                    state = .top
                    if doctypeHasSubset {
                        return .failure(WireError(.dtdRejected,
                            "<!DOCTYPE> with an internal subset (entity declarations) is not accepted; it was skipped"))
                    }
                }
            }
        }
        return needMore(at: i)
    }

    private mutating func needMore(at i: Int) -> Outcome {
        if inFrame && discarding == nil && i - frameStart > maxMessageBytes {
            discarding = tooLarge()
        }
        if !inFrame && junkBytes > Self.maxJunkBytes { return notXML() }
        return .needMore
    }

    private mutating func beginFrame(at i: Int) {
        frameStart = i
        inFrame = true
        depth = 0
        rootName.removeAll(keepingCapacity: true)
        readingRootName = true
        rootNameTooLong = false
        discarding = nil
        state = .startName
    }

    private mutating func appendRootName(_ part: UnsafeBufferPointer<UInt8>) {
        if rootName.count + part.count <= Self.maxRootName {
            rootName.append(contentsOf: part)
        } else {
            rootNameTooLong = true
        }
    }

    /// Whether `name` is the name of the message being framed.
    @inline(__always)
    private func isRootName(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        !rootNameTooLong && name.count == rootName.count && rootName.withUnsafeBufferPointer { bytesEqual($0, name) }
    }

    /// Compares the next bytes of a closing tag's name with the root's name.
    @inline(__always)
    private mutating func matchEndName(_ part: UnsafeBufferPointer<UInt8>) {
        if endNameMatchesRoot {
            endNameMatchesRoot = endNameLength + part.count <= rootName.count && rootName.withUnsafeBufferPointer {
                bytesEqual(UnsafeBufferPointer(rebasing: $0[endNameLength..<endNameLength + part.count]), part)
            }
        }
        endNameLength += part.count
    }

    @inline(__always)
    private mutating func openElement() {
        depth += 1
        if depth > maxElementDepth && discarding == nil {
            discarding = WireError(.nestingTooDeep,
                "elements nest more than \(maxElementDepth) levels deep; the message was skipped")
        }
        state = .content
    }

    /// Whether the closing tag just read ends the frame.
    @inline(__always)
    private mutating func closeElement() -> Bool {
        depth -= 1
        state = .content
        return depth <= 0 || (endNameMatchesRoot && endNameLength == rootName.count)
    }

    private mutating func completeFrame(end: Int) -> Outcome {
        state = .top
        inFrame = false
        junkBytes = 0
        junkReported = false
        if let error = discarding {
            discarding = nil
            return .failure(error)
        }
        if end - frameStart > maxMessageBytes { return .failure(tooLarge()) }
        return .frame(frameStart..<end)
    }

    /// A byte that cannot occur in well-formed XML: the frame so far is junk, and scanning resumes at that byte
    /// (it may be the `<` of the next message).
    private mutating func abandonFrame(at i: Int, _ reason: @autoclosure () -> String) -> Outcome? {
        state = .top
        inFrame = false
        if let error = discarding {
            discarding = nil
            return .failure(error)
        }
        junkBytes += i - frameStart
        if junkBytes > Self.maxJunkBytes { return notXML() }
        guard !junkReported else { return nil }
        junkReported = true
        return .failure(WireError(.malformedXML,
            "malformed <\(String(decoding: rootName, as: UTF8.self))> message: \(reason()); skipped to the next message"))
    }

    /// Skips from a junk byte to the next `<`.
    private mutating func skipJunk(_ p: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Outcome? {
        let start = i
        i = firstIndex(of: ASCII.lessThan, in: p, from: i + 1)
        junkBytes += i - start
        if junkBytes > Self.maxJunkBytes { return notXML() }
        guard !junkReported else { return nil }
        junkReported = true
        return .failure(WireError(.malformedXML,
            "found \(excerpt(UnsafeBufferPointer(rebasing: p[start..<i]))) between messages, where only "
                + "whitespace or a message starting with '<' may be; it was skipped"))
    }

    private func tooLarge() -> WireError {
        WireError(.messageTooLarge, "message exceeds the \(maxMessageBytes)-byte limit; it was skipped")
    }

    private func notXML() -> Outcome {
        .failure(WireError(.notXML,
            "more than \(Self.maxJunkBytes) bytes arrived that are not wire protocol XML messages; closing the connection",
            isFatal: true))
    }
}
