import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import OrderedCollections
import SessionModel
import WireProtocol
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// What a lab network or a buggy capture library can throw at muevald, against the real daemon: every hostile
/// message gets an `<error>`, a log line and a count in `status`, and a well-behaved device on another
/// connection keeps storing every one of its events. Each test names the figure it checks.
final class HostileInputTests: XCTestCase {
    /// One kind of bad input, the `<error>` replies it earns, and a phrase of their reason.
    struct HostileMessage {
        var name: String
        var bytes: [UInt8]
        var errors: Int
        var reason: String
    }

    static func event(_ body: String) -> [UInt8] {
        Array("<event><key>class</key><string>UserInputEvent</string>\(body)</event>\n".utf8)
    }

    static let hostileMessages: [HostileMessage] = [
        // '<' left out: it would open a message that swallows what follows, up to the size limit.
        HostileMessage(name: "4 KiB of random bytes", bytes: randomBytes(4096, seed: 8).map { $0 == UInt8(ascii: "<") ? 0x3E : $0 },
                       errors: 1, reason: "between messages"),
        HostileMessage(name: "non-UTF-8 string",
                       bytes: Array("<event><key>class</key><string>UserInputEvent</string><key>text</key><string>caf".utf8) + [0xE9, 0xFF]
                           + Array("</string></event>".utf8),
                       errors: 1, reason: "<string> is not valid UTF-8"),
        HostileMessage(name: "non-UTF-8 key", bytes: Array("<event><key>".utf8) + [0xC0, 0x80] + Array("</key><string>x</string></event>".utf8),
                       errors: 1, reason: "a <key> is not valid UTF-8"),
        HostileMessage(name: "misnested tags", bytes: event("<key>v</key><dict><key>k</key><string>x</dict></string>"),
                       errors: 1, reason: "misnested tags"),
        HostileMessage(name: "an array never closed", bytes: event("<key>v</key><array><string>x</string>"),
                       errors: 1, reason: "<array> is closed by"),
        // The stray closing tag ends the message early; the real one is then left over between messages.
        HostileMessage(name: "a stray closing tag", bytes: event("<key>n</key><integer>1</integer></string>"),
                       errors: 2, reason: "<event> is closed by"),
        HostileMessage(name: "invalid base64", bytes: event("<key>shot</key><data>iVBORw0KGgo!!*</data>"),
                       errors: 1, reason: "not valid base64"),
        HostileMessage(name: "an invalid date", bytes: event("<key>when</key><date>2011-02-30T25:61:00Z</date>"),
                       errors: 1, reason: "is not an ISO 8601 date"),
        HostileMessage(name: "an integer with a letter", bytes: event("<key>x</key><integer>12z</integer>"),
                       errors: 1, reason: "is not a decimal integer"),
        HostileMessage(name: "an integer past 64 bits", bytes: event("<key>x</key><integer>9223372036854775808</integer>"),
                       errors: 1, reason: "is not a decimal integer"),
        HostileMessage(name: "an invalid real", bytes: event("<key>y</key><real>1.2.3</real>"),
                       errors: 1, reason: "is not a decimal number"),
        HostileMessage(name: "nesting 10,000 deep",
                       bytes: event("<key>v</key>" + String(repeating: "<array>", count: 10_000) + String(repeating: "</array>", count: 10_000)),
                       errors: 1, reason: "nest more than"),
        HostileMessage(name: "billion laughs",
                       bytes: Array(("<!DOCTYPE lolz [<!ENTITY lol \"lol\">"
                           + (1...9).map { "<!ENTITY lol\($0) \"" + String(repeating: "&lol\($0 == 1 ? "" : String($0 - 1));", count: 10) + "\">" }.joined()
                           + "]>").utf8) + event("<key>text</key><string>&lol9;</string>"),
                       errors: 2, reason: "unknown entity &lol9;"),
    ]

    // MARK: Malformed messages

    func testEveryKindOfMalformedMessageGetsAnErrorACountAndALogLineWhileAnotherDeviceStoresEverything() async throws {
        let lab = try await HostileLab.start()
        defer { lab.daemon.cleanUp() }
        var probe: Int64 = 0
        for message in Self.hostileMessages {
            let errorsBefore = lab.hostile.errors.count
            let malformedBefore = try await lab.status().counters.malformedMessages
            // The bad message, then a good event right behind it on the same connection.
            try await lab.hostile.send(message.bytes)
            probe += 1
            try await lab.hostile.event(touch(seq: probe))
            try await lab.hostile.waitForAck(probe)
            // Errors are written before the ack of a later event, so they have all arrived.
            let errors = Array(lab.hostile.errors[errorsBefore...])
            XCTAssertEqual(errors.count, message.errors, "\(message.name): \(errors)")
            XCTAssertTrue(errors.contains { $0.reason.contains(message.reason) }, "\(message.name): \(errors)")
            let malformedAfter = try await lab.status().counters.malformedMessages
            XCTAssertEqual(malformedAfter - malformedBefore, message.errors, message.name)
            for error in errors {
                try await eventually("the log line for \(message.name)") {
                    lab.daemon.log.contains("rejected message: \(error.reason)") ? true : nil
                }
            }
            XCTAssertFalse(lab.hostile.isClosed, message.name)
            try await lab.good.send(events: 20)
        }
        // Figures: every probe and every one of the good device's events stored exactly once, nothing else.
        try await lab.stopAndCheck(hostileSeqs: Array(1...probe), goodEvents: 20 * Self.hostileMessages.count)
    }

    func testAnExternalEntityIsNeverRead() async throws {
        let lab = try await HostileLab.start()
        defer { lab.daemon.cleanUp() }
        // The entity names a FIFO: a process opening it for reading would block there, holding it open.
        let fifo = lab.daemon.directory + "/secret.fifo"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        try await lab.hostile.send("<!DOCTYPE foo [<!ENTITY xxe SYSTEM \"file://\(fifo)\">]>")
        try await lab.hostile.send(Self.event("<key>text</key><string>&xxe;</string>"))
        // A DOCTYPE with no internal subset is skipped, and its external DTD is not fetched either.
        try await lab.hostile.send("<!DOCTYPE plist SYSTEM \"file://\(fifo)\">")
        try await lab.hostile.event(touch(seq: 1))
        try await lab.hostile.waitForAck(1)
        try await lab.good.send(events: 10)

        let reasons = lab.hostile.errors.map(\.reason)
        XCTAssertEqual(reasons.count, 2, "\(reasons)")
        XCTAssertTrue(reasons.first?.contains("internal subset") == true, "\(reasons)")
        XCTAssertTrue(reasons.last?.contains("unknown entity &xxe;") == true, "\(reasons)")
        let counters = try await lab.status().counters
        XCTAssertEqual(counters.malformedMessages, 2)
        // Nobody has the FIFO open for reading: opening it to write without blocking fails with ENXIO.
        let writer = open(fifo, O_WRONLY | O_NONBLOCK)
        let openError = errno
        XCTAssertEqual(writer, -1)
        XCTAssertEqual(openError, ENXIO)
        try await lab.stopAndCheck(hostileSeqs: [1], goodEvents: 10)
    }

    func testTruncatedMessages() async throws {
        let lab = try await HostileLab.start()
        defer { lab.daemon.cleanUp() }
        // Cut off mid-stream: the next message begins inside the unfinished one. The cut one is refused with
        // its seq, the next is read on its own. Figure: 3 messages sent, 1 error naming seq 1, 2 stored.
        try await lab.hostile.send("<event><key>class</key><string>UserInputEvent</string><key>seq</key><integer>1</integer><key>x</key><integer>15")
        try await lab.hostile.event(touch(seq: 2))
        try await lab.hostile.event(touch(seq: 3))
        try await lab.hostile.waitForAck(3)
        XCTAssertEqual(lab.hostile.errors.count, 1, "\(lab.hostile.errors)")
        XCTAssertEqual(lab.hostile.errors.first?.seq, 1, "the error names the cut-off event's seq")
        try await lab.good.send(events: 10)

        // Cut off by the end of the connection: no one is left to answer, so a count and a log line.
        // Figure: the 2 events before the cut stored, 1 malformed message counted.
        let cut = try await lab.daemon.connectDevice()
        try await cut.hello(DeviceHello(deviceId: "hostile"))
        try await cut.event(touch(seq: 4))
        try await cut.event(touch(seq: 5))
        try await cut.waitForAck(5)
        try await cut.send("<event><key>class</key><string>UserInputEv")
        await cut.close()
        try await eventually("the truncation to be counted and logged") { () -> Bool? in
            let counters = try await lab.status().counters
            return counters.malformedMessages == 2 && lab.daemon.log.contains("the stream ended inside a <event> message") ? true : nil
        }
        try await lab.good.send(events: 10)
        try await lab.stopAndCheck(hostileSeqs: [2, 3, 4, 5], goodEvents: 20)
    }

    func testA100MBElementIsRefusedWithoutBeingBuffered() async throws {
        let lab = try await HostileLab.start()
        defer { lab.daemon.cleanUp() }
        let before = try peakMemory(of: lab.daemon)
        // One <data> element of 100 MB, streamed in 1 MiB writes; the limit is the default 16 MiB.
        let total = 100_000_000
        let chunk = [UInt8](repeating: UInt8(ascii: "A"), count: 1 << 20)
        try await lab.hostile.send("<event><key>class</key><string>UserInputEvent</string><key>screenshot</key><data>")
        var sent = 0
        while sent < total {
            try await lab.hostile.send(Array(chunk.prefix(total - sent)))
            sent += min(chunk.count, total - sent)
        }
        try await lab.hostile.send("</data></event>")
        try await lab.hostile.event(touch(seq: 1))
        try await lab.hostile.waitForAck(1, timeout: 120)
        try await lab.good.send(events: 10)

        XCTAssertEqual(lab.hostile.errors.map(\.reason), ["message exceeds the 16777216-byte limit; it was skipped"])
        let counters = try await lab.status().counters
        XCTAssertEqual(counters.malformedMessages, 1)
        XCTAssertGreaterThan(counters.bytesReceived, total, "the daemon read all 100 MB")
        // Figure: the daemon's peak resident memory grew by far less than the element: at most the 16 MiB limit
        // being scanned, plus slack for the read buffers.
        let after = try peakMemory(of: lab.daemon)
        XCTAssertLessThan(after - before, 40 << 20, "peak RSS went from \(before >> 20) MiB to \(after >> 20) MiB")
        XCTAssertTrue(lab.daemon.log.contains("rejected message: message exceeds the 16777216-byte limit"))
        try await lab.stopAndCheck(hostileSeqs: [1], goodEvents: 10)
    }

    // MARK: Slow, idle and too many connections

    func testASlowSenderIsStoredWhileOthersFlow() async throws {
        let lab = try await HostileLab.start()
        defer { lab.daemon.cleanUp() }
        // One event, one byte per write with a 1 ms pause (about 200 writes), while the good device sends 200 events.
        let bytes = WireEncoder.event(touch(seq: 1))
        async let trickle: Void = {
            for byte in bytes {
                try await lab.hostile.send([byte])
                try await Task.sleep(for: .milliseconds(1))
            }
        }()
        try await lab.good.send(events: 200)
        try await trickle
        try await lab.hostile.waitForAck(1)
        XCTAssertTrue(lab.hostile.errors.isEmpty, "\(lab.hostile.errors)")
        // Figure: 1 event in \(bytes.count) writes stored, and all 200 of the other device's.
        try await lab.stopAndCheck(hostileSeqs: [1], goodEvents: 200)
    }

    func testIdleConnectionsAreClosedWithAnErrorAndBusyOnesAreNot() async throws {
        let config = try ConfigFile("[server]\nidle_timeout = 2\n")
        defer { config.remove() }
        let lab = try await HostileLab.start(arguments: ["--config", config.path])
        defer { lab.daemon.cleanUp() }
        let connected = Date()
        let idle = try await lab.daemon.connectDevice()
        // The good device sends every 250 ms, well inside the timeout, until the idle one is closed.
        while !idle.isClosed {
            XCTAssertLessThan(Date().timeIntervalSince(connected), 10, "the idle connection was never closed")
            try await lab.good.send(events: 1)
            try await Task.sleep(for: .milliseconds(250))
        }
        // Figures: closed after at least the 2 s timeout, with an error saying why; the busy device is still open.
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(connected), 2)
        XCTAssertEqual(idle.errors.map(\.reason), ["idle for 2 s: closing"])
        XCTAssertFalse(lab.good.device.isClosed)
        XCTAssertTrue(lab.daemon.log.contains("closing idle connection"))
        // The hostile device's connection sent its hello only, at the start: it was closed as idle too.
        XCTAssertTrue(lab.hostile.isClosed)
        try await eventually("the open connections to be counted down") { () -> Bool? in
            try await lab.status().counters.connectionsOpen == 1 ? true : nil
        }
        try await lab.stopAndCheck(hostileSeqs: [], goodEvents: lab.good.sent)
    }

    func testTwoThousandIdleConnectionsAreHeldAndTheNextIsRefused() async throws {
        // Room for exactly 2,000 idle connections and the two of the lab.
        let config = try ConfigFile("[server]\nmax_connections = 2002\nmax_connections_per_address = 3000\n")
        defer { config.remove() }
        let lab = try await HostileLab.start(arguments: ["--config", config.path])
        defer { lab.daemon.cleanUp() }
        var idle: [TestDevice] = []
        for _ in 0..<20 {
            idle += try await withThrowingTaskGroup(of: TestDevice.self) { group in
                for _ in 0..<100 { group.addTask { try await lab.daemon.connectDevice() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        try await eventually("2,002 connections to be open") { () -> Bool? in
            try await lab.status().counters.connectionsOpen == 2002 ? true : nil
        }
        // Figure: with 2,002 held, the good device still stores every event.
        try await lab.good.send(events: 100)

        let refused = try await lab.daemon.connectDevice()
        let reason = try await refused.waitFor("the refusal") { _ in refused.errors.first?.reason }
        XCTAssertEqual(reason, "the server has reached its limit of 2002 device connections (server.max_connections, clamped to the open-file budget)")
        try await eventually("the refused connection to be closed") { refused.isClosed ? true : nil }
        var counters = try await lab.status().counters
        XCTAssertEqual(counters.connectionsRefused, 1)
        XCTAssertEqual(counters.refusals["device_connections"], 1)
        XCTAssertTrue(lab.daemon.log.contains("refused a device connection from 127.0.0.1: the server has reached its limit"))

        for device in idle { await device.close() }
        try await eventually("the idle connections to be closed") { () -> Bool? in
            try await lab.status().counters.connectionsOpen == 2 ? true : nil
        }
        // Room again: a new device is welcomed and stored.
        let late = try await lab.daemon.connectDevice()
        try await late.hello(DeviceHello(deviceId: "hostile"))
        try await late.event(touch(seq: 1))
        try await late.waitForAck(1)
        counters = try await lab.status().counters
        XCTAssertEqual(counters.connectionsAccepted, 2003, "2 lab devices, 2,000 idle, 1 late; the refused one not")
        try await lab.stopAndCheck(hostileSeqs: [1], goodEvents: 100)
    }

    func testConnectionsPerAddressAreLimited() async throws {
        let config = try ConfigFile("[server]\nmax_connections_per_address = 5\n")
        defer { config.remove() }
        let lab = try await HostileLab.start(arguments: ["--config", config.path])
        defer { lab.daemon.cleanUp() }
        // The lab holds 2 of the 5; 3 more fit, the 6th from 127.0.0.1 is refused.
        var extra: [TestDevice] = []
        for _ in 0..<3 { extra.append(try await lab.daemon.connectDevice()) }
        try await eventually("5 connections to be open") { try await lab.status().counters.connectionsOpen == 5 ? true : nil }
        let sixth = try await lab.daemon.connectDevice()
        let reason = try await sixth.waitFor("the refusal") { _ in sixth.errors.first?.reason }
        XCTAssertEqual(reason, "too many connections from 127.0.0.1 (limit 5, server.max_connections_per_address)")
        try await eventually("the refused connection to be closed") { sixth.isClosed ? true : nil }
        let counters = try await lab.status().counters
        XCTAssertEqual(counters.connectionsRefused, 1)
        XCTAssertEqual(counters.refusals["device_per_address"], 1)
        XCTAssertTrue(lab.daemon.log.contains("refused a device connection from 127.0.0.1: too many connections from 127.0.0.1"))
        try await lab.good.send(events: 10)

        // One closes: one more fits.
        let leaving = extra.removeLast()
        await leaving.close()
        try await eventually("4 connections to be open") { try await lab.status().counters.connectionsOpen == 4 ? true : nil }
        let again = try await lab.daemon.connectDevice()
        try await again.hello(DeviceHello(deviceId: "hostile"))
        try await again.event(touch(seq: 1))
        try await again.waitForAck(1)
        XCTAssertTrue(again.errors.isEmpty, "\(again.errors)")
        let refusedInAll = try await lab.status().counters.connectionsRefused
        XCTAssertEqual(refusedInAll, 1)
        try await lab.stopAndCheck(hostileSeqs: [1], goodEvents: 10)
    }

    func testAConnectionFloodLeavesTheDaemonAnswering() async throws {
        let lab = try await HostileLab.start()
        defer { lab.daemon.cleanUp() }
        let before = try await lab.status().counters
        // 3,000 connections opened and closed as fast as a thread can, half of them reset (RST) instead of closed,
        // while the good device streams.
        let attempts = 3000
        let port = lab.daemon.port
        async let flood: Void = onThread {
            for index in 0..<attempts {
                let socket = try RawSocket(port: port)
                socket.close(reset: index.isMultiple(of: 2))
            }
        }
        try await lab.good.send(events: 300)
        try await flood
        // Figures: none of the flood's connections is left open, each one the daemon saw was accepted or refused
        // (the per-address limit of 256 may be hit while closes are still queued), and the daemon still answers
        // control requests and devices. On an idle machine it sees all 3,000; under load the kernel may drop
        // some whose handshake overflowed the listen backlog, before the daemon could see them.
        let after = try await eventually("the flood's connections to be closed") { () -> StatusReport? in
            let status = try await lab.status()
            return status.counters.connectionsOpen == 2 ? status : nil
        }.counters
        let handled = (after.connectionsAccepted - before.connectionsAccepted) + (after.connectionsRefused - before.connectionsRefused)
        XCTAssertLessThanOrEqual(handled, attempts)
        XCTAssertGreaterThan(handled, attempts / 2)
        try await lab.good.send(events: 10)
        try await lab.stopAndCheck(hostileSeqs: [], goodEvents: 310)
    }

    func testADeviceThatNeverReadsCannotMakeTheServerBufferItsReplies() async throws {
        let lab = try await HostileLab.start()
        defer { lab.daemon.cleanUp() }
        let before = try peakMemory(of: lab.daemon)
        // 60,000 events without a class, each earning an error reply of about 150 bytes (9 MB of replies in all),
        // from a device with a small receive buffer that never reads.
        let count = 60_000
        let stream = Array(String(repeating: "<event><key>x</key><integer>1</integer></event>\n", count: count).utf8)
        let deaf = try RawSocket(port: lab.daemon.port, receiveBuffer: 4096)
        defer { deaf.close(reset: true) }
        async let flood: Void = onThread { try deaf.write(stream) }
        // Generous: a device that shares its event loop with the flood waits for each large read of it to be
        // decoded (seconds in a debug build) before its own events are handled. They are never lost.
        try await lab.good.send(events: 200, ackTimeout: 60)
        try await flood
        let counters = try await eventually(timeout: 60, "all 60,000 to be decoded") { () -> StatusReport? in
            let status = try await lab.status()
            return status.counters.malformedMessages == count ? status : nil
        }.counters
        // Figures: the kernel buffers hold at most about 4 MiB of replies (tcp_wmem's maximum) and the server
        // 64 KiB more, so over a third of the 60,000 replies were dropped, and counted; the daemon's peak
        // memory grew by less than the replies it would otherwise have held.
        XCTAssertGreaterThan(counters.repliesDropped, count / 3)
        let after = try peakMemory(of: lab.daemon)
        XCTAssertLessThan(after - before, 12 << 20, "peak RSS went from \(before >> 20) MiB to \(after >> 20) MiB")
        try await lab.good.send(events: 10)
        try await lab.stopAndCheck(hostileSeqs: [], goodEvents: 210)
    }
}

// MARK: - The lab

/// A daemon with two sessions: one for a well-behaved device that streams events with seq, one for a hostile
/// device whose good events are stored too, so the tests can count exactly what each session holds.
private struct HostileLab: Sendable {
    let daemon: TestDaemon
    let good: WellBehavedDevice
    let hostile: TestDevice
    let goodSession: SessionRecord
    let hostileSession: SessionRecord

    static func start(arguments: [String] = []) async throws -> HostileLab {
        let daemon = try await TestDaemon.start(arguments: arguments)
        do {
            let goodSession = try await daemon.ctl.call(ControlRequest.StartSession(name: "good", device: "good"))
            let hostileSession = try await daemon.ctl.call(ControlRequest.StartSession(name: "hostile", device: "hostile"))
            let good = try await daemon.connectDevice()
            try await good.hello(DeviceHello(deviceId: "good"))
            let hostile = try await daemon.connectDevice()
            try await hostile.hello(DeviceHello(deviceId: "hostile"))
            _ = try await hostile.waitFor("welcome") { _ in hostile.welcome }
            return HostileLab(daemon: daemon, good: WellBehavedDevice(device: good), hostile: hostile,
                              goodSession: goodSession, hostileSession: hostileSession)
        } catch {
            daemon.cleanUp()
            throw error
        }
    }

    /// What `muevalctl status` shows.
    func status() async throws -> StatusReport {
        try await daemon.ctl.call(ControlRequest.Status())
    }

    /// Stops both sessions and checks their files: the hostile one holds exactly `hostileSeqs`, the good one
    /// exactly seq 1 through `goodEvents`.
    func stopAndCheck(hostileSeqs: [Int64], goodEvents: Int, file: StaticString = #filePath, line: UInt = #line) async throws {
        XCTAssertEqual(good.sent, goodEvents, file: file, line: line)
        let stopped = try await daemon.ctl.call(ControlRequest.StopSessions(.all))
        XCTAssertEqual(stopped.count, 2, file: file, line: line)
        XCTAssertEqual(try SessionReader(path: goodSession.path).events().compactMap(\.seq), (0..<goodEvents).map { Int64($0 + 1) },
                       "the good device's events", file: file, line: line)
        XCTAssertEqual(try SessionReader(path: hostileSession.path).events().compactMap(\.seq), hostileSeqs,
                       "the hostile device's good events", file: file, line: line)
        XCTAssertTrue(daemon.process.isRunning, "muevald is still up", file: file, line: line)
    }
}

/// A device that does everything right: events with increasing seq, each batch waited for until acknowledged.
private final class WellBehavedDevice: @unchecked Sendable {
    let device: TestDevice
    private(set) var sent = 0

    init(device: TestDevice) {
        self.device = device
    }

    func send(events count: Int, ackTimeout: Double = 10) async throws {
        for _ in 0..<count {
            sent += 1
            try await device.event(touch(seq: Int64(sent)))
        }
        try await device.waitForAck(Int64(sent), timeout: ackTimeout)
        XCTAssertTrue(device.errors.isEmpty, "the good device got errors: \(device.errors)")
    }
}

private func touch(seq: Int64) -> OrderedDictionary<String, PlistValue> {
    ["class": .string("UserInputEvent"), "seq": .integer(seq), "x": .integer(seq % 320), "y": .integer(seq % 480)]
}

/// A temporary muevald config file.
struct ConfigFile {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("muevald-\(UUID().uuidString.prefix(8)).toml").path

    init(_ toml: String) throws {
        try toml.write(toFile: path, atomically: true, encoding: .utf8)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// The daemon's peak resident memory (VmHWM of /proc/PID/status), in bytes.
func peakMemory(of daemon: TestDaemon) throws -> Int {
    let status = try String(contentsOfFile: "/proc/\(daemon.process.processIdentifier)/status", encoding: .utf8)
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    else { throw HostileTestError("no VmHWM in /proc/\(daemon.process.processIdentifier)/status") }
    return kilobytes << 10
}

/// Bytes from a fixed seed (xorshift), the same on every run.
private func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    return (0..<count).map { _ in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state >> 24)
    }
}

/// Runs blocking socket calls on a thread of their own, off Swift's small cooperative pool.
private func onThread(_ body: @escaping @Sendable () throws -> Void) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
        Thread {
            do {
                try body()
                continuation.resume()
            } catch {
                continuation.resume(throwing: error)
            }
        }.start()
    }
}

struct HostileTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A loopback TCP connection through plain POSIX calls, for what NIO would not do: never read, reset on close.
final class RawSocket: @unchecked Sendable {
    private let fd: Int32

    init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HostileTestError("socket: errno \(errno)") }
        if var size = receiveBuffer {
            // Before connect, so that the window offered to the server is small from the start.
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        // Bounded: a write the server never drains fails after 30 s instead of hanging the test.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let error = errno
            Glibc.close(fd)
            throw HostileTestError("connect: errno \(error)")
        }
    }

    /// Writes everything, blocking while the server does not read.
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            guard written > 0 else { throw HostileTestError("write: errno \(errno) after \(offset) bytes") }
            offset += written
        }
    }

    /// Closes; with `reset`, abortively (RST instead of FIN), as a crashed or unplugged peer would.
    func close(reset: Bool) {
        if reset {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        Glibc.close(fd)
    }
}
