@testable import MuEvalCapture
import MuEvalWire
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import WireProtocol

/// The facade and its task against a small capture server in this process (NIO on loopback): what
/// arrives, in what order, and what the app hears back.
@Suite struct CaptureManagerTests {
    /// Welcomes with `sensors` (and `studies`: tasks and questionnaire), acknowledges every event, refuses the
    /// seqs in `refuse`, closes the connection after a welcome while `dropsAfterWelcome` > 0; or, `mute`, reads
    /// and never answers; or, `deaf`, reads nothing at all.
    final class FakeServer: Sendable {
        enum Manner: Sendable { case answering, mute, deaf }
        /// What the handlers share with the test.
        struct State: Sendable {
            let received = NIOLockedValueBox<[Int64]>([])
            let events = NIOLockedValueBox<[WireEvent]>([])
            let hellos = NIOLockedValueBox<[DeviceHello]>([])
            let welcomes = NIOLockedValueBox<[[String]]>([["UserInputEvent"]])
            let studies = NIOLockedValueBox<[StudyTasks]>([StudyTasks(tasks: [])])
            let dropsAfterWelcome = NIOLockedValueBox(0)
            let connections = NIOLockedValueBox(0)
            let refuse: Set<Int64>

            /// The next of a list, the last one for good.
            static func next<T>(_ list: NIOLockedValueBox<[T]>) -> T {
                list.withLockedValue { $0.count > 1 ? $0.removeFirst() : $0[0] }
            }
        }
        let state: State
        var received: NIOLockedValueBox<[Int64]> { state.received }
        var welcomes: NIOLockedValueBox<[[String]]> { state.welcomes }
        var connections: NIOLockedValueBox<Int> { state.connections }
        private let channel: any Channel

        init(refuse: Set<Int64> = [], _ manner: Manner = .answering) async throws {
            let state = State(refuse: refuse)
            self.state = state
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.autoRead, value: manner != .deaf)
                .childChannelInitializer { channel in
                    state.connections.withLockedValue { $0 += 1 }
                    guard manner == .answering else { return channel.eventLoop.makeSucceededVoidFuture() }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(Handler(state: state))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
        }

        var address: ServerAddress { ServerAddress(host: "127.0.0.1", port: channel.localAddress!.port!) }

        func close() async { try? await channel.close() }

        private final class Handler: ChannelInboundHandler, @unchecked Sendable {
            typealias InboundIn = ByteBuffer
            typealias OutboundOut = ByteBuffer
            let state: State
            var decoder = WireDecoder()

            init(state: State) {
                self.state = state
            }

            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                unwrapInboundIn(data).withUnsafeReadableBytes { decoder.append($0) }
                var replies: [UInt8] = []
                var drop = false
                while case .success(let message)? = decoder.next() {
                    switch message {
                    case .hello(let hello):
                        state.hellos.withLockedValue { $0.append(hello) }
                        let study = State.next(state.studies)
                        replies += WireEncoder.welcome(Welcome(sessionId: "1", sensors: State.next(state.welcomes), tasks: study.tasks,
                                                               questionnaire: study.questionnaire))
                        drop = state.dropsAfterWelcome.withLockedValue { drops in
                            defer { drops = max(drops - 1, 0) }
                            return drops > 0
                        }
                    case .event(let event):
                        guard let seq = event.seq else { continue }
                        if state.refuse.contains(seq) {
                            replies += WireEncoder.error(WireReplyError(reason: "refused for the test", seq: seq))
                        } else {
                            state.received.withLockedValue { $0.append(seq) }
                            state.events.withLockedValue { $0.append(event) }
                        }
                        replies += WireEncoder.ack(seq: seq)
                    default: break
                    }
                    if drop { break }
                }
                if !replies.isEmpty { context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: replies)), promise: nil) }
                if drop { context.close(promise: nil) }
            }
        }
    }

    static func configuration(_ server: FakeServer) -> CaptureConfiguration {
        var configuration = CaptureConfiguration(device: DeviceHello(deviceId: "test-phone"))
        configuration.server = .address(server.address)
        configuration.firstSeq = 1
        return configuration
    }

    @Test func eventsFromManyThreadsArriveOnceEachInSeqOrderAndStopWaitsForTheirAcks() async throws {
        let server = try await FakeServer()
        let capture = CaptureManager()
        try capture.startCapture(Self.configuration(server))
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<1_000 { capture.touch(.began, x: Double(task), y: Double(index), view: "V") }
                }
            }
        }
        let summary = try #require(await capture.stopCapture(timeout: 30))
        #expect(summary.unacknowledged == 0)
        #expect(summary.statistics.acknowledged == 8_000 && summary.statistics.connections == 1)
        #expect(summary.statistics.sessions == ["1"])
        // The queue is in seq order, and so is the wire.
        #expect(server.received.withLockedValue { $0 } == Array(1...8_000))
        #expect(!capture.isCapturing)
        await server.close()
    }

    @Test func aRefusedEventReachesTheAppAndIsNotSentAgain() async throws {
        let server = try await FakeServer(refuse: [2])
        let capture = CaptureManager()
        try capture.startCapture(Self.configuration(server))
        var problems = capture.problems.makeAsyncIterator()
        for index in 0..<3 { capture.touch(.began, x: 0, y: Double(index), view: "V") }
        let problem = await problems.next()
        #expect(problem == .refused(seq: 2, reason: "refused for the test"))
        let summary = try #require(await capture.stopCapture(timeout: 30))
        #expect(summary.statistics.refused == 1 && summary.statistics.acknowledged == 2 && summary.unacknowledged == 0)
        await server.close()
    }

    /// A configured first seq (muevalsim's 1) after a spool's delivered backlog goes on above it: the
    /// server would take a repeated seq for a duplicate.
    @Test func seqsContinueAboveWhatTheSpoolEverHeld() async throws {
        let server = try await FakeServer()
        let spool = "/tmp/mueval-capture-test-\(UInt64.random(in: 0...UInt64.max))"
        defer { _ = spool.withCString { rmdir($0) } }
        defer { _ = "\(spool)/test-phone.spool".withCString { unlink($0) } }
        var configuration = Self.configuration(server)
        configuration.spoolDirectory = spool
        let capture = CaptureManager()
        for _ in 0..<2 {
            try capture.startCapture(configuration)
            for index in 0..<3 { capture.touch(.began, x: 0, y: Double(index), view: "V") }
            #expect(try #require(await capture.stopCapture(timeout: 30)).unacknowledged == 0)
        }
        #expect(server.received.withLockedValue { $0 } == Array(1...6))
        await server.close()
    }

    @Test func startingTwiceIsAClearError() async throws {
        let server = try await FakeServer()
        let capture = CaptureManager()
        try capture.startCapture(Self.configuration(server))
        #expect(throws: CaptureError.alreadyCapturing) { try capture.startCapture(Self.configuration(server)) }
        await capture.stopCapture(timeout: 5)
        // And again after a stop.
        try capture.startCapture(Self.configuration(server))
        await capture.stopCapture(timeout: 5)
        await server.close()
    }

    /// A sensor runs until the session's selection leaves it out, and again when one selects it.
    @Test func theWelcomesSelectionStartsAndStopsTheSensors() async throws {
        final class Battery: CaptureSensor {
            let produces = Selectable.event(eventClass: "DeviceSensorEvent", sensor: "battery")
            let switches = NIOLockedValueBox<[Bool]>([])
            func start(_ recorder: SensorRecorder) { switches.withLockedValue { $0.append(true) } }
            func stop() { switches.withLockedValue { $0.append(false) } }
        }
        let server = try await FakeServer()
        server.welcomes.withLockedValue { $0 = [["UserInputEvent"], ["battery"]] }
        let battery = Battery()
        var configuration = Self.configuration(server)
        configuration.sensors = [battery]
        let capture = CaptureManager()
        try capture.startCapture(configuration)
        capture.touch(.began, x: 0, y: 0, view: "V")
        try await waitUntil { battery.switches.withLockedValue { $0 } == [true, false] }
        await capture.stopCapture(timeout: 5)
        // A new connection's welcome selects it.
        try capture.startCapture(configuration)
        capture.touch(.began, x: 0, y: 0, view: "V")
        try await waitUntil { battery.switches.withLockedValue { $0 }.count >= 3 }
        await capture.stopCapture(timeout: 5)
        #expect(battery.switches.withLockedValue { $0 } == [true, false, true, false])
        await server.close()
    }

    /// A server that reads and never answers is given up after `ackTimeout` and connected to again.
    @Test func aServerThatNeverAcknowledgesIsReplacedAfterTheAckTimeout() async throws {
        let server = try await FakeServer(.mute)
        var configuration = Self.configuration(server)
        configuration.limits.ackTimeout = 0.3
        configuration.limits.reconnectDelays = 0.01...0.05
        let capture = CaptureManager()
        try capture.startCapture(configuration)
        capture.touch(.began, x: 0, y: 0, view: "V")
        // Read before stopping: the stop's own close may be the last thing the statistics say.
        try await waitUntil {
            server.connections.withLockedValue { $0 } >= 3
                && capture.statistics?.lastProblem == "no acknowledgement for 0.3 s: connecting again"
        }
        let summary = try #require(await capture.stopCapture(timeout: 0.2))
        #expect(summary.unacknowledged == 1)
        await server.close()
    }

    /// A server that takes nothing (its window full) cannot hold `stopCapture` beyond its timeout.
    @Test func stopCaptureKeepsItsTimeoutWhenAWriteNeverEnds() async throws {
        let server = try await FakeServer(.deaf)
        let capture = CaptureManager()
        try capture.startCapture(Self.configuration(server))
        let screenshot = [UInt8](repeating: 7, count: 100_000)
        for index in 0..<200 { capture.record(.viewAppeared("V\(index)", stack: ["V\(index)"], screenshot: screenshot)) }
        try await waitUntil { capture.statistics.map { $0.sent > 0 } ?? false }
        let clock = ContinuousClock()
        var summary: CaptureSummary?
        let took = await clock.measure { summary = await capture.stopCapture(timeout: 1) }
        #expect(took < .seconds(20), "stopCapture took \(took)")
        #expect(summary?.unacknowledged == 200)
        await server.close()
    }

    func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else { Issue.record("the condition never held"); return }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

@Suite struct WaitTimeTests {
    @Test(arguments: [
        (Double.nan, Int64(0)), (-.infinity, 0), (-1, 0), (0, 0),
        (0.25, 250_000_000), (.infinity, 86_400_000_000_000), (1e300, 86_400_000_000_000),
    ])
    func anAppsTimeoutReachesNIOWithoutTrapping(seconds: Double, nanoseconds: Int64) {
        #expect(TimeAmount.capped(seconds: seconds).nanoseconds == nanoseconds)
    }
}
