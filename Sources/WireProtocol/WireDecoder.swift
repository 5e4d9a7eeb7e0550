/// Decodes the byte stream of one connection into messages, incrementally: append bytes as they arrive (split
/// anywhere), then call `next()` until it returns nil.
///
/// A bad message yields one `WireError` and decoding goes on with the next message; only errors with `isFatal`
/// end the stream (after one, `next()` returns nil and appended bytes are dropped). Memory stays within about
/// `maxMessageBytes` plus one append: oversized messages are dropped while they stream past.
public struct WireDecoder: Sendable {
    public let limits: WireLimits
    private var buffer: [UInt8] = []
    private var scanner: FrameScanner
    private var parser: MessageParser
    private var failed = false
    /// Cleared when a message start was not taken whole, until more bytes arrive: a stream that keeps
    /// defeating the whole-message path costs at most one wasted search per append.
    private var wholeMessagesArmed = true
    private var closingTag = ClosingTagSearch()

    /// Capacity kept when the buffer empties; anything larger (after a big message) is released.
    private static let retainedCapacity = 1 << 20
    /// Consumed bytes are dropped from the front once there are this many (or the buffer is fully consumed),
    /// so the copy is rare and small compared to the bytes decoded.
    private static let compactionThreshold = 64 << 10

    public init(limits: WireLimits = .init()) {
        self.limits = limits
        scanner = FrameScanner(limits: limits)
        parser = MessageParser(limits: limits)
    }

    /// Bytes held, for memory accounting: once `next()` has returned nil, just the incomplete message.
    public var bufferedByteCount: Int { buffer.count }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !failed else { return }
        compact()
        wholeMessagesArmed = true
        bytes.withMemoryRebound(to: UInt8.self) { buffer.append(contentsOf: $0) }
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    public mutating func append<S: Sequence<UInt8>>(_ bytes: S) {
        guard !failed else { return }
        compact()
        wholeMessagesArmed = true
        buffer.append(contentsOf: bytes)
    }

    /// The next message or error, or nil when more bytes are needed.
    public mutating func next() -> Result<WireMessage, WireError>? {
        guard !failed else { return nil }
        if wholeMessagesArmed, let message = nextWholeMessage() { return .success(message) }
        let outcome = buffer.withUnsafeBufferPointer { scanner.scan($0) }
        switch outcome {
        case .needMore:
            compact()
            return nil
        case .failure(let error):
            if error.isFatal { fail() }
            return .failure(error)
        case .frame(let range):
            return buffer.withUnsafeBufferPointer { parser.parse(UnsafeBufferPointer(rebasing: $0[range])) }
        }
    }

    /// The usual case without the scanner's byte-by-byte pass: a message that arrived whole ends at the
    /// first closing tag of its root, and is taken there if it parses. Anything else (a message still
    /// arriving, an error, a closing tag inside a comment) is left to the scanner, which then decides as
    /// it always does. Both agree on every message taken: a message that parses holds no earlier point
    /// where the scanner would end it, and none longer than `maxMessageBytes` is tried.
    private mutating func nextWholeMessage() -> WireMessage? {
        buffer.withUnsafeBufferPointer { p in
            guard let start = scanner.messageStart(in: p) else { return nil }
            let limit = min(p.count, start + limits.maxMessageBytes)
            guard let end = closingTag.end(in: UnsafeBufferPointer(rebasing: p[..<limit]), root: start),
                  case .success(let message) = parser.parse(UnsafeBufferPointer(rebasing: p[start..<end]))
            else {
                wholeMessagesArmed = false
                return nil
            }
            scanner.skipMessage(to: end)
            return message
        }
    }

    /// Ends the stream; call after `next()` returned nil. Returns `.truncated` when a message was cut off
    /// (trailing whitespace is fine). The decoder is empty afterwards.
    public mutating func finish() -> WireError? {
        guard !failed else { return nil }
        let unfinished = scanner.unfinished(bufferCount: buffer.count)
        self = WireDecoder(limits: limits)
        return unfinished.map { WireError(.truncated, "the stream ended inside \($0)", isFatal: true) }
    }

    private mutating func fail() {
        failed = true
        buffer = []
    }

    private mutating func compact() {
        let consumed = scanner.firstNeededIndex
        if consumed == buffer.count {
            if buffer.capacity > Self.retainedCapacity { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
        } else if consumed >= Self.compactionThreshold {
            buffer.removeFirst(consumed)
        } else {
            return
        }
        scanner.bufferDropped(consumed)
    }
}

/// Finds the closing tag of a message's root element, by Horspool's search for `</name`: it mostly
/// skips several bytes per look, where a byte-by-byte scan looks at each. The table is kept while
/// messages have the same root name, as they nearly always do.
struct ClosingTagSearch: Sendable {
    private var needle: [UInt8] = []
    private var shifts = [Int](repeating: 1, count: 256)
    /// Longer root names are left to the scanner (no message has one).
    private static let maxNeedle = 64

    /// The index after the first `</name>` (`</name >` too) where `name` is the name of the tag at `root`.
    mutating func end(in p: UnsafeBufferPointer<UInt8>, root: Int) -> Int? {
        var nameEnd = root + 1
        while nameEnd < p.count, isNameByte(p[nameEnd]) { nameEnd += 1 }
        guard prepare(name: UnsafeBufferPointer(rebasing: p[root + 1..<nameEnd])) else { return nil }
        return needle.withUnsafeBufferPointer { needle in
            shifts.withUnsafeBufferPointer { shifts in
                let m = needle.count
                var i = nameEnd
                while i + m < p.count {
                    let last = p[i + m - 1]
                    if last == needle[m - 1], bytesEqual(UnsafeBufferPointer(rebasing: p[i..<i + m]), needle) {
                        var j = i + m
                        while j < p.count, isXMLWhitespace(p[j]) { j += 1 }
                        if j < p.count, p[j] == ASCII.greaterThan { return j + 1 }
                    }
                    i += shifts[Int(last)]
                }
                return nil
            }
        }
    }

    private mutating func prepare(name: UnsafeBufferPointer<UInt8>) -> Bool {
        let m = name.count + 2
        guard m <= Self.maxNeedle else { return false }
        if needle.count == m, needle.withUnsafeBufferPointer({ bytesEqual(UnsafeBufferPointer(rebasing: $0[2...]), name) }) {
            return true
        }
        needle = [ASCII.lessThan, ASCII.slash] + Array(name)
        for byte in 0..<256 { shifts[byte] = m }
        for (index, byte) in needle.dropLast().enumerated() { shifts[Int(byte)] = m - 1 - index }
        return true
    }
}
