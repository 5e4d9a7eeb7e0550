/// What went wrong with one message; the server turns it into an `<error>` reply or a log line.
public enum WireErrorKind: String, Sendable, Equatable, CaseIterable {
    /// Not well-formed XML: bad tag syntax, misnested or unclosed elements, text where an element belongs,
    /// or data between messages.
    case malformedXML
    /// The message is larger than `WireLimits.maxMessageBytes`; it was skipped.
    case messageTooLarge
    /// Elements nest deeper than `WireLimits.maxDepth` allows; the message was skipped.
    case nestingTooDeep
    /// A `<!DOCTYPE>` with an internal subset (entity declarations); it is skipped, never expanded.
    case dtdRejected
    /// A `&name;` reference other than the five predefined XML entities.
    case unknownEntity
    /// A value that does not parse: integer, real, date, base64 data, boolean, UTF-8, a field of the wrong type,
    /// or a value outside its range (`ValueRanges`).
    case invalidValue
    /// An event without a `class` string.
    case missingClass
    /// A `<hello>` without a `deviceId` string.
    case missingDeviceId
    /// The same key twice in one dict.
    case duplicateKey
    /// An unknown top-level message, or an element that is not a property list value where a value belongs.
    case unexpectedElement
    /// A `<media>` chunk of a content type muevald does not store, or whose `kind` contradicts it.
    case unsupportedMedia
    /// The stream ended inside a message.
    case truncated
    /// Too much data that is not a message; the peer does not speak this protocol.
    case notXML
}

/// An error decoding one message. Unless `isFatal`, the decoder has already resynchronized and the next message
/// decodes normally.
public struct WireError: Error, Sendable, Equatable, CustomStringConvertible {
    public var kind: WireErrorKind
    /// One sentence saying what was wrong, for the device developer.
    public var message: String
    /// The event's `seq`, when it was parsed before the error, so the device can match the `<error>` reply.
    public var seq: Int64?
    /// The stream cannot be resynchronized; the server closes the connection.
    public var isFatal: Bool

    public init(_ kind: WireErrorKind, _ message: String, seq: Int64? = nil, isFatal: Bool = false) {
        self.kind = kind
        self.message = message
        self.seq = seq
        self.isFatal = isFatal
    }

    public var description: String {
        var text = "\(kind.rawValue): \(message)"
        if let seq { text += " (seq \(seq))" }
        return text
    }
}
