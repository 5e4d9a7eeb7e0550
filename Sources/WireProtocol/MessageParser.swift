internal import MuEvalWire
internal import OrderedCollections

/// Parses one complete frame in a single pass. Events are written straight to typed JSON; the other messages,
/// rare and small, become a `PlistValue` dict first.
struct MessageParser {
    private let maxDepth: Int
    private let maxMediaChunkBytes: Int
    private let ranges: ValueRanges
    private var keys = DictKeyTracker()
    private var fields = EventFields()
    /// Decoded text, kept between messages so its capacity is reused.
    private var scratch: [UInt8] = []
    /// An event's JSON as it is written, kept between messages likewise; each payload is a copy of
    /// exactly its bytes, so that queued events hold no slack.
    private var jsonScratch: [UInt8] = []
    /// The range check's storage, kept between messages likewise.
    private var rangeCheck: ValueRangeCheck
    /// Scratch capacity kept after a large message; anything larger is released.
    private static let retainedScratch = 64 << 10

    init(limits: WireLimits) {
        maxDepth = limits.maxDepth
        maxMediaChunkBytes = limits.maxMediaChunkBytes
        ranges = limits.valueRanges
        rangeCheck = ValueRangeCheck(ranges: limits.valueRanges, tracksPath: false)
    }

    /// Parses a frame that holds exactly one message.
    mutating func parse(_ frame: UnsafeBufferPointer<UInt8>) -> Result<WireMessage, WireError> {
        parse(frame, wholeFrame: true).map(\.message)
    }

    /// The message at the start of `bytes`, which may go on past it, and its length; nil when none parses
    /// there (cut off, or invalid: the caller frames it another way and parses that to learn the error).
    mutating func parseLeading(_ bytes: UnsafeBufferPointer<UInt8>) -> (message: WireMessage, length: Int)? {
        guard case .success(let parsed) = parse(bytes, wholeFrame: false) else { return nil }
        return parsed
    }

    private mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>, wholeFrame: Bool)
        -> Result<(message: WireMessage, length: Int), WireError>
    {
        var cursor = XMLCursor(bytes, scratch: scratch)
        scratch = []  // leaves the cursor the only owner, so appending does not copy
        defer { scratch = cursor.scratch }
        keys.reset()
        fields = EventFields()
        do throws(ParseFailure) {
            let message = try self.message(&cursor)
            guard cursor.atEnd || !wholeFrame else {
                throw ParseFailure(.malformedXML, "unexpected \(cursor.upcoming) after the message")
            }
            return .success((message, cursor.index))
        } catch {
            return .failure(WireError(error.kind, error.message, seq: fields.seq))
        }
    }

    /// One value element (`<dict>…</dict>`, `<string>…</string>`, …) as a tree, and nothing after it
    /// but whitespace; on failure the message and the byte offset where reading stopped.
    mutating func plistValue(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<PlistValue, PlistElementError> {
        var cursor = XMLCursor(bytes, scratch: scratch)
        scratch = []
        defer { scratch = cursor.scratch }
        keys.reset()
        fields = EventFields()
        var tree = PlistTreeBuilder()
        do throws(ParseFailure) {
            try cursor.skipMisc()
            guard cursor.peek() == ASCII.lessThan, cursor.peek(1) != ASCII.slash else {
                throw ParseFailure(.malformedXML, "expected a value element, found \(cursor.upcoming)")
            }
            try value(&cursor, depth: 0, sink: &tree, field: nil)
            try cursor.skipMisc()
            guard cursor.atEnd else { throw ParseFailure(.malformedXML, "unexpected \(cursor.upcoming) after the value") }
            guard let value = tree.value else { throw ParseFailure(.malformedXML, "no value") }
            return .success(value)
        } catch {
            return .failure(PlistElementError(message: error.message, offset: cursor.index))
        }
    }

    private mutating func message(_ c: inout XMLCursor) throws(ParseFailure) -> WireMessage {
        let root = try c.startTag()
        let name = c.slice(root.name)
        if bytesEqual(name, "event") { return .event(try event(&c, root)) }
        if bytesEqual(name, "plist") {
            // An Apple property list document whose dict is the event.
            try c.skipMisc()
            guard !root.isEmpty, c.peek() == ASCII.lessThan, c.peek(1) != ASCII.slash else {
                throw ParseFailure(.unexpectedElement, "<plist> must hold one <dict>, the event")
            }
            let dict = try c.startTag()
            guard bytesEqual(c.slice(dict.name), "dict") else {
                throw ParseFailure(.unexpectedElement, "<plist> must hold one <dict>, the event; found <\(c.name(dict.name))>")
            }
            let event = try event(&c, dict)
            try c.skipMisc()
            try c.endTag(root.name)
            return .event(event)
        }
        if bytesEqual(name, "media") {
            let media = try controlFields(&c, root, "media")
            // Read first, so that an error about the rest names the chunk's seq for the device.
            fields.seq = try? media.integer("seq")
            return .media(try WireMedia(media, maxBytes: maxMediaChunkBytes, ranges: ranges))
        }
        if bytesEqual(name, "hello") {
            let hello = try DeviceHello(try controlFields(&c, root, "hello"))
            if let problem = ranges.problem(in: hello) { throw ParseFailure(.invalidValue, "<hello> " + problem.description) }
            return .hello(hello)
        }
        if bytesEqual(name, "goodbye") {
            _ = try controlFields(&c, root, "goodbye")
            return .goodbye
        }
        if bytesEqual(name, "welcome") { return .welcome(try Welcome(try controlFields(&c, root, "welcome"))) }
        if bytesEqual(name, "ack") { return .ack(seq: try ackSeq(try controlFields(&c, root, "ack"))) }
        if bytesEqual(name, "error") { return .error(try WireReplyError(try controlFields(&c, root, "error"))) }
        throw ParseFailure(.unexpectedElement,
            "unknown message <\(c.name(root.name))>; expected <event>, <plist>, <media>, <hello> or <goodbye>")
    }

    private mutating func event(_ c: inout XMLCursor, _ tag: XMLCursor.Tag) throws(ParseFailure) -> WireEvent {
        var sink = CheckedEventSink(json: TypedJSONWriter(reusing: &jsonScratch), check: rangeCheck)
        rangeCheck = ValueRangeCheck(ranges: ranges, tracksPath: false)  // leaves the sink the only owner of the storage
        sink.check.reset()
        defer {
            jsonScratch = sink.json.emptied(keepingAtMost: Self.retainedScratch)
            rangeCheck = sink.check
        }
        sink.beginDict()
        if !tag.isEmpty { try dictBody(&c, closing: tag.name, depth: 1, sink: &sink, capturesEventFields: true) }
        sink.endDict()
        if let problem = fields.problem { throw problem }
        guard let eventClass = fields.eventClass else {
            throw ParseFailure(.missingClass, "the event has no \"class\"; add <key>class</key><string>…</string>")
        }
        if let problem = sink.check.problem {
            // Rare: checked again as a tree, which names the value's path.
            let named = (try? TypedJSON.decodeLeavingBlobs(sink.json.json)).flatMap(ranges.problem(inEvent:)) ?? problem
            throw ParseFailure(.invalidValue, named.description)
        }
        return WireEvent(eventClass: eventClass, timestamp: fields.timestamp, seq: fields.seq, sensor: fields.sensor,
                         payload: sink.json.json.withUnsafeBufferPointer { Array($0) }, blobs: sink.json.blobs)
    }

    private mutating func controlFields(_ c: inout XMLCursor, _ tag: XMLCursor.Tag, _ message: String)
        throws(ParseFailure) -> ControlFields
    {
        var tree = PlistTreeBuilder()
        tree.beginDict()
        if !tag.isEmpty { try dictBody(&c, closing: tag.name, depth: 1, sink: &tree, capturesEventFields: false) }
        tree.endDict()
        guard case .dict(let dict)? = tree.value else { return ControlFields(message: message, dict: [:]) }
        return ControlFields(message: message, dict: dict)
    }

    /// `<key>…</key>` value pairs up to `</closing>`.
    private mutating func dictBody<S: PlistSink>(_ c: inout XMLCursor, closing: Range<Int>, depth: Int,
                                                 sink: inout S, capturesEventFields: Bool) throws(ParseFailure) {
        keys.beginDict()
        defer { keys.endDict() }
        while true {
            try c.skipMisc()
            try expectElement(c, in: closing)
            if c.peek(1) == ASCII.slash {
                try c.endTag(closing)
                return
            }
            let keyTag = try c.startTag()
            guard bytesEqual(c.slice(keyTag.name), "key") else {
                throw ParseFailure(.unexpectedElement,
                    "expected <key> in <\(c.name(closing))>, found <\(c.name(keyTag.name))> (every value needs a <key> before it)")
            }
            let text = keyTag.isEmpty ? .frame(0..<0) : try c.readText()
            // The sink gets the key before the duplicate check; on an error its output is dropped anyway.
            let (isValid, field) = c.withText(text) { key -> (Bool, EventFields.Field?) in
                guard isValidUTF8(key) else { return (false, nil) }
                keys.appendCandidate(key)
                sink.key(key)
                return (true, capturesEventFields ? EventFields.Field(key: key) : nil)
            }
            guard isValid else { throw ParseFailure(.invalidValue, "a <key> is not valid UTF-8") }
            guard keys.commitCandidate() else {
                throw ParseFailure(.duplicateKey, "key \"\(keys.candidate)\" appears twice in one dict")
            }
            if !keyTag.isEmpty { try c.endTag(keyTag.name) }
            try c.skipMisc()
            guard c.peek() == ASCII.lessThan, c.peek(1) != ASCII.slash else {
                let key = keys.withLastKey { String(decoding: $0, as: UTF8.self) }
                throw ParseFailure(.malformedXML, "key \"\(key)\" has no value; found \(c.upcoming)")
            }
            do throws(ParseFailure) {
                try value(&c, depth: depth, sink: &sink, field: field)
            } catch {
                var failure = error
                failure.path.append(.key(keys.withLastKey { String(decoding: $0, as: UTF8.self) }))
                throw failure
            }
        }
    }

    /// Where a key or value belongs, only an element or the closing tag may be.
    private func expectElement(_ c: XMLCursor, in closing: Range<Int>) throws(ParseFailure) {
        guard c.peek() != ASCII.lessThan else { return }
        if c.atEnd { throw ParseFailure(.malformedXML, "<\(c.name(closing))> is not closed") }
        throw ParseFailure(.malformedXML, "text \(c.upcoming) in <\(c.name(closing))>, where only elements belong")
    }

    private mutating func value<S: PlistSink>(_ c: inout XMLCursor, depth: Int, sink: inout S,
                                              field: EventFields.Field?) throws(ParseFailure) {
        let tag = try c.startTag()
        let name = c.slice(tag.name)
        switch name.count {
        case 6 where bytesEqual(name, "string"):
            let text = tag.isEmpty ? .frame(0..<0) : try c.readText()
            let valid = c.withText(text) { utf8 -> Bool in
                guard isValidUTF8(utf8) else { return false }
                sink.string(utf8)
                if let field { fields.capture(field, string: utf8) }
                return true
            }
            guard valid else { throw ParseFailure(.invalidValue, "<string> is not valid UTF-8") }
            if !tag.isEmpty { try c.endTag(tag.name) }
        case 7 where bytesEqual(name, "integer"):
            let value = try scalar(&c, tag, parseInteger, "a decimal integer in the signed 64-bit range")
            sink.integer(value)
            if let field { fields.capture(field, integer: value) }
        case 4 where bytesEqual(name, "real"):
            let value = try scalar(&c, tag, parseReal, "a decimal number, nan, inf or -inf")
            sink.real(value)
            if let field { fields.capture(field, real: value) }
        case 4 where bytesEqual(name, "date"):
            let value = try scalar(&c, tag, ISO8601.parse, "an ISO 8601 date like 2011-02-19T22:43:06Z")
            sink.date(value)
            if let field { fields.capture(field, date: value) }
        case 4 where bytesEqual(name, "data"):
            let text = tag.isEmpty ? .frame(0..<0) : try c.readText()
            guard let bytes = c.withText(text, Base64.decode) else {
                throw ParseFailure(.invalidValue, "<data> is not valid base64 (standard alphabet, '=' padding)")
            }
            if !tag.isEmpty { try c.endTag(tag.name) }
            sink.data(bytes)
            if let field { fields.capture(field, other: "data") }
        case 4 where bytesEqual(name, "true"), 5 where bytesEqual(name, "false"):
            if !tag.isEmpty {
                let text = try c.readText()
                guard c.withText(text, { $0.allSatisfy(isXMLWhitespace) }) else {
                    throw ParseFailure(.invalidValue, "<\(c.name(tag.name))> must be empty, as in <\(c.name(tag.name))/>")
                }
                try c.endTag(tag.name)
            }
            sink.bool(name.count == 4)
            if let field { fields.capture(field, other: "boolean") }
        case 5 where bytesEqual(name, "array"):
            try checkDepth(depth + 1)
            sink.beginArray()
            var index = 0
            while !tag.isEmpty {
                try c.skipMisc()
                try expectElement(c, in: tag.name)
                if c.peek(1) == ASCII.slash {
                    try c.endTag(tag.name)
                    break
                }
                do throws(ParseFailure) {
                    try value(&c, depth: depth + 1, sink: &sink, field: nil)
                } catch {
                    var failure = error
                    failure.path.append(.index(index))
                    throw failure
                }
                index += 1
            }
            sink.endArray()
            if let field { fields.capture(field, other: "array") }
        case 4 where bytesEqual(name, "dict"):
            try checkDepth(depth + 1)
            sink.beginDict()
            if !tag.isEmpty { try dictBody(&c, closing: tag.name, depth: depth + 1, sink: &sink, capturesEventFields: false) }
            sink.endDict()
            if let field { fields.capture(field, other: "dict") }
        case 3 where bytesEqual(name, "key"):
            throw ParseFailure(.unexpectedElement, "found <key> where a value belongs (each <key> needs one value after it)")
        default:
            throw ParseFailure(.unexpectedElement,
                "<\(c.name(tag.name))> is not a property list value; use string, integer, real, true, false, date, data, array or dict")
        }
    }

    /// `depth` is that of a container about to open: an event's own key/value list is depth 1.
    private func checkDepth(_ depth: Int) throws(ParseFailure) {
        guard depth <= maxDepth else {
            throw ParseFailure(.nestingTooDeep, "values nest more than \(maxDepth) levels deep")
        }
    }

    /// The trimmed text of a scalar element, parsed.
    private func scalar<T>(_ c: inout XMLCursor, _ tag: XMLCursor.Tag,
                           _ parse: (UnsafeBufferPointer<UInt8>) -> T?, _ expected: String) throws(ParseFailure) -> T {
        let text = tag.isEmpty ? .frame(0..<0) : try c.readText()
        let parsed = c.withText(text) { parse(trimmed($0)) }
        guard let parsed else {
            let found = c.withText(text) { excerpt(trimmed($0)) }
            throw ParseFailure(.invalidValue, "<\(c.name(tag.name))> \(found) is not \(expected)")
        }
        if !tag.isEmpty { try c.endTag(tag.name) }
        return parsed
    }
}

/// `p` without leading and trailing XML whitespace.
private func trimmed(_ p: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
    var start = 0
    var end = p.count
    while start < end, isXMLWhitespace(p[start]) { start += 1 }
    while end > start, isXMLWhitespace(p[end - 1]) { end -= 1 }
    return UnsafeBufferPointer(rebasing: p[start..<end])
}
