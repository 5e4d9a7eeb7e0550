import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import MuEvalWire
import NIOCore
import NIOPosix
import SessionModel
import WireProtocol
import XCTest

/// The control socket holds nothing without bound: replies that could be large come in pages,
/// request lines have a maximum, and one bad client costs the others nothing.
final class ControlPlaneTests: XCTestCase {
    /// A session of `count` touch events (seq 1…count) sent by one device in large writes.
    private func session(of count: Int, in daemon: TestDaemon) async throws -> SessionRecord {
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "paged", device: "iphone"))
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "iphone"))
        var bytes: [UInt8] = []
        for seq in 1...count {
            bytes += WireEncoder.event(["class": .string("UserInputEvent"), "timestamp": .real(1_700_000_000 + Double(seq) / 100),
                                        "seq": .integer(Int64(seq)), "x": .integer(Int64(seq % 320)), "y": .integer(7),
                                        "note": .string(String(repeating: "m", count: 900))])
        }
        for start in stride(from: 0, to: bytes.count, by: 64 << 10) {
            try await device.send(Array(bytes[start..<min(start + (64 << 10), bytes.count)]))
        }
        try await device.waitForAck(Int64(count), timeout: 30)
        await device.close()
        return session
    }

    func testEventsComeInPagesAndTheCommandPrintsThemAll() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let count = 3_000
        let session = try await session(of: count, in: daemon)

        // On the socket: several pages, each within its bounds, together every event once and in order.
        var pages: [[StoredEvent]] = []
        let summary = try await daemon.ctl.call(ControlRequest.Events(session: String(session.id), limit: 0), onEvents: { pages.append($0) })
        XCTAssertEqual(summary.events, Int64(count))
        XCTAssertGreaterThan(pages.count, 2, "a 3 MB session must come in pages")
        for page in pages {
            XCTAssertLessThanOrEqual(page.count, 500)
            XCTAssertLessThan(page.dropLast().reduce(0) { $0 + $1.payload.utf8.count }, 1 << 20, "a page ends once it holds 1 MiB")
        }
        XCTAssertEqual(pages.joined().compactMap(\.seq), (1...count).map(Int64.init))

        // The newest N, still in storage order, however many pages that takes.
        let newest = try await daemon.ctl.events(ControlRequest.Events(session: String(session.id), limit: 1_234))
        XCTAssertEqual(newest.compactMap(\.seq), ((count - 1_233)...count).map(Int64.init))

        // muevalctl: one JSON line per event, or one table with one header, as the pages arrive.
        let json = try daemon.muevalctl(["events", "paged", "--limit", "0", "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let lines = json.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, count)
        XCTAssertEqual(lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? Int },
                       Array(1...count))
        let table = try daemon.muevalctl(["events", "paged", "--limit", "0"])
        XCTAssertEqual(table.status, 0, table.stderr)
        let rows = table.stdout.split(separator: "\n")
        XCTAssertEqual(rows.count, count + 1)
        XCTAssertEqual(rows.filter { $0.hasPrefix("ID ") }.count, 1, "one header for the whole table")
        XCTAssertTrue(rows[1].hasPrefix("1 "), String(rows[1]))
        XCTAssertTrue(rows.last!.hasPrefix("\(count) "), String(rows.last!))
        let empty = try daemon.muevalctl(["events", "paged", "--class", "CustomEvent"])
        XCTAssertEqual(empty.stdout, "no events\n")
    }

    func testARequestLineOverTheLimitIsRefusedAndOthersGoOn() async throws {
        let daemon = try await TestDaemon.start(arguments: ["--config", try config("[control]\nmax_request_bytes = 4096\n")])
        defer { daemon.cleanUp() }

        let (reply, closed) = try await rawRequest(daemon.socketPath, line: #"{"command":"status","notes":""# + String(repeating: "x", count: 100_000) + "\"}\n")
        XCTAssertTrue(reply.contains(#""ok":false"#) && reply.contains("request line longer than 4096 bytes (control.max_request_bytes)"), reply)
        XCTAssertTrue(closed, "the connection of an over-long request is closed")
        XCTAssertTrue(daemon.log.contains("refused a request line longer than 4096 bytes"), daemon.log)

        // A request under the limit on a new connection: answered as ever.
        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertEqual(status.sessions.count, 0)
    }

    /// Writes `line` to the control socket and reads until the daemon closes the connection (or 10 s pass).
    private func rawRequest(_ path: String, line: String) async throws -> (reply: String, closed: Bool) {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try? await outbound.write(ByteBuffer(string: line))
            var reply = ""
            let reading = Task {
                var text = ""
                do { for try await chunk in inbound { text += String(buffer: chunk) } } catch {}
                return text
            }
            let deadline = ContinuousClock.now + .seconds(10)
            while !reading.isCancelled, ContinuousClock.now < deadline, channel.channel.isActive {
                try await Task.sleep(for: .milliseconds(20))
            }
            let closed = !channel.channel.isActive
            reading.cancel()
            reply = await reading.value
            return (reply, closed)
        }
    }

    private func config(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("control-\(UUID().uuidString).toml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }
}
