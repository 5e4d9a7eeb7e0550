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

/// A daemon with two sessions: one for a well-behaved device that streams events with seq, one for a hostile
/// device whose good events are stored too, so the tests can count exactly what each session holds.
struct HostileLab: Sendable {
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

    /// An event both devices send, its seq the one counted. A member, not a module-wide function: CrashRecoveryTests
    /// has a file-private `touch(seq:)` that one would clash with.
    static func touch(seq: Int64) -> OrderedDictionary<String, PlistValue> {
        ["class": .string("UserInputEvent"), "seq": .integer(seq), "x": .integer(seq % 320), "y": .integer(seq % 480)]
    }
}

/// A device that does everything right: events with increasing seq, each batch waited for until acknowledged.
final class WellBehavedDevice: @unchecked Sendable {
    let device: TestDevice
    private(set) var sent = 0

    init(device: TestDevice) {
        self.device = device
    }

    func send(events count: Int, ackTimeout: Double = 10) async throws {
        for _ in 0..<count {
            sent += 1
            try await device.event(HostileLab.touch(seq: Int64(sent)))
        }
        try await device.waitForAck(Int64(sent), timeout: ackTimeout)
        XCTAssertTrue(device.errors.isEmpty, "the good device got errors: \(device.errors)")
    }
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
