import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The two ends of a pipe or a socket pair; those still open are closed with this value.
final class Endpoints {
    private(set) var reading: CInt
    private(set) var writing: CInt

    /// A pipe; its writing end non-blocking when `nonBlocking`.
    static func pipe(nonBlocking: Bool = false) -> Endpoints {
        var ends: [CInt] = [0, 0]
        precondition(Glibc.pipe(&ends) == 0)
        if nonBlocking { precondition(fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK) == 0) }
        return Endpoints(reading: ends[0], writing: ends[1])
    }

    static func socketPair() -> Endpoints {
        var ends: [CInt] = [0, 0]
        precondition(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0, &ends) == 0)
        return Endpoints(reading: ends[0], writing: ends[1])
    }

    private init(reading: CInt, writing: CInt) {
        self.reading = reading
        self.writing = writing
    }

    deinit {
        if reading >= 0 { close(reading) }
        if writing >= 0 { close(writing) }
    }

    func closeReading() {
        close(reading)
        reading = -1
    }

    func closeWriting() {
        close(writing)
        writing = -1
    }

    /// Reads the reading end on a thread of its own until the writing end is closed, sleeping
    /// `pauseMicroseconds` after each read so that the writer finds the pipe full.
    func drain(pauseMicroseconds: UInt32 = 0) -> Drain {
        Drain(descriptor: reading, pauseMicroseconds: pauseMicroseconds)
    }
}

/// What a thread read from a descriptor until its end.
final class Drain: @unchecked Sendable {
    private let done = NSCondition()
    private var bytes: [UInt8] = []
    private var finished = false

    fileprivate init(descriptor: CInt, pauseMicroseconds: UInt32) {
        let thread = Thread { [self] in
            var chunk = [UInt8](repeating: 0, count: 4096)
            var received: [UInt8] = []
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                received += chunk[..<count]
                if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
            }
            done.lock()
            (bytes, finished) = (received, true)
            done.broadcast()
            done.unlock()
        }
        thread.start()
    }

    /// Waits for the end of the data.
    func received() -> [UInt8] {
        done.lock()
        defer { done.unlock() }
        while !finished { done.wait() }
        return bytes
    }
}

/// Bytes that differ from one position to the next, so that a piece lost or repeated shows.
func pattern(_ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
}

/// Runs `body` with SIGPIPE blocked on this thread, then takes back the SIGPIPE it raised: a write to a pipe
/// whose reader is gone fails with EPIPE instead of ending the test process (which must not ignore SIGPIPE
/// for good: the processes other tests start would inherit that).
func withoutSIGPIPE<T>(_ body: () throws -> T) rethrows -> T {
    var pipeSignal = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
    defer {
        var now = timespec(tv_sec: 0, tv_nsec: 0)
        _ = sigtimedwait(&pipeSignal, nil, &now)
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }
    return try body()
}
