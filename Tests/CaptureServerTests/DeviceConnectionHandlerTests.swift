@testable import CaptureServer
import Foundation
import JournalStorage
import Logging
import MuEvalWire
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing
import WireProtocol

/// The handler on an embedded channel (NIOAsyncTestingChannel, EmbeddedChannel's thread-safe
/// sibling for async tests): bytes in, welcome / ack / error bytes out, with a real registry,
/// catalog and session files in a temporary directory.
@Suite struct DeviceConnectionHandlerTests {
    private static let address = try! SocketAddress(ipAddress: "10.0.0.5", port: 40000)

    /// A connected channel with the handler, and a read counter at the head of the pipeline.
    private func channel(_ temporary: TemporaryRegistry, configuration: CaptureConfiguration = CaptureConfiguration(),
                         budget: PartialMessageBudget = PartialMessageBudget(limit: 1 << 20),
                         reads: ReadCounter = ReadCounter()) async throws -> NIOAsyncTestingChannel {
        let channel = try await NIOAsyncTestingChannel { channel in
            try channel.pipeline.syncOperations.addHandler(reads)
            try channel.pipeline.syncOperations.addHandler(DeviceConnectionHandler(
                registry: temporary.registry, connections: temporary.connections, ledger: temporary.ledger, counters: temporary.counters,
                configuration: configuration, partialBudget: budget, logger: Logger(label: "test")))
        }
        try await channel.connect(to: Self.address).get()
        return channel
    }

    private func send(_ channel: NIOAsyncTestingChannel, _ text: String) async throws {
        try await channel.writeInbound(channel.allocator.buffer(string: text))
    }

    private func output(_ channel: NIOAsyncTestingChannel) async throws -> [WireMessage] {
        var bytes: [UInt8] = []
        while let buffer = try await channel.readOutbound(as: ByteBuffer.self) { bytes += Array(buffer.readableBytesView) }
        return replies(bytes)
    }

    private func errors(_ messages: [WireMessage]) -> [WireReplyError] {
        messages.compactMap { message in
            if case .error(let error) = message { return error }
            return nil
        }
    }

    @Test func eventsAreWelcomedStoredAndAcknowledgedWhenDurable() async throws {
        let temporary = try TemporaryRegistry()
        let session = try await temporary.start("embedded")
        let channel = try await channel(temporary)

        try await send(channel, eventXML(seq: 1) + eventXML(seq: 2) + String(eventXML(seq: 3).prefix(20)))
        var messages = try await output(channel)
        #expect(messages.first == .welcome(Welcome(sessionId: String(session.id), sensors: [])))
        try await send(channel, String(eventXML(seq: 3).dropFirst(20)))
        try await session.journal.flush()
        // Commits reach the connection through the router and its pipeline, as acks.
        #expect(try await waitUntil {
            await channel.testingEventLoop.run()
            messages += try await output(channel)
            return messages.last == .ack(seq: 3)
        })
        let acks = messages.dropFirst().compactMap { message -> Int64? in
            if case .ack(let seq) = message { return seq }
            return nil
        }
        #expect(acks.count == messages.count - 1, "only acks after the welcome: \(messages)")
        #expect(acks == acks.sorted() && Set(acks).count == acks.count, "each once, in order: \(acks)")
        #expect(session.snapshot.events == 3)
        #expect(session.snapshot.device == "address:10.0.0.5")
        _ = try await channel.finish()
        await temporary.cleanUp()
    }

    @Test func aDeviceWithoutHelloIsDetachedWhenItsConnectionEnds() async throws {
        let temporary = try TemporaryRegistry()
        let session = try await temporary.start("nc")
        let channel = try await channel(temporary)
        try await send(channel, eventXML(seq: 1))
        #expect(session.snapshot.state == .recording)
        #expect(try await waitUntil { try temporary.registry.devices().first?.connected == true })

        try await channel.close()
        #expect(session.snapshot.state == .interrupted, "the session knows its device has gone")
        try await session.journal.flush()
        let gaps = try SessionReader(path: session.snapshot.path).gaps()
        #expect(gaps.map(\.reason) == ["device address:10.0.0.5 disconnected without goodbye"])
        #expect(gaps.first?.end == nil)
        #expect(try temporary.registry.devices().map(\.connected) == [false])
        await temporary.cleanUp()
    }

    @Test func aRejectedHelloGetsAnErrorAndItsEventsTooWithTheirSeqs() async throws {
        let temporary = try TemporaryRegistry()
        let channel = try await channel(temporary)
        try await send(channel, String(decoding: WireEncoder.hello(DeviceHello(deviceId: "iphone-9")), as: UTF8.self) + eventXML(seq: 4))
        let errors = errors(try await output(channel))
        #expect(errors.map(\.seq) == [nil, 4])
        #expect(errors.allSatisfy { $0.reason.contains("no session is waiting for device iphone-9") })
        #expect(temporary.counters.eventsRejectedNoSession.load(ordering: .relaxed) == 1)
        _ = try await channel.finish()
        await temporary.cleanUp()
    }

    /// docs/PROTOCOL.md, "Value ranges": the device learns which field and range; the next event is stored.
    @Test func anEventWithAValueOutsideItsRangeIsRefusedNamingTheFieldAndTheNextIsStored() async throws {
        let temporary = try TemporaryRegistry()
        let session = try await temporary.start("absurd")
        var configuration = CaptureConfiguration()
        configuration.wireLimits.valueRanges.maxCoordinate = 2000
        let channel = try await channel(temporary, configuration: configuration)
        let absurd = "<event><key>class</key><string>UserInputEvent</string><key>seq</key><integer>1</integer>"
            + "<key>timestamp</key><real>1e18</real></event>"
        let tooFar = "<event><key>class</key><string>UserInputEvent</string><key>seq</key><integer>2</integer>"
            + "<key>target</key><dict><key>frame</key><array><real>0</real><real>0</real><real>2001</real><real>1</real></array></dict></event>"
        try await send(channel, absurd + tooFar + eventXML(seq: 3))
        try await session.journal.flush()
        var messages: [WireMessage] = []
        #expect(try await waitUntil {
            await channel.testingEventLoop.run()
            messages += try await output(channel)
            return messages.last == .ack(seq: 3)
        })
        #expect(errors(messages) == [
            WireReplyError(reason: #""timestamp" is 1e+18, outside its range: a time from 1970-01-01T00:00:00Z to 2100-01-01T00:00:00Z"#, seq: 1),
            WireReplyError(reason: #""target.frame[2]" is 2001, outside its range: a size from 0 to 2000 points"#, seq: 2),
        ])
        #expect(session.snapshot.events == 1, "only the good event is stored")
        #expect(temporary.counters.malformedMessages.load(ordering: .relaxed) == 2, "counted like other refused messages")
        _ = try await channel.finish()
        await temporary.cleanUp()
    }

    @Test func aStreamThatIsNotXMLGetsAnErrorAndIsClosed() async throws {
        let temporary = try TemporaryRegistry()
        let channel = try await channel(temporary)
        try await send(channel, String(repeating: "junk ", count: 20_000))
        #expect(errors(try await output(channel)).last?.reason.isEmpty == false)
        #expect(!channel.isActive, "closed after the fatal error")
        await temporary.cleanUp()
    }

    @Test func aConnectionWithoutAWholeMessageIsClosedAtTheHelloTimeoutAndOneThatSpokeStays() async throws {
        let temporary = try TemporaryRegistry()
        _ = try await temporary.start("hello")
        var configuration = CaptureConfiguration()
        configuration.helloTimeout = 5
        let silent = try await channel(temporary, configuration: configuration)
        let prompt = try await channel(temporary, configuration: configuration)
        try await send(silent, String(eventXML(seq: 1).prefix(30)))
        try await send(prompt, String(decoding: WireEncoder.hello(DeviceHello(deviceId: "prompt")), as: UTF8.self))
        #expect(temporary.ledger.status().capturePending == 1)
        #expect(temporary.ledger.status().captureDevices == 1)
        await silent.testingEventLoop.advanceTime(by: .seconds(6))
        await prompt.testingEventLoop.advanceTime(by: .seconds(6))
        let said = try await output(silent)
        // First the reason; the half message the device left is reported after it, as at any close.
        #expect(errors(said).first?.reason.contains("server.hello_timeout") == true, "\(said)")
        #expect(!silent.isActive, "closed at the hello timeout")
        #expect(prompt.isActive, "a device that said hello stays")
        #expect(temporary.ledger.status().timedOut == 1)
        #expect(temporary.ledger.status().capturePending == 0)
        _ = try await prompt.finish()
        await temporary.cleanUp()
    }

    @Test func underTheAutoPolicyEventsWaitForTheirSessionInOrder() async throws {
        let temporary = try TemporaryRegistry(policy: .auto)
        let reads = ReadCounter()
        let channel = try await channel(temporary, reads: reads)
        try await send(channel, eventXML(seq: 1) + eventXML(seq: 2))
        // The session is opened on the catalog queue; meanwhile reads are held.
        let before = reads.count
        channel.read()
        await channel.testingEventLoop.run()
        var messages: [WireMessage] = []
        #expect(try await waitUntil {
            await channel.testingEventLoop.run()
            messages += try await output(channel)
            return !messages.isEmpty
        })
        guard case .welcome(let welcome)? = messages.first else { Issue.record("welcome, got \(messages)"); return }
        let session = try #require(temporary.registry.openSessions().first { String($0.id) == welcome.sessionId })
        #expect(session.isAutomatic)
        #expect(reads.count == before + 1, "the held read goes out once the session is there")
        try await session.journal.flush()
        #expect(session.snapshot.events == 2, "both events, the one that waited first")
        let stored = try SessionReader(path: session.snapshot.path).events().map(\.seq)
        #expect(stored == [1, 2])
        // Its connection ends: the automatic session is stopped.
        try await channel.close()
        #expect(try await waitUntil { !session.isOpen })
        await temporary.cleanUp()
    }

    @Test func readsAreHeldWhileThePartialBudgetIsExhaustedAndResumeWhenSignalled() async throws {
        let temporary = try TemporaryRegistry()
        _ = try await temporary.start("budget")
        let budget = PartialMessageBudget(limit: 10)
        // Another connection already holds more than the budget and runs.
        #expect(budget.update(999, from: 0, to: 100, completedMessage: false, wake: {}) == .proceed)
        let reads = ReadCounter()
        let channel = try await channel(temporary, budget: budget, reads: reads)
        let event = eventXML(seq: 1)
        try await send(channel, String(event.prefix(30)))
        #expect(budget.waitingCount == 1, "it holds part of a message beyond the budget: it waits")
        #expect(budget.heldBytes == 130)
        let before = reads.count
        channel.read()
        await channel.testingEventLoop.run()
        #expect(reads.count == before, "a read NIO asks for is held back")
        // The runner completes its message: this connection's turn.
        _ = budget.update(999, from: 100, to: 0, completedMessage: true, wake: {})
        await channel.testingEventLoop.run()
        #expect(reads.count == before + 1, "the held read goes out")
        try await send(channel, String(event.dropFirst(30)))
        #expect(budget.heldBytes == 0)
        _ = try await channel.finish()
        await temporary.cleanUp()
    }
}

/// Counts the reads that reach the head of the pipeline.
final class ReadCounter: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = Never
    private let reads = NIOLockedValueBox(0)
    var count: Int { reads.withLockedValue { $0 } }

    func read(context: ChannelHandlerContext) {
        reads.withLockedValue { $0 += 1 }
        context.read()
    }
}
