internal import CFileSystemSync
internal import Dispatch
internal import Foundation
internal import NIOConcurrencyHelpers

/// Why a shared sync failed: what was committed since the last one may not be on the disk.
public struct SharedSyncError: Error, Sendable, CustomStringConvertible {
    public let directory: String
    public let errno: Int32

    public var description: String {
        "cannot sync the file system of \(directory) to the disk (\(String(cString: strerror(errno)))): events committed since the last sync may be lost on a power cut"
    }
}

/// One sync of the data directory's file system for every session that committed meanwhile (`storage.shared_sync`).
///
/// With `storage.synchronous = "full"` each session file used to fsync its write-ahead log at every commit: with 500
/// web phones each sending a batch every 100 ms that was 5,000 fsyncs a second, each one a journal commit of the file
/// system and a thread blocked in the kernel (docs/BENCHMARKS.md, "Phones at once"). Here each session commits
/// without a sync of its own (SQLite's `synchronous = NORMAL`) and waits for one syncfs(2) that starts after its
/// commit; its devices are acknowledged only when that sync has ended, so an acknowledged event survives a power cut
/// as before. syncfs also writes out other programs' dirty pages on that file system: a data directory on a file
/// system shared with heavy writers makes each sync longer (docs/STORAGE.md).
public final class SharedSync: Sendable {
    public typealias Waiter = @Sendable (Result<Void, SharedSyncError>) -> Void

    private let directory: String
    private let descriptor: CInt
    private let sync: @Sendable (CInt) -> CInt
    private let machine = NIOLockedValueBox(SharedSyncStateMachine<Waiter>())
    /// Syncs run here, never on an event loop or a session's writer queue: syncfs blocks for as long as the disk takes.
    private let queue = DispatchQueue(label: "mueval.shared-sync")
    private let counts = NIOLockedValueBox((syncs: 0, failures: 0))

    /// Opens `directory`, whose file system is synced.
    public convenience init(directory: String) throws(SharedSyncError) {
        try self.init(directory: directory, sync: { mueval_syncfs($0) })
    }

    /// `sync` stands for syncfs(2) in tests.
    init(directory: String, sync: @escaping @Sendable (CInt) -> CInt) throws(SharedSyncError) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SharedSyncError(directory: directory, errno: errno) }
        // A system without syncfs cannot share a sync: the daemon then keeps a sync per commit (MuEvalDaemon).
        guard sync(descriptor) == 0 else {
            let error = SharedSyncError(directory: directory, errno: errno)
            close(descriptor)
            throw error
        }
        self.directory = directory
        self.descriptor = descriptor
        self.sync = sync
    }

    deinit { close(descriptor) }

    /// Calls `waiter` once a sync that started after this call has ended (on the sync's queue).
    public func afterNextSync(_ waiter: @escaping Waiter) {
        if case .startSync = machine.withLockedValue({ $0.wait(waiter) }) {
            queue.async { self.runSyncs() }
        }
    }

    /// Syncs done and failed so far (`status`, /metrics).
    public var done: (syncs: Int, failures: Int) { counts.withLockedValue { $0 } }

    private func runSyncs() {
        while true {
            let result: Result<Void, SharedSyncError> = sync(descriptor) == 0
                ? .success(()) : .failure(SharedSyncError(directory: directory, errno: errno))
            counts.withLockedValue {
                $0.syncs += 1
                if case .failure = result { $0.failures += 1 }
            }
            let (covered, again) = machine.withLockedValue { $0.syncEnded() }
            covered.forEach { $0(result) }
            if !again { return }
        }
    }
}
