import MuEvalWire
import OrderedCollections
import Testing
import WireProtocol

/// The device's reader of the server's replies, with muevald's decoder as the reference.
@Suite struct WireReplyReaderTests {
    static let tricky = "a <b> & c\r\n\t\u{1}é🙂"

    static let replies: [WireMessage] = [
        .welcome(Welcome(sessionId: "4", sensors: [])),
        .welcome(Welcome(sessionId: tricky, sensors: ["UserInputEvent", "microphone"])),
        .welcome(Welcome(sessionId: "7", sensors: [], tasks: [
            WelcomeTask(name: "add-note", instructions: tricky, timeLimit: 90.5, order: 1),
            WelcomeTask(name: "find ✓", order: 2),
        ], questionnaire: "https://lab.example:8443/i/2345abcdef")),
        .ack(seq: 0), .ack(seq: .max), .ack(seq: -3),
        .error(WireReplyError(reason: tricky)),
        .error(WireReplyError(reason: "not stored", seq: 12, fromSeq: 10)),
        .goodbye,
    ]

    static func encoded(_ message: WireMessage) -> [UInt8] {
        switch message {
        case .welcome(let welcome): WireEncoder.welcome(welcome)
        case .ack(let seq): WireEncoder.ack(seq: seq)
        case .error(let error): WireEncoder.error(error)
        case .goodbye: WireEncoder.goodbye()
        case .hello, .event, .media: []
        }
    }

    static func read(_ chunks: [[UInt8]], limit: Int = 16 << 20) -> [WireMessage] {
        var reader = WireReplyReader(maxMessageBytes: limit)
        var messages: [WireMessage] = []
        for chunk in chunks {
            reader.append(chunk)
            while let message = reader.next() { messages.append(message) }
        }
        return messages
    }

    @Test func everyReplyReadsBackAsMuevaldsDecoderReadsIt() {
        let bytes = Self.replies.flatMap(Self.encoded)
        var decoder = WireDecoder()
        decoder.append(bytes)
        var decoded: [WireMessage] = []
        while case .success(let message)? = decoder.next() { decoded.append(message) }
        #expect(decoded == Self.replies)
        #expect(Self.read([bytes]) == Self.replies)
    }

    @Test func repliesSplitAnywhereReadTheSame() {
        let bytes = Self.replies.flatMap(Self.encoded)
        #expect(Self.read(bytes.map { [$0] }) == Self.replies)
        for cut in stride(from: 1, to: bytes.count, by: 7) {
            #expect(Self.read([Array(bytes[..<cut]), Array(bytes[cut...])]) == Self.replies)
        }
    }

    @Test func whatIsNoReplyIsSkipped() {
        let junk: [[UInt8]] = [
            Array("garbage > <".utf8),
            Array("<ack><key>seq</key><string>x</string></ack>\n".utf8),  // wrong type
            Array("<welcome><key>sensors</key><array/></welcome>".utf8),  // no session
            Array("<error><key>reason</key><string>r</string><key>seq</key><real>1.5</real></error>".utf8),
            Array("<ack><key>seq<integer>1</integer></ack>".utf8),  // broken markup
            WireEncoder.event(["class": .string("UserInputEvent"), "seq": .integer(9)]),
            Array("<1/><notes/>".utf8),
        ]
        let good = WireEncoder.ack(seq: 5)
        #expect(Self.read([junk.joined() + good]) == [.ack(seq: 5)])
        #expect(Self.read((junk.joined() + good).map { [$0] }) == [.ack(seq: 5)])
    }

    /// What a newer server may add reads: unknown keys in a welcome and in its tasks are ignored, as old
    /// devices ignore `tasks` and `questionnaire`; a plain session's welcome is written as before them.
    @Test func aWelcomeReadsWithKeysItDoesNotKnow() {
        let newer = Array("""
            <welcome><key>session</key><string>9</string><key>sensors</key><array/>\
            <key>tasks</key><array><dict><key>name</key><string>t</string><key>order</key><integer>1</integer>\
            <key>timeLimit</key><integer>60</integer><key>hint</key><string>later</string></dict></array>\
            <key>survey</key><dict/></welcome>
            """.utf8)
        #expect(Self.read([newer]) == [.welcome(Welcome(sessionId: "9", sensors: [], tasks: [WelcomeTask(name: "t", timeLimit: 60, order: 1)]))])
        #expect(String(decoding: WireEncoder.welcome(Welcome(sessionId: "4", sensors: ["gps"])), as: UTF8.self)
                == "<welcome><key>session</key><string>4</string><key>sensors</key><array><string>gps</string></array></welcome>\n")
    }

    @Test func aWelcomeWithMalformedTasksIsNoReply() {
        let bad = [
            "<array><dict><key>order</key><integer>1</integer></dict></array>",  // no name
            "<array><dict><key>name</key><string>t</string></dict></array>",  // no order
            "<array><dict><key>name</key><string>t</string><key>order</key><integer>1</integer><key>timeLimit</key><real>-1</real></dict></array>",
            "<array><string>t</string></array>",
            "<string>t</string>",
        ]
        for tasks in bad {
            let bytes = Array("<welcome><key>session</key><string>9</string><key>tasks</key>\(tasks)</welcome>".utf8)
            #expect(Self.read([bytes + WireEncoder.ack(seq: 1)]) == [.ack(seq: 1)], "\(tasks)")
        }
    }

    @Test func aMessageLongerThanTheLimitIsDroppedAndReadingGoesOn() {
        let long = WireEncoder.error(WireReplyError(reason: String(repeating: "x", count: 1000)))
        let bytes = long + WireEncoder.ack(seq: 1)
        #expect(Self.read(stride(from: 0, to: bytes.count, by: 100).map { Array(bytes[$0..<min($0 + 100, bytes.count)]) }, limit: 200)
                == [.ack(seq: 1)])
        #expect(Self.read([bytes], limit: 2000) == [.error(WireReplyError(reason: String(repeating: "x", count: 1000))), .ack(seq: 1)])
    }

    /// The spool reads back the messages the library wrote: every value the encoder writes.
    @Test func keyValueMessagesReadBackWhatTheEncoderWrites() {
        let fields: OrderedDictionary<String, PlistValue> = [
            "class": .string(Self.tricky), "timestamp": .real(1_700_000_000.25), "seq": .integer(-7),
            "flag": .bool(true), "off": .bool(false), "when": .date(1_700_000_000.5), "empty": .string(""),
            "blob": .data([0, 1, 2, 250, 255]), "none": .data([]), "list": .array([.integer(1), .array([]), .dict([:])]),
            "nested": .dict(["x": .real(-0.5), "y": .array([.string("s")])]), "huge": .real(1e300),
        ]
        #expect(KeyValueMessage(WireEncoder.event(fields)) == KeyValueMessage(name: "event", fields: fields))
        let media = WireMedia(stream: "s", format: .wav, part: 0, start: 1, duration: 0.5, seq: 3, bytes: [1, 2, 3])
        #expect(KeyValueMessage(WireEncoder.media(media))?.fields["contentType"] == .string("audio/wav"))
        #expect(KeyValueMessage(WireEncoder.goodbye()) == KeyValueMessage(name: "goodbye"))
        #expect(KeyValueMessage(Array("<event><key>a</key></event>".utf8)) == nil)
        #expect(KeyValueMessage(WireEncoder.goodbye() + WireEncoder.goodbye()) == nil, "one message, not two")
    }
}
