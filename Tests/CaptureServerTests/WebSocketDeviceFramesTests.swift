@testable import CaptureServer
import Foundation
import Logging
import MuEvalWire
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing
import WireProtocol

/// A web device's connection as the upgrade leaves it: WebSocket frames in and out of
/// [`WebSocketDeviceFrames` → `DeviceConnectionHandler`], with a real registry, catalog and session files.
@Suite struct WebSocketDeviceFramesTests {
    private static let address = try! SocketAddress(ipAddress: "10.0.0.7", port: 40000)

    /// Added to a connected channel, as the console's upgrade adds them.
    /// `behindConsole`: the console's WebSocket handler would follow (the tail of the pipeline here).
    private func channel(_ temporary: TemporaryRegistry, mustPresentCode: Bool, address: String? = nil,
                         behindConsole: Bool = false) async throws -> NIOAsyncTestingChannel {
        let channel = NIOAsyncTestingChannel()
        try await channel.connect(to: Self.address).get()
        let transport = DeviceTransport(address: address, mustPresentCode: mustPresentCode, admitted: false)
        try await channel.testingEventLoop.executeInContext {
            let frames = WebSocketDeviceFrames()
            try channel.pipeline.syncOperations.addHandlers([
                frames,
                DeviceConnectionHandler(registry: temporary.registry, connections: temporary.connections, ledger: temporary.ledger,
                                        counters: temporary.counters, configuration: CaptureConfiguration(),
                                        partialBudget: PartialMessageBudget(limit: 1 << 20), transport: transport, logger: Logger(label: "test")),
            ])
            if behindConsole { try channel.pipeline.syncOperations.addHandler(WebSocketControlLane(frames: frames)) }
        }
        return channel
    }

    private func frame(_ channel: NIOAsyncTestingChannel, _ text: String, opcode: WebSocketOpcode = .text, fin: Bool = true) async throws {
        try await channel.writeInbound(WebSocketFrame(fin: fin, opcode: opcode, data: channel.allocator.buffer(string: text)))
    }

    /// The frames written so far: each reply is one text frame holding whole messages.
    private func written(_ channel: NIOAsyncTestingChannel) async throws -> [WebSocketFrame] {
        var frames: [WebSocketFrame] = []
        while let frame = try await channel.readOutbound(as: WebSocketFrame.self) { frames.append(frame) }
        return frames
    }

    private func messages(_ frames: [WebSocketFrame]) -> [WireMessage] {
        frames.filter { $0.opcode == .text }.flatMap { replies(Array($0.data.readableBytesView)) }
    }

    @Test func textMessagesAreTheByteStreamAndEachReplyIsATextMessage() async throws {
        let temporary = try TemporaryRegistry()
        let session = try await temporary.start("web")
        let channel = try await channel(temporary, mustPresentCode: false)

        // Two messages in one text message, a third split over a message and its continuation.
        let third = eventXML(seq: 3)
        try await frame(channel, "<hello><key>deviceId</key><string>browser</string></hello>" + eventXML(seq: 1) + eventXML(seq: 2))
        try await frame(channel, String(third.prefix(30)), fin: false)
        try await frame(channel, String(third.dropFirst(30)), opcode: .continuation)
        var frames = try await written(channel)
        #expect(messages(frames).first == .welcome(Welcome(sessionId: String(session.id), sensors: [])))
        try await session.journal.flush()
        // An ack may already have come with the welcome: every frame so far counts.
        #expect(try await waitUntil {
            await channel.testingEventLoop.run()
            frames += try await written(channel)
            return messages(frames).last == .ack(seq: 3)
        }, "acks reach the browser as text messages: \(messages(frames))")
        #expect(frames.allSatisfy { $0.opcode == .text && $0.fin }, "one whole text message per reply")
        #expect(session.snapshot.events == 3)
        await temporary.cleanUp()
    }

    @Test func theConsolesPingsAndTheBrowsersPongsGoAroundTheDeviceHandler() async throws {
        let temporary = try TemporaryRegistry()
        let session = try await temporary.start("web")
        let channel = try await channel(temporary, mustPresentCode: false, behindConsole: true)
        try await frame(channel, "<hello><key>deviceId</key><string>browser</string></hello>")
        #expect(messages(try await written(channel)).first == .welcome(Welcome(sessionId: String(session.id), sensors: [])))
        // The console's handler (the tail here) pings; the browser answers.
        try await channel.writeOutbound(WebSocketFrame(fin: true, opcode: .ping, data: channel.allocator.buffer(string: "0001")))
        let ping = try await written(channel)
        #expect(ping.map(\.opcode) == [.ping])
        try await frame(channel, "0001", opcode: .pong)
        let pong = try await channel.readInbound(as: WebSocketFrame.self)
        #expect(pong?.opcode == .pong, "the pong reaches whoever pinged")
        #expect(String(buffer: pong?.data ?? ByteBuffer()) == "0001")
        // Its close frame goes out once, however the connection then closes.
        try await channel.writeOutbound(WebSocketFrame(fin: true, opcode: .connectionClose, data: ByteBuffer()))
        try await channel.close()
        #expect(try await written(channel).map(\.opcode) == [.connectionClose])
        await temporary.cleanUp()
    }

    @Test func aPingIsAnsweredAndACloseEndsTheInputWithACloseFrame() async throws {
        let temporary = try TemporaryRegistry()
        let channel = try await channel(temporary, mustPresentCode: false)
        try await frame(channel, "are you there", opcode: .ping)
        let pong = try await written(channel)
        #expect(pong.map(\.opcode) == [.pong])
        #expect(String(buffer: pong[0].data) == "are you there")
        try await frame(channel, "", opcode: .pong)
        #expect(try await written(channel).isEmpty, "a pong nobody asked for is dropped")

        var close = channel.allocator.buffer(capacity: 2)
        close.write(webSocketErrorCode: .normalClosure)
        try await channel.writeInbound(WebSocketFrame(fin: true, opcode: .connectionClose, data: close))
        let answer = try await written(channel)
        #expect(answer.last?.opcode == .connectionClose)
        #expect(try await waitUntil { !channel.isActive })
        await temporary.cleanUp()
    }

    @Test func theSameHelloAgainIsAHeartbeatAnsweredByTheWelcome() async throws {
        let temporary = try TemporaryRegistry()
        let session = try await temporary.start("web")
        let channel = try await channel(temporary, mustPresentCode: false)
        let hello = "<hello><key>deviceId</key><string>browser</string></hello>"
        try await frame(channel, hello + eventXML(seq: 1))
        try await frame(channel, hello)
        try await frame(channel, hello + eventXML(seq: 2))
        let welcomes = messages(try await written(channel)).filter { if case .welcome = $0 { true } else { false } }
        #expect(welcomes == Array(repeating: .welcome(Welcome(sessionId: String(session.id), sensors: [])), count: 3))
        try await session.journal.flush()
        #expect(try await waitUntil { session.snapshot.events == 2 })
        #expect(session.snapshot.device == "browser")
        #expect(session.snapshot.state == .recording, "never interrupted by its own heartbeat")
        await temporary.cleanUp()
    }

    @Test func aBinaryMessageIsRefusedWithItsReasonInTheCloseFrame() async throws {
        let temporary = try TemporaryRegistry()
        let channel = try await channel(temporary, mustPresentCode: false)
        try await frame(channel, "<hello/>", opcode: .binary)
        let closing = try await written(channel)
        var data = try #require(closing.last?.data)
        #expect(closing.last?.opcode == .connectionClose)
        #expect(data.readWebSocketErrorCode() == .unacceptableData)
        #expect(data.readString(length: data.readableBytes)?.contains("text messages") == true)
        #expect(try await waitUntil { !channel.isActive })
        await temporary.cleanUp()
    }

    @Test func aWebDeviceWithoutACodeIsRefusedEvenWithASessionOpenForAnyDevice() async throws {
        let temporary = try TemporaryRegistry()
        _ = try await temporary.start("open for any device")
        let channel = try await channel(temporary, mustPresentCode: true, address: "203.0.113.9")
        try await frame(channel, "<hello><key>deviceId</key><string>browser</string></hello>" + eventXML(seq: 1))
        let refusals = messages(try await written(channel)).compactMap { message -> WireReplyError? in
            if case .error(let error) = message { error } else { nil }
        }
        #expect(refusals.first?.reason.hasPrefix("a web device must present an invitation or a pairing code") == true, "\(refusals)")
        #expect(refusals.last?.seq == 1, "its event is refused with its seq")
        await temporary.cleanUp()
    }
}
