import Foundation
import Glibc

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum Sockets {
    /// A TCP connection to 127.0.0.1:`port` from loopback address 127.0.0.`source` (the whole of
    /// 127/8 is loopback on Linux: many sources stand for many phones, and stay under muevald's
    /// per-address limit). Blocking until connected, then non-blocking. `receiveBuffer` sets SO_RCVBUF
    /// before connecting (a small one makes a stalled reader's window fill at once).
    static func connect(port: UInt16, source: UInt8 = 1, receiveBuffer: Int32? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var local = address(127, 0, 0, source, port: 0)
        var remote = address(127, 0, 0, 1, port: port)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw BenchError("connect to 127.0.0.1:\(port) from 127.0.0.\(source): \(reason)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    /// A listening TCP socket on 127.0.0.1:`port` (0: any free port).
    static func listen(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var local = address(127, 0, 0, 1, port: port)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, Glibc.listen(fd, 4096) == 0 else {
            throw BenchError("cannot listen on 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        return fd
    }

    /// A TCP port nobody listens on right now.
    static func freePort() throws -> UInt16 {
        let fd = try listen(port: 0)
        defer { close(fd) }
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: bound.sin_port)
    }

    /// A blocking connection to the Unix socket at `path`.
    static func connectUnix(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw BenchError("cannot connect to the control socket \(path): \(reason)")
        }
        return fd
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EAGAIN || errno == EINTR { usleep(100); continue }
                throw BenchError("write: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// Reads from the non-blocking `fd` into `received` until `done(received)` or the end of the stream.
    static func read(_ fd: Int32, into received: inout [UInt8], deadline: Double, until done: ([UInt8]) -> Bool) throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var entry = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        while !done(received) {
            guard wallClock() < deadline else { throw BenchError("no answer on the console's socket in time") }
            guard poll(&entry, 1, 50) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw BenchError("read: \(String(cString: strerror(errno)))")
            }
            received += chunk[..<count]
        }
    }

    private static func address(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = (UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d)).bigEndian
        return address
    }
}

/// One request on muevald's control socket (docs/CONTROL.md): a JSON line out, the final line back.
enum ControlRequest {
    /// The live tails muevald counts (`status`'s `tails`).
    static func tails(_ socket: String) throws -> Int {
        ((try send(socket, ["command": "status"]) as? [String: Any])?["tails"] as? NSNumber)?.intValue ?? 0
    }

    static func send(_ socket: String, _ request: [String: Any]) throws -> Any {
        let fd = try Sockets.connectUnix(socket)
        defer { close(fd) }
        try Sockets.writeAll(fd, Array(try JSONSerialization.data(withJSONObject: request)) + [UInt8(ascii: "\n")])
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            received += chunk[..<count]
            if received.last == UInt8(ascii: "\n") { break }
        }
        guard let line = received.split(separator: UInt8(ascii: "\n")).last,
              let reply = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
            throw BenchError("muevald gave no reply to \(request)")
        }
        guard reply["ok"] as? Bool == true else {
            throw BenchError("muevald refused \(request): \(reply["error"] ?? "?")")
        }
        return reply["result"] ?? [:]
    }
}
