internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Who writes a data directory: one muevald, or `muevalctl import --data-dir` while no muevald runs.
/// An exclusive `flock(2)` on `muevald.lock` in the directory, held as long as the value lives (and
/// released by the kernel if the process dies, so a crash never leaves a stale lock).
public final class DataDirectoryLock: Sendable {
    public static let fileName = "muevald.lock"
    private let descriptor: Int32

    /// Takes the lock of `directory` (made, private, if missing), or says who holds it.
    public init(directory: String) throws {
        try DataDirectory.prepare(directory)
        let path = directory + "/" + Self.fileName
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DataDirectoryLockError(message: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw DataDirectoryLockError(message: "\(directory) is in use by a running muevald (it holds \(Self.fileName)): "
                + "work through that muevald, or stop it first")
        }
    }

    deinit {
        close(descriptor)
    }
}

public struct DataDirectoryLockError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
