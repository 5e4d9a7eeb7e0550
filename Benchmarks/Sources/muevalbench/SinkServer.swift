import Glibc

/// The bound's server: one thread, poll(2), reads every connection into one buffer and throws the
/// bytes away. What it reaches is what loopback TCP and the kernel allow on this machine with the
/// same sender, not a property of muevald.
enum SinkServer {
    static func run(port: UInt16) throws -> Never {
        let listener = try Sockets.listen(port: port)
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        var polled = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            guard poll(&polled, nfds_t(polled.count), -1) > 0 else { continue }
            var accepted: [Int32] = []
            for i in polled.indices where polled[i].revents != 0 {
                let fd = polled[i].fd
                if fd == listener {
                    while case let client = accept(listener, nil, nil), client >= 0 {
                        _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
                        accepted.append(client)
                    }
                    continue
                }
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if count > 0 { continue }
                    // EOF: the sender is done; closing tells it that every byte was read.
                    if count == 0 || errno != EAGAIN {
                        close(fd)
                        polled[i].fd = -1
                    }
                    break
                }
            }
            polled.removeAll { $0.fd < 0 }
            polled += accepted.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        }
    }
}
