#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A read or write of a descriptor that failed: which call, its errno, and where in the file.
public struct DescriptorIOError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The system call that failed.
    public enum Operation: String, Sendable {
        case write, pwrite, send, pread
        /// Waiting for a full non-blocking descriptor to take more (`writeAll(_:waitingWhenFull:)`).
        case poll
    }

    public let operation: Operation
    /// The call's errno; 0 when it took no bytes and gave no error (a descriptor that accepts nothing more).
    public let errno: CInt
    /// For `pwrite` and `pread`: the byte of the file the failed call began at.
    public let offset: Int64?

    public init(_ operation: Operation, errno: CInt, offset: Int64? = nil) {
        self.operation = operation
        self.errno = errno
        self.offset = offset
    }

    /// The reader of a pipe or socket went away (EPIPE, ECONNRESET): nobody wants the rest.
    public var isReaderGone: Bool { errno == EPIPE || errno == ECONNRESET }

    /// What went wrong, for a message: strerror's text, which names what a user can do something about
    /// ("No space left on device", "Permission denied").
    public var reason: String {
        errno == 0 ? "no bytes were taken" : String(cString: strerror(errno))
    }

    public var description: String {
        "\(operation.rawValue)\(offset.map { " at byte \($0)" } ?? ""): \(reason)"
    }
}
