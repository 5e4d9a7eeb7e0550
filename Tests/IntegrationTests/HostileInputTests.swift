import DaemonTestSupport
import Foundation
import MuEvalWire
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// What a lab network or a buggy capture library can throw at muevald, against the real daemon: every hostile
/// message gets an `<error>`, a log line and a count in `status`, and a well-behaved device on another
/// connection keeps storing every one of its events. Each test names the figure it checks. Connections that are slow,
/// idle or too many are HostileConnectionTests'; the lab both use is in HostileLab.swift.
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
            try await lab.hostile.event(HostileLab.touch(seq: probe))
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
        try await lab.hostile.event(HostileLab.touch(seq: 1))
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
        try await lab.hostile.event(HostileLab.touch(seq: 2))
        try await lab.hostile.event(HostileLab.touch(seq: 3))
        try await lab.hostile.waitForAck(3)
        XCTAssertEqual(lab.hostile.errors.count, 1, "\(lab.hostile.errors)")
        XCTAssertEqual(lab.hostile.errors.first?.seq, 1, "the error names the cut-off event's seq")
        try await lab.good.send(events: 10)

        // Cut off by the end of the connection: no one is left to answer, so a count and a log line.
        // Figure: the 2 events before the cut stored, 1 malformed message counted.
        let cut = try await lab.daemon.connectDevice()
        try await cut.hello(DeviceHello(deviceId: "hostile"))
        try await cut.event(HostileLab.touch(seq: 4))
        try await cut.event(HostileLab.touch(seq: 5))
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
        try await lab.hostile.event(HostileLab.touch(seq: 1))
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
