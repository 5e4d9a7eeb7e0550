internal import ControlProtocol
internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// The control socket's listener. Accepts on a thread of its own rather than through NIO: the server
/// needs each connection's descriptor (the peer's groups, the open files it passes) before NIO wraps it.
final class UnixListener: Sendable {
    /// Accepted connections, each descriptor the receiver's to close; finishes once `close()` was called.
    let connections: AsyncStream<CInt>
    private let wakeUp: CInt
    /// Accepted connections waiting for the server.
    static let backlog = 128

    /// Listens at `path`, which must not exist.
    init(path: String) throws {
        let socket = try UnixSocket.listen(path)
        // accept4 and pipe2 are behind _GNU_SOURCE in Glibc's module map; close-on-exec is set right
        // after instead, and muevald starts no programs that could inherit a descriptor meanwhile.
        var pipe: [CInt] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else {
            let code = errno
            Glibc.close(socket)
            throw UnixSocketError(path: path, call: "pipe", code: code)
        }
        for end in pipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        wakeUp = pipe[1]
        // Bounded like every queue: connections beyond it while the server is busy are closed at once.
        let (connections, continuation) = AsyncStream.makeStream(of: CInt.self, bufferingPolicy: .bufferingOldest(Self.backlog))
        self.connections = connections
        Thread.detachNewThread { [wake = pipe[0]] in
            Self.accept(on: socket, until: wake, into: continuation)
        }
    }

    /// Stops accepting and closes the socket; its path stays (a replacement may listen there already).
    func close() {
        var byte: UInt8 = 0
        _ = write(wakeUp, &byte, 1)
    }

    deinit { Glibc.close(wakeUp) }

    private static func accept(on socket: CInt, until wake: CInt, into continuation: AsyncStream<CInt>.Continuation) {
        defer {
            Glibc.close(socket)
            Glibc.close(wake)
            continuation.finish()
        }
        var watched = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        while true {
            guard poll(&watched, 2, -1) >= 0 || errno == EINTR else { return }
            if watched[1].revents != 0 { return }
            guard watched[0].revents != 0 else { continue }
            let connection = Glibc.accept(socket, nil, nil)
            if connection >= 0 {
                _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                switch continuation.yield(connection) {
                case .enqueued: break
                case .dropped, .terminated: Glibc.close(connection)
                @unknown default: Glibc.close(connection)
                }
                continue
            }
            switch errno {
            case EINTR, EAGAIN, ECONNABORTED, EPROTO:
                continue
            case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                // Out of descriptors or memory: the pending connection stays queued. Wait a little (or for
                // close) rather than spin on a socket that stays readable.
                var onlyWake = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
                if poll(&onlyWake, 1, 100) > 0 { return }
            default:
                return
            }
        }
    }
}
