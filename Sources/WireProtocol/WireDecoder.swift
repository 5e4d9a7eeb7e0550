public import MuEvalWire
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
    /// The index after the buffer's last '>', once looked up, until the buffer changes: messages taken
    /// whole end there at the latest, and the backward search runs once per append, not per message.
    private var frameableEnd: Int?

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

    /// Bytes held, for memory accounting (the capture server's partial-message budget): once `next()`
    /// has returned nil, the incomplete message, if any, plus less than 64 KiB already decoded
    /// (dropped in one copy once there is more); 0 when the stream stopped between messages.
    public var bufferedByteCount: Int { buffer.count }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !failed else { return }
        compact()
        wholeMessagesArmed = true
        frameableEnd = nil
        bytes.withMemoryRebound(to: UInt8.self) { buffer.append(contentsOf: $0) }
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    public mutating func append<S: Sequence<UInt8>>(_ bytes: S) {
        guard !failed else { return }
        compact()
        wholeMessagesArmed = true
        frameableEnd = nil
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

    /// The usual case without the scanner's byte-by-byte pass: a message that arrived whole is parsed
    /// where it starts, and taken if it parses. Anything else (a message still arriving, an error) is left
    /// to the scanner, which then decides as it always does. Both agree on every message taken: one that
    /// parses holds no point where the scanner would end it before its root's closing tag, and none
    /// longer than `maxMessageBytes` can parse here.
    private mutating func nextWholeMessage() -> WireMessage? {
        buffer.withUnsafeBufferPointer { p in
            guard let start = scanner.messageStart(in: p) else { return nil }
            // The parser counts on what the scanner guarantees of a frame: it ends with '>'.
            let bufferEnd = frameableEnd ?? Self.afterLastGreaterThan(in: p, before: p.count, notBefore: start)
            frameableEnd = bufferEnd
            let end = bufferEnd - start <= limits.maxMessageBytes
                ? bufferEnd : Self.afterLastGreaterThan(in: p, before: start + limits.maxMessageBytes, notBefore: start)
            guard end > start,
                  let (message, length) = parser.parseLeading(UnsafeBufferPointer(rebasing: p[start..<end]))
            else {
                wholeMessagesArmed = false
                return nil
            }
            scanner.skipMessage(to: start + length)
            return message
        }
    }

    private static func afterLastGreaterThan(in p: UnsafeBufferPointer<UInt8>, before: Int, notBefore start: Int) -> Int {
        var end = before
        while end > start, p[end - 1] != ASCII.greaterThan { end -= 1 }
        return end
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
        frameableEnd = nil
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
