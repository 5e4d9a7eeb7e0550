@testable import MuEvalCapture
import MuEvalWire
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing
import WireProtocol

/// The handler that reads the server's replies, on an `EmbeddedChannel`.
@Suite struct ReplyReaderTests {
    @Test func repliesSplitAnywhereAreDecodedAndJunkBetweenThemIsSkipped() throws {
        let received = NIOLockedValueBox<[WireMessage]>([])
        let closed = NIOLockedValueBox(0)
        let channel = EmbeddedChannel(handler: ReplyReader(received: { message in received.withLockedValue { $0.append(message) } },
                                                           closed: { closed.withLockedValue { $0 += 1 } }))
        let bytes = WireEncoder.welcome(Welcome(sessionId: "4", sensors: ["UserInputEvent"])) + Array("<nonsense/>\n".utf8)
            + WireEncoder.ack(seq: 17)
        // One byte at a time: a reply may arrive in any number of reads.
        for byte in bytes { try channel.writeInbound(channel.allocator.buffer(bytes: [byte])) }
        #expect(received.withLockedValue { $0 } == [.welcome(Welcome(sessionId: "4", sensors: ["UserInputEvent"])), .ack(seq: 17)])
        #expect(closed.withLockedValue { $0 } == 0)
        _ = try channel.finish()
        #expect(closed.withLockedValue { $0 } == 1, "the end of the connection is said once")
    }
}
