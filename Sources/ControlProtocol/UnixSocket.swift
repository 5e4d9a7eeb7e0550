#if canImport(Glibc)
internal import Glibc
#endif

/// Unix stream sockets by path, opened by hand: both ends of the control socket keep each connection's
/// descriptor (for the peer's credentials, and to pass open files) before NIO wraps it.
public enum UnixSocket {
    /// A socket connected to `path`. Blocking, as a Unix socket answers at once or not at all.
    public static func connect(_ path: String) throws(UnixSocketError) -> CInt {
        let socket = try open(path)
        let result = try withAddress(path) { Glibc.connect(socket, $0, $1) }
        guard result == 0 else {
            let code = errno
            close(socket)
            throw UnixSocketError(path: path, call: "connect", code: code)
        }
        return socket
    }

    /// A non-blocking socket listening at `path`, which must not exist yet.
    public static func listen(_ path: String, backlog: CInt = 128) throws(UnixSocketError) -> CInt {
        let socket = try open(path, flags: CInt(SOCK_NONBLOCK.rawValue))
        let bound = try withAddress(path) { bind(socket, $0, $1) }
        guard bound == 0, Glibc.listen(socket, backlog) == 0 else {
            let code = errno
            close(socket)
            throw UnixSocketError(path: path, call: bound == 0 ? "listen" : "bind", code: code)
        }
        return socket
    }

    private static func open(_ path: String, flags: CInt = 0) throws(UnixSocketError) -> CInt {
        let socket = Glibc.socket(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue) | flags, 0)
        guard socket >= 0 else { throw UnixSocketError(path: path, call: "socket", code: errno) }
        return socket
    }

    private static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> CInt) throws(UnixSocketError) -> CInt {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw UnixSocketError(path: path, call: "bind", code: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}

public struct UnixSocketError: Error, Equatable, CustomStringConvertible {
    public var path: String
    /// The system call that failed.
    public var call: String
    public var code: CInt

    public init(path: String, call: String, code: CInt) {
        self.path = path
        self.call = call
        self.code = code
    }

    public var description: String {
        code == ENAMETOOLONG
            ? "the socket path \(path) is longer than a Unix socket allows (\(MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1) bytes)"
            : "\(call) \(path): \(String(cString: strerror(code)))"
    }
}
