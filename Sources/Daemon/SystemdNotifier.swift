internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// The sd_notify protocol (sd_notify(3)): newline-separated `KEY=VALUE` assignments in one
/// datagram to the Unix socket named by `NOTIFY_SOCKET`. Written here rather than linking
/// libsystemd for one `sendto` call, so that muevald builds and runs where libsystemd-dev is absent.
struct SystemdNotifier: Sendable {
    private let address: [UInt8]
    /// How often the service manager wants `WATCHDOG=1`, when `WatchdogSec=` is set for this process.
    let watchdogInterval: Duration?

    /// nil when not started by systemd with `Type=notify` (no `NOTIFY_SOCKET`).
    init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let socket = environment["NOTIFY_SOCKET"], !socket.isEmpty,
              socket.hasPrefix("/") || socket.hasPrefix("@") else { return nil }
        var bytes = Array(socket.utf8)
        // "@name" is a socket in the abstract namespace: its address starts with a zero byte.
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }
        address = bytes
        let forThisProcess = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        if forThisProcess, let micros = environment["WATCHDOG_USEC"].flatMap(UInt64.init), micros > 0 {
            watchdogInterval = .microseconds(Int64(micros))
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends the assignments; failures are reported, never fatal (the manager may be gone).
    @discardableResult
    func notify(_ assignments: String...) -> Bool {
        let message = Array(assignments.joined(separator: "\n").utf8)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var unix = sockaddr_un()
        unix.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: unix.sun_path)
        guard address.count < capacity else { return false }
        withUnsafeMutableBytes(of: &unix.sun_path) { $0.copyBytes(from: address) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + address.count + (address.first == 0 ? 0 : 1))
        let sent = withUnsafePointer(to: &unix) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, length) }
            }
        }
        return sent == message.count
    }
}
