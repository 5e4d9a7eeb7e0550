public import JournalStorage
internal import DequeModule
internal import Dispatch
internal import Foundation
internal import NIOConcurrencyHelpers

/// What one group commit did, reported to the capture server after the transaction committed.
public struct CommitReport: Sendable {
    /// The records of the batch as they were appended (one array per `append`), in storage order.
    public var appended: [[JournalRecord]]
    /// The row id given to each record of `records`, or nil where (device, seq) was already stored.
    public var rowIDs: [Int64?]
    /// The highest `seq` now durable, per origin (connection), duplicates included.
    public var highestSeqByOrigin: [UInt64: Int64]
    /// Set when the batch could not be stored (none of `records` is in the file), or when the shared sync after it
    /// failed (they are in the file, but may not be on the disk).
    public var failure: SQLiteError?
    /// When the commit finished (seconds since 1970).
    public var committedAt: Double

    /// The records of the batch, in storage order.
    public var records: FlattenSequence<[[JournalRecord]]> { appended.joined() }
}

/// Tuning of a writer's queue.
public struct JournalWriterLimits: Sendable {
    /// Above this many bytes waiting for commit, `append` asks its callers to stop reading their sockets.
    public var maxPendingBytes: Int
    public var synchronous: JournalSynchronous
    /// How long a commit waits for more events to join its batch once the first one is queued.
    /// Zero: at once; batches still grow by themselves while a commit is running. A delay trades
    /// latency for fewer, larger transactions on slow disks.
    public var commitDelay: Duration
    /// SQLite's page cache of the session file, in KiB (`SessionFile.init`).
    public var cacheKiB: Int

    public init(maxPendingBytes: Int = 8 << 20, synchronous: JournalSynchronous = .full, commitDelay: Duration = .zero,
                cacheKiB: Int = SessionFile.defaultCacheKiB) {
        self.maxPendingBytes = maxPendingBytes
        self.synchronous = synchronous
        self.commitDelay = commitDelay
        self.cacheKiB = cacheKiB
    }
}

/// The single writer of one session file: group commit with a bounded queue.
///
/// With a `SharedSync` (and `synchronous = .full`) a commit does not sync the file itself: its report waits for the
/// next sync of the file system, shared with every other session, and the writer's next commit waits for that report,
/// so that what arrives meanwhile joins one larger batch.
///
/// `append` never blocks and never touches the disk: it queues the records and, if no commit
/// is running, schedules one on the writer's serial queue. A commit takes what is queued, up to
/// a quarter of `maxPendingBytes`, in one transaction, so batches grow by themselves under load
/// (no per-event fsync) and stay single events when idle (lowest latency). When the queue holds
/// more than `maxPendingBytes`, `append` answers `.overloaded`; the caller stops reading its
/// socket and registers with `whenDrained` to be resumed once the queue is under half of the limit.
///
/// The cap on a commit is there because the batch being committed counts against the limit: with
/// no cap one commit could take all of it, and every connection would stop reading until that
/// commit and its fsync were done, instead of decoding the next batch meanwhile.
public final class JournalWriter: @unchecked Sendable {
    public enum Admission: Sendable, Equatable {
        case accepted
        /// Queued, but the queue is over its limit: stop reading until `whenDrained` calls back.
        case overloaded
        /// The writer is closed; nothing was queued.
        case closed
    }

    public let path: String
    private let file: SessionFile
    private let limits: JournalWriterLimits
    /// Set when commits share the file system's sync instead of syncing the file.
    private let sharedSync: SharedSync?
    private let queue: DispatchQueue
    private let onCommit: @Sendable (CommitReport) -> Void
    /// What a record becomes before it is stored, on the writer's queue, or nil where it is stored as it came (page
    /// records are sanitised here, off the event loops: a snapshot's allowlist pass takes as long as its size).
    private let prepare: (@Sendable (JournalRecord) -> JournalRecord?)?

    /// Tells an append's caller how its records fared, after the commit that took them: their row
    /// ids (nil where (device, seq) was already stored), or why none of them was stored.
    public typealias Completion = @Sendable (Result<[Int64?], SQLiteError>) -> Void

    /// Records as appended (one socket read each), so that appending copies none of them.
    private struct Chunk {
        var records: [JournalRecord]
        var bytes: Int
        /// Devices learn from the commit report (acks); a caller outside the capture path (an observer's note) from this.
        var whenCommitted: Completion?
    }

    private struct State {
        var pending = Deque<Chunk>()
        /// Bytes of `pending` and of the batch being committed.
        var pendingBytes = 0
        var commitScheduled = false
        /// Commits whose report waits for the shared sync; the next ordinary commit waits until none does.
        var awaitingSync = 0
        var closed = false
        var drainWaiters: [@Sendable () -> Void] = []
    }
    private let state = NIOLockedValueBox(State())

    /// Opens the session file at `path` for writing; `onCommit` runs on the writer's queue after every commit (with
    /// `sharedSync` and `synchronous = .full`, after the sync that followed it).
    public init(path: String, limits: JournalWriterLimits, sharedSync: SharedSync? = nil,
                prepare: (@Sendable (JournalRecord) -> JournalRecord?)? = nil,
                onCommit: @escaping @Sendable (CommitReport) -> Void) throws {
        self.path = path
        self.prepare = prepare
        self.limits = limits
        self.onCommit = onCommit
        // `normal` never syncs at a commit, so it has nothing to share.
        self.sharedSync = limits.synchronous == .full ? sharedSync : nil
        file = try SessionFile(path: path, synchronous: self.sharedSync == nil ? limits.synchronous : .normal,
                               cacheKiB: limits.cacheKiB)
        let label = "mueval.journal.\((path as NSString).lastPathComponent)"
        // A writer that shares the sync never waits for the disk in a commit, so the system's pool (about a thread per
        // core) serves every such writer; a queue of its own would be a thread per session, and at 500 phones switching
        // between 270 threads was half of muevald's CPU (docs/BENCHMARKS.md, "Phones at once"). A writer that syncs at
        // its commits blocks in the kernel, so it keeps a thread of its own.
        queue = self.sharedSync == nil ? DispatchQueue(label: label) : DispatchQueue(label: label, target: .global())
    }

    /// Queues records for the next group commit; `whenCommitted` runs on the writer's queue after
    /// that commit (after `onCommit`), unless the answer is `.closed`.
    public func append(_ records: [JournalRecord], whenCommitted: Completion? = nil) -> Admission {
        let bytes = records.reduce(0) { $0 + $1.footprint }
        let (admission, schedule) = state.withLockedValue { state -> (Admission, Bool) in
            guard !state.closed else { return (.closed, false) }
            state.pending.append(Chunk(records: records, bytes: bytes, whenCommitted: whenCommitted))
            state.pendingBytes += bytes
            let schedule = !state.commitScheduled
            state.commitScheduled = true
            return (state.pendingBytes > limits.maxPendingBytes ? .overloaded : .accepted, schedule)
        }
        if schedule {
            if limits.commitDelay > .zero {
                let delay = DispatchTimeInterval.nanoseconds(Int(limits.commitDelay / .nanoseconds(1)))
                queue.asyncAfter(deadline: .now() + delay) { self.commitPending() }
            } else {
                queue.async { self.commitPending() }
            }
        }
        return admission
    }

    /// Calls `resume` once the queue is below half its limit (at once if it already is).
    public func whenDrained(_ resume: @escaping @Sendable () -> Void) {
        let now = state.withLockedValue { state -> Bool in
            if state.pendingBytes <= limits.maxPendingBytes / 2 || state.closed { return true }
            state.drainWaiters.append(resume)
            return false
        }
        if now { resume() }
    }

    /// Bytes waiting for commit.
    public var pendingBytes: Int { state.withLockedValue { $0.pendingBytes } }

    /// Runs `body` on the writer's queue after every event appended before this call is committed and reported;
    /// returns once what it wrote is synced. Metadata changes (session row, devices, gaps) go through here, so the file
    /// has one writer.
    public func perform<T: Sendable>(_ body: @escaping @Sendable (SessionFile) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                self.commitPending(evenWhileAwaitingSync: true)
                self.afterReports {
                    let result = Result { try body(self.file) }
                    guard self.sharedSync != nil else { return continuation.resume(with: result) }
                    self.afterNextSync { synced in
                        switch (result, synced) {
                        case (.success, .failure(let error)): continuation.resume(throwing: error)
                        default: continuation.resume(with: result)
                        }
                    }
                }
            }
        }
    }

    /// Like `perform`, without waiting: for metadata that must be written in order but not before the caller goes on
    /// (and for what must follow the reports of the events appended before it, as the tail's disconnect marker).
    public func submit(_ body: @escaping @Sendable (SessionFile) throws -> Void,
                       onFailure: @escaping @Sendable (Error) -> Void) {
        queue.async {
            self.commitPending(evenWhileAwaitingSync: true)
            self.afterReports {
                do { try body(self.file) } catch { return onFailure(error) }
                self.sharedSync?.afterNextSync { synced in
                    if case .failure(let error) = synced { onFailure(error) }
                }
            }
        }
    }

    /// Waits until everything appended so far is committed.
    public func flush() async throws {
        try await perform { _ in () }
    }

    /// Commits what is queued, refuses further appends, folds the WAL into the file and closes it.
    /// With `buildingIndexes` (a session that ended) the file gets its indexes first; without (a
    /// session that goes on after a restart, which would drop them again) it stays without.
    public func close(buildingIndexes: Bool = true) async throws {
        state.withLockedValue { $0.closed = true }
        try await perform { file in try Self.offThePool { try file.finish(buildingIndexes: buildingIndexes) } }
        let waiters = state.withLockedValue { state in
            defer { state.drainWaiters = [] }
            return state.drainWaiters
        }
        waiters.forEach { $0() }
    }

    // MARK: On the writer's queue

    /// Commits what is queued, batch by batch. With a shared sync it commits one batch and leaves the rest for when
    /// that batch's sync has ended (unless `evenWhileAwaitingSync`: metadata must follow every event appended before it).
    private func commitPending(evenWhileAwaitingSync: Bool = false) {
        let maxBatchBytes = max(limits.maxPendingBytes / 4, 1)
        while true {
            var completions: [(records: Range<Int>, call: Completion)] = []
            let (chunks, bytes) = state.withLockedValue { state -> ([[JournalRecord]], Int) in
                // The sync's end calls this again; `commitScheduled` stays set, so appends meanwhile do not.
                if state.awaitingSync > 0 && !evenWhileAwaitingSync { return ([], 0) }
                var chunks: [[JournalRecord]] = []
                var bytes = 0
                var records = 0
                while let next = state.pending.first, chunks.isEmpty || bytes + next.bytes <= maxBatchBytes {
                    chunks.append(state.pending.removeFirst().records)
                    bytes += next.bytes
                    if let call = next.whenCommitted { completions.append((records..<records + next.records.count, call)) }
                    records += next.records.count
                }
                if chunks.isEmpty { state.commitScheduled = false }
                return (chunks, bytes)
            }
            if chunks.isEmpty { return }
            let stored = store(chunks, bytes: bytes, completions: completions)
            guard sharedSync != nil else {
                report(stored)
                continue
            }
            state.withLockedValue { $0.awaitingSync += 1 }
            afterNextSync { synced in
                var commit = stored
                if case .failure(let error) = synced, commit.report.failure == nil {
                    commit.report.failure = SQLiteError(code: SQLiteError.ioError, message: error.description, context: "sync after a commit to \(self.path)")
                    commit.report.highestSeqByOrigin = [:]
                }
                self.report(commit)
                let more = self.state.withLockedValue { state in
                    state.awaitingSync -= 1
                    return state.awaitingSync == 0
                }
                if more { self.commitPending() }
            }
            if !evenWhileAwaitingSync { return }
        }
    }

    /// Runs `next` on the writer's queue once every commit made so far has been reported: at once, unless commits
    /// wait for the shared sync; then after their reports, which that sync's end queues first.
    private func afterReports(_ next: @escaping @Sendable () -> Void) {
        guard sharedSync != nil, state.withLockedValue({ $0.awaitingSync > 0 }) else { return next() }
        afterNextSync { _ in next() }
    }

    /// Runs `next` on the writer's queue once a shared sync that starts after now has ended: what the writer's queue
    /// did before is then on the disk, and the reports that sync's end queued for earlier commits come first.
    private func afterNextSync(_ next: @escaping @Sendable (Result<Void, SharedSyncError>) -> Void) {
        sharedSync?.afterNextSync { synced in self.queue.async { next(synced) } }
    }

    /// A stored batch whose report (and whose bytes' release from the queue) may wait for a sync.
    private struct StoredBatch: Sendable {
        var report: CommitReport
        var bytes: Int
        var completions: [(records: Range<Int>, call: Completion)]
    }

    private func store(_ appended: [[JournalRecord]], bytes: Int, completions: [(records: Range<Int>, call: Completion)]) -> StoredBatch {
        // Replaced in place where `prepare` changes a record: a batch it leaves alone is not copied.
        var batch = appended
        if let prepare {
            for chunk in batch.indices {
                for index in batch[chunk].indices {
                    if let prepared = prepare(batch[chunk][index]) { batch[chunk][index] = prepared }
                }
            }
        }
        var rowIDs: [Int64?]
        var failure: SQLiteError?
        do {
            rowIDs = try file.store(batch)
        } catch {
            failure = error as? SQLiteError ?? SQLiteError(code: -1, message: "\(error)", context: "commit to \(path)")
            rowIDs = Array(repeating: nil, count: batch.reduce(0) { $0 + $1.count })
        }
        let highest = failure == nil ? Self.highestSeqByOrigin(batch) : [:]
        return StoredBatch(report: CommitReport(appended: batch, rowIDs: rowIDs, highestSeqByOrigin: highest,
                                                failure: failure, committedAt: Date().timeIntervalSince1970),
                           bytes: bytes, completions: completions)
    }

    /// Tells the session and the appends' callers, and lets the queue's bytes go.
    private func report(_ commit: StoredBatch) {
        let waiters = state.withLockedValue { state -> [@Sendable () -> Void] in
            state.pendingBytes -= commit.bytes
            guard state.pendingBytes <= limits.maxPendingBytes / 2 else { return [] }
            defer { state.drainWaiters = [] }
            return state.drainWaiters
        }
        onCommit(commit.report)
        for completion in commit.completions {
            completion.call(commit.report.failure.map { .failure($0) } ?? .success(Array(commit.report.rowIDs[completion.records])))
        }
        waiters.forEach { $0() }
    }

    /// Runs `body` on a thread of its own and waits for it: building a long session's indexes takes seconds of CPU, which
    /// on the pool would hold one of its few threads from every other writer. A waiting pool thread is replaced by the
    /// system; a running one is not.
    private static func offThePool<T>(_ body: @escaping () throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<T, Error>?
        nonisolated(unsafe) let work = body
        Thread.detachNewThread {
            result = Result { try work() }
            done.signal()
        }
        done.wait()
        return try result!.get()
    }

    /// Each appended array comes from one connection (one origin): one dictionary update per array.
    private static func highestSeqByOrigin(_ batch: [[JournalRecord]]) -> [UInt64: Int64] {
        var highest: [UInt64: Int64] = [:]
        for records in batch {
            records.withUnsafeBufferPointer { records in
                var index = records.startIndex
                while index < records.endIndex {
                    let origin = records[index].origin
                    var top: Int64?
                    while index < records.endIndex, records[index].origin == origin {
                        if let seq = records[index].seq { top = max(top ?? seq, seq) }
                        index += 1
                    }
                    if let top { highest[origin] = max(highest[origin] ?? top, top) }
                }
            }
        }
        return highest
    }
}
