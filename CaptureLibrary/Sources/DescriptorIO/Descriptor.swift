#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A file descriptor's reads and writes that move every byte asked for: each call is repeated where the
/// system moved fewer bytes (a pipe, a socket, a signal mid-copy) or was interrupted (EINTR), and any other
/// failure throws one error type. Everything in muEval that loops over read(2) or write(2) belongs here.
///
/// Borrows the descriptor: whoever opened it closes it.
public struct Descriptor: Sendable, Hashable {
    public let rawValue: CInt

    public init(_ rawValue: CInt) {
        self.rawValue = rawValue
    }

    /// write(2) until all of `bytes` is written. A descriptor in non-blocking mode that is full fails with
    /// EAGAIN unless `waitingWhenFull`: then poll(2) waits until it takes more (standard output inherited
    /// non-blocking).
    public func writeAll(_ bytes: UnsafeRawBufferPointer, waitingWhenFull: Bool = false) throws(DescriptorIOError) {
        try transferAll(bytes, .write, waitingWhenFull: waitingWhenFull) { done in
            write(rawValue, bytes.baseAddress! + done, bytes.count - done)
        }
    }

    /// pwrite(2) until all of `bytes` is written at `offset` (the descriptor's own position stays).
    public func writeAll(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(DescriptorIOError) {
        try transferAll(bytes, .pwrite, offset: offset) { done in
            pwrite(rawValue, bytes.baseAddress! + done, bytes.count - done, off_t(offset + Int64(done)))
        }
    }

    /// send(2) until all of `bytes` is sent on this socket; with MSG_NOSIGNAL, so that a reader that went
    /// away is an error (`isReaderGone`), not SIGPIPE. Darwin has no such flag: there the socket's SO_NOSIGPIPE does it.
    public func sendAll(_ bytes: UnsafeRawBufferPointer) throws(DescriptorIOError) {
        try transferAll(bytes, .send) { done in
            send(rawValue, bytes.baseAddress! + done, bytes.count - done, Self.noSignal)
        }
    }

    #if canImport(Glibc)
    private static let noSignal = CInt(MSG_NOSIGNAL)
    #else
    private static let noSignal: CInt = 0
    #endif

    /// pread(2) at `offset` until `buffer` is full or the file ends: the number of bytes read, fewer than
    /// `buffer.count` only at the end of the file.
    public func readFully(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(DescriptorIOError) -> Int {
        var done = 0
        while done < buffer.count {
            let count = pread(rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
            if count > 0 {
                done += count
            } else if count == 0 {
                break
            } else if errno != EINTR {
                throw DescriptorIOError(.pread, errno: errno, offset: offset + Int64(done))
            }
        }
        return done
    }

    /// Repeats `call` (given how many bytes are done, it moves some of the rest) until all of `bytes` are moved.
    private func transferAll(
        _ bytes: UnsafeRawBufferPointer, _ operation: DescriptorIOError.Operation, offset: Int64? = nil,
        waitingWhenFull: Bool = false, _ call: (Int) -> Int
    ) throws(DescriptorIOError) {
        var done = 0
        while done < bytes.count {
            let count = call(done)
            if count > 0 {
                done += count
                continue
            }
            let code = count == 0 ? 0 : errno
            switch code {
            case EINTR: continue
            case EAGAIN where waitingWhenFull: try waitUntilWritable()
            default: throw DescriptorIOError(operation, errno: code, offset: offset.map { $0 + Int64(done) })
            }
        }
    }

    private func waitUntilWritable() throws(DescriptorIOError) {
        var entry = pollfd(fd: rawValue, events: Int16(POLLOUT), revents: 0)
        while poll(&entry, 1, -1) < 0 {
            guard errno == EINTR else { throw DescriptorIOError(.poll, errno: errno) }
        }
    }
}
