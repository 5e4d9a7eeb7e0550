internal import Foundation
internal import Synchronization

/// Whether anything opened a FIFO, even briefly (issue 38's face-video attack names one in a playlist): a writer
/// blocked in open(2) until some reader opens the FIFO, so that an opening is never missed between two looks.
public final class FIFOWatch: Sendable {
    private let opened = Mutex(false)
    private let done = DispatchSemaphore(value: 0)

    public init(_ path: String) {
        Thread.detachNewThread { [self] in
            // A signal to this thread (a test's child exiting) may interrupt the blocking open: the watch goes on.
            var descriptor: Int32
            repeat { descriptor = open(path, O_WRONLY | O_CLOEXEC) } while descriptor < 0 && errno == EINTR
            opened.withLock { $0 = descriptor >= 0 }
            if descriptor >= 0 { close(descriptor) }
            done.signal()
        }
    }

    public var wasOpened: Bool { opened.withLock { $0 } }

    /// Ends the writer's wait by opening the FIFO for reading; true once the writer ended.
    public func release(_ path: String) -> Bool {
        let reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        defer { if reader >= 0 { close(reader) } }
        return done.wait(timeout: .now() + 30) == .success
    }
}
