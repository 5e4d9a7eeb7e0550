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
        bytes.withMemoryRebound(to: UInt8.self) { buffer.append(contentsOf: $0) }
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    public mutating func append<S: Sequence<UInt8>>(_ bytes: S) {
        guard !failed else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The next message or error, or nil when more bytes are needed.
    public mutating func next() -> Result<WireMessage, WireError>? {
        guard !failed else { return nil }
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
