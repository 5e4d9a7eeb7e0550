internal import Foundation
internal import NIOConcurrencyHelpers
#if canImport(Glibc)
internal import Glibc
#endif

/// Plays systemd's side of sd_notify for a test: a datagram socket that muevald is pointed at
/// with `NOTIFY_SOCKET`, collecting what it says (READY=1, STATUS=…, WATCHDOG=1, STOPPING=1).
public final class NotifySocket: @unchecked Sendable {
    public let path: String
    private let fd: Int32
    private let received = NIOLockedValueBox<[String]>([])

    public init(directory: String) throws {
        path = directory + "/notify.sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0 else { throw TestDaemonError.timedOut("a notify socket at \(path): errno \(errno)") }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Every assignment received so far (`READY=1`, `STATUS=…`), in order.
    public var assignments: [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            let lines = String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").map(String.init)
            received.withLockedValue { $0 += lines }
        }
        return received.withLockedValue { $0 }
    }
}
