/// Reads a capture server's replies (`<welcome>`, `<ack>`, `<error>`, `<goodbye/>`) from the byte
/// stream of a connection, incrementally: append bytes as they arrive (split anywhere), then call
/// `next()` until it returns nil. A device needs no more of the protocol than this; muevald's own
/// decoder (which reads every message, in either form) is server code.
///
/// A reply it cannot read, or a message that is no reply, is skipped: the device keeps its events
/// until they are acknowledged. Memory stays within about `maxMessageBytes` plus one append.
public struct WireReplyReader: Sendable {
    public let maxMessageBytes: Int
    private var buffer: [UInt8] = []
    /// Where the next message starts in `buffer`.
    private var start = 0
    /// How far the search for the current message's closing tag got, so that each byte is searched once.
    private var searched = 0

    public init(maxMessageBytes: Int = 16 << 20) {
        self.maxMessageBytes = maxMessageBytes
    }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            (start, searched) = (0, 0)
        } else if start >= 64 << 10 {
            buffer.removeFirst(start)
            searched -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next reply, or nil when more bytes are needed.
    public mutating func next() -> WireMessage? {
        while let frame = nextFrame() {
            if let message = KeyValueMessage(Array(buffer[frame])).flatMap(Self.reply) { return message }
        }
        return nil
    }

    /// The bytes of the next whole message (from its `<` to its closing tag), skipping what cannot
    /// start one; nil when more bytes are needed.
    private mutating func nextFrame() -> Range<Int>? {
        while true {
            while start < buffer.count, [0x20, 0x09, 0x0A, 0x0D].contains(buffer[start]) { start += 1 }
            guard start < buffer.count else { return nil }
            // A message starts with `<` and a name of letters, ending in `>` or `/>`.
            guard buffer[start] == UInt8(ascii: "<") else {
                skip()
                continue
            }
            var nameEnd = start + 1
            while nameEnd < buffer.count, nameEnd - start <= 64, (0x61...0x7A).contains(buffer[nameEnd] | 0x20) { nameEnd += 1 }
            guard nameEnd < buffer.count else { return nil }
            guard nameEnd > start + 1, nameEnd - start <= 64 else {
                skip()
                continue
            }
            if buffer[nameEnd] == UInt8(ascii: "/") {
                guard nameEnd + 1 < buffer.count else { return nil }
                guard buffer[nameEnd + 1] == UInt8(ascii: ">") else {
                    skip()
                    continue
                }
                defer { skip(to: nameEnd + 2) }
                return start..<(nameEnd + 2)
            }
            guard buffer[nameEnd] == UInt8(ascii: ">") else {
                skip()
                continue
            }
            let closing = [UInt8(ascii: "<"), UInt8(ascii: "/")] + buffer[(start + 1)..<nameEnd] + [UInt8(ascii: ">")]
            let from = max(nameEnd + 1, searched - closing.count + 1)
            guard let end = buffer[from...].firstRange(of: closing)?.upperBound else {
                searched = buffer.count
                // Too long to be a reply: dropped while it streams past.
                if buffer.count - start > maxMessageBytes { skip(to: buffer.count) }
                return nil
            }
            defer { skip(to: end) }
            return start..<end
        }
    }

    /// Past the byte at `start`, to the next `<`.
    private mutating func skip() {
        skip(to: buffer[(start + 1)...].firstIndex(of: UInt8(ascii: "<")) ?? buffer.count)
    }

    private mutating func skip(to index: Int) {
        start = index
        searched = index
    }

    /// The reply a message is, as muevald's decoder reads it; nil for anything else.
    static func reply(_ message: KeyValueMessage) -> WireMessage? {
        let fields = message.fields
        switch message.name {
        case "ack":
            guard case .integer(let seq)? = fields["seq"] else { return nil }
            return .ack(seq: seq)
        case "welcome":
            guard case .string(let session)? = fields["session"] else { return nil }
            var sensors: [String] = []
            switch fields["sensors"] {
            case nil: break
            case .array(let items)?:
                for item in items {
                    guard case .string(let sensor) = item else { return nil }
                    sensors.append(sensor)
                }
            default: return nil
            }
            guard let tasks = WelcomeTask.list(fields["tasks"]) else { return nil }
            var questionnaire: String?
            switch fields["questionnaire"] {
            case nil: break
            case .string(let url)?: questionnaire = url
            default: return nil
            }
            return .welcome(Welcome(sessionId: session, sensors: sensors, tasks: tasks, questionnaire: questionnaire))
        case "error":
            guard case .string(let reason)? = fields["reason"],
                  let seq = integer(fields["seq"]), let fromSeq = integer(fields["fromSeq"]) else { return nil }
            return .error(WireReplyError(reason: reason, seq: seq, fromSeq: fromSeq))
        case "goodbye":
            return .goodbye
        default:
            return nil
        }
    }

    /// `.some(nil)` when absent, nil when of another type.
    private static func integer(_ value: PlistValue?) -> Int64?? {
        switch value {
        case nil: return .some(nil)
        case .integer(let number)?: return .some(number)
        default: return nil
        }
    }
}
