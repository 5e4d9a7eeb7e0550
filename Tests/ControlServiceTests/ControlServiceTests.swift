import MuEvalWire
import SessionCore
import ControlClient
import ControlProtocol
@testable import ControlService
import Foundation
import SessionImport
import TesterPool
import GroupCommit
import JournalStorage
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import SessionModel
import Testing
import WireProtocol

/// The control socket's server side in this process: a real registry on a temporary data directory,
/// a real Unix socket, the real client; no muevald binary.
@Suite struct ControlServiceTests {
    enum HarnessError: Error {
        case serverEnded
        case notListening(String)
    }

    /// The daemon's control plane, assembled as muevald assembles it, minus the capture server.
    final class Harness: Sendable {
        let directory: String
        let registry: SessionRegistry
        let board: StatusBoard
        let control: ControlServer
        let group: ServiceGroup
        let client: ControlClient
        let serverEnded = Atomic<Bool>(false)

        init(maxRequestBytes: Int = ControlLimits.maxRequestBytes) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("control-\(UUID().uuidString)").path
            let logger = Logger(label: "test")
            let catalog = try Catalog(directory: directory)
            let counters = CaptureCounters()
            let tail = LiveTail()
            registry = SessionRegistry(catalog: catalog, policy: .reject, journalLimits: JournalWriterLimits(synchronous: .normal),
                                       counters: counters, tail: tail, logger: logger, commitObserver: { _, _ in })
            let socket = directory + "/control.sock"
            board = StatusBoard(daemon: DaemonDescription(pid: getpid(), started: 0, socket: socket, dataDirectory: directory,
                                                              unknownDevicePolicy: .reject),
                                    registry: registry, counters: counters, liveTail: tail, health: StorageHealth())
            let commands = ControlCommands(ControlCollaborators(
                registry: registry, studies: Studies(catalog: catalog, registry: registry, pool: try TesterStore(directory: directory)), liveTail: tail, board: board,
                importer: SessionImporter(catalog: catalog, lab: "test-lab"), tailBuffer: { 10_000 }))
            control = ControlServer(path: socket, access: try ControlAccess(groupName: nil), commands: commands,
                                    group: MultiThreadedEventLoopGroup.singleton, logger: logger, maxRequestBytes: maxRequestBytes)
            group = ServiceGroup(services: [control], logger: logger)
            client = ControlClient(socketPath: socket)
        }

        /// Runs the server while `body` runs, then shuts it down and removes the directory.
        func run<T: Sendable>(_ body: @Sendable (Harness) async throws -> T) async throws -> T {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    defer { self.serverEnded.store(true, ordering: .releasing) }
                    try await self.group.run()
                }
                defer { try? FileManager.default.removeItem(atPath: directory) }
                // Generous: the whole suite starts at once on CI's two cores. A server that ends early
                // (a bind error) is reported by the task group, not waited out.
                let deadline = ContinuousClock.now + .seconds(60)
                while !ControlSocketPath.isListening(client.socketPath) {
                    if serverEnded.load(ordering: .acquiring) { try await tasks.next(); throw HarnessError.serverEnded }
                    guard ContinuousClock.now < deadline else { throw HarnessError.notListening(client.socketPath) }
                    try await Task.sleep(for: .milliseconds(10))
                }
                do {
                    let result = try await body(self)
                    await group.triggerGracefulShutdown()
                    await registry.shutdown()
                    try await tasks.waitForAll()
                    return result
                } catch {
                    await group.triggerGracefulShutdown()
                    throw error
                }
            }
        }
    }

    @Test func sessionsStartStopAndAreListedThroughTheSocket() async throws {
        try await Harness().run { harness in
            let started = try await harness.client.call(ControlRequest.StartSession(name: "jack", user: "Jack"))
            #expect(started.state == .waiting)
            let status = try await harness.client.call(ControlRequest.Status())
            #expect(status.sessions.map(\.name) == ["jack"])
            #expect(status.unknownDevicePolicy == .reject)
            let stopped = try await harness.client.call(ControlRequest.StopSessions(session: "jack"))
            #expect(stopped.map(\.state) == [.stopped])
            let again = await #expect(throws: ControlClientError.self) {
                try await harness.client.call(ControlRequest.StopSessions(session: "jack"))
            }
            #expect(again == .refused("session 1 is already stopped"))
            let missing = try await lines(from: harness.client.socketPath, sending: #"{"command":"events"}"# + "\n", count: 1)
            let reply = try JSONDecoder().decode(ControlReply<Empty>.self, from: Data(missing[0].utf8))
            #expect(reply.ok == false)
            #expect(reply.error == #"not a valid request: events needs "session" (docs/CONTROL.md)"#)
        }
    }

    /// `status` reads what the services posted on the status board, and "off" or nothing for what did not post.
    @Test func statusShowsWhatTheServicesPostedOnTheBoard() async throws {
        try await Harness().run { harness in
            let before = try await harness.client.call(ControlRequest.Status())
            #expect(before.listen == nil && before.listenTLS == nil)
            #expect(before.zeroconf == "off" && before.replication == nil && before.transcriptions.isEmpty)

            harness.board.listening(on: ListenAddress(host: "0.0.0.0", port: 21_000))
            harness.board.listening(on: ListenAddress(host: "0.0.0.0", port: 21_443, tls: true))
            harness.board.postZeroconf { "announced as \"muEval on lab\"" }
            let replication = ReplicationStatus(target: "db:5432/mueval", state: "replicating", pendingEvents: 3, lagSeconds: 0.5, sessions: [])
            harness.board.postReplication { replication }
            let queued = SessionTranscription(session: 7, status: TranscriptionStatus(device: "phone", stream: "voice-1", state: .queued, progress: 0, updated: 1))
            harness.board.postTranscriptions { now in now > 0 ? [queued] : [] }

            let after = try await harness.client.call(ControlRequest.Status())
            #expect(after.listen == ListenAddress(host: "0.0.0.0", port: 21_000))
            #expect(after.listenTLS?.text == "0.0.0.0:21443 (TLS)")
            #expect(after.zeroconf == #"announced as "muEval on lab""#)
            #expect(after.replication == replication)
            #expect(after.transcriptions == [queued])
        }
    }

    @Test func aRequestThatIsNotJSONGetsAnErrorAndTheConnectionGoesOn() async throws {
        try await Harness().run { harness in
            let replies = try await lines(from: harness.client.socketPath, sending: "not json\n{\"command\":\"sessions\"}\n", count: 2)
            #expect(replies[0].contains(#""ok":false"#) && replies[0].contains("not a valid request"))
            let second = try JSONSerialization.jsonObject(with: Data(replies[1].utf8)) as? [String: Any]
            #expect(second?["ok"] as? Bool == true)
            #expect((second?["result"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func aRequestLineOverTheLimitIsRefusedWithTheSetting() async throws {
        try await Harness(maxRequestBytes: 1024).run { harness in
            let replies = try await lines(from: harness.client.socketPath,
                                          sending: #"{"command":"status","notes":""# + String(repeating: "n", count: 5000) + "\"}\n", count: 1)
            #expect(replies.first?.contains("request line longer than 1024 bytes (control.max_request_bytes)") == true)
            // Other connections are served as ever.
            _ = try await harness.client.call(ControlRequest.Status())
        }
    }

    @Test(arguments: [
        (PeerCredentials(pid: 1, uid: 0, gid: 0, supplementaryGroups: []), true),
        (PeerCredentials(pid: 1, uid: getuid(), gid: 12345, supplementaryGroups: []), true),
        (PeerCredentials(pid: 1, uid: 54321, gid: 54321, supplementaryGroups: []), false),
    ])
    func onlyRootAndTheDaemonsUserWithoutAGroup(peer: PeerCredentials, allowed: Bool) throws {
        #expect(try ControlAccess(groupName: nil).allows(peer) == allowed)
    }

    @Test func membersOfTheControlGroupAreAllowedByPrimaryOrSupplementaryGroup() throws {
        // The root group exists everywhere; its id is 0.
        let access = try ControlAccess(groupName: "root")
        #expect(access.allows(PeerCredentials(pid: 1, uid: 54321, gid: 0, supplementaryGroups: [])))
        #expect(access.allows(PeerCredentials(pid: 1, uid: 54321, gid: 100, supplementaryGroups: [7, 0])))
        #expect(!access.allows(PeerCredentials(pid: 1, uid: 54321, gid: 100, supplementaryGroups: [7])))
        #expect(access.denial(for: PeerCredentials(pid: 1, uid: 54321, gid: 100, supplementaryGroups: [])).contains("join the group \"root\""))
        #expect(throws: ControlAccessError.self) { try ControlAccess(groupName: "no-such-group-\(getpid())") }
    }

    /// The tail line writer gives what JSONEncoder gives for the same reply, whatever the strings hold.
    @Test func tailLinesAreTheJSONOfTheirReply() throws {
        let awkward = "quote \" backslash \\ newline \n tab \t bell \u{7} <script> \u{2028} é 📱"
        let event = StoredEvent(id: 7, device: awkward, seq: -3, eventClass: EventClass.userInput.rawValue, timestamp: 1_298_155_386.125,
                                timestampEstimated: true, received: 1e-05, payload: #"{"x":1}"#)
        for line in [TailLine.event(event, session: 2), TailLine(kind: .skipped, time: 3.5, count: 12, detail: awkward)] {
            var written: [UInt8] = []
            TailLineJSON.write(line, into: &written)
            let decoded = try JSONDecoder().decode(ControlReply<Empty>.self, from: Data(written))
            #expect(decoded.tail == line)
        }
    }
}

/// Writes `text` to the socket at `path` and returns the first `count` reply lines.
private func lines(from path: String, sending text: String, count: Int) async throws -> [String] {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(unixDomainSocketPath: path) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
    return try await channel.executeThenClose { inbound, outbound in
        try await outbound.write(ByteBuffer(string: text))
        var received = ""
        for try await chunk in inbound {
            received += String(buffer: chunk)
            let lines = received.split(separator: "\n", omittingEmptySubsequences: true)
            if lines.count >= count, received.hasSuffix("\n") { return lines.prefix(count).map(String.init) }
        }
        return received.split(separator: "\n").map(String.init)
    }
}
