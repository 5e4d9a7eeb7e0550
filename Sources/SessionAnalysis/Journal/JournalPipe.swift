internal import Foundation
internal import SessionModel

/// Carries the journal's one pass from the thread that reads and decodes the file to the thread that runs the
/// readers, in batches (one hand-over per `batchSize` events, not per event) through a queue of `depth` batches:
/// the reading thread waits when the readers fall behind, so the pass holds a few thousand events at most.
/// Read batches go back to the reading thread to be freed there: freed by the thread that allocated them, their
/// memory returns to its own malloc arena rather than contending for the lock of another thread's (`perf record` of
/// ReportBenchmark: the timeline's reader took 575 samples when it freed the events, 413 since; 284 on one thread).
final class JournalPipe: @unchecked Sendable {
    enum Item: Sendable {
        case event(JournalEvent)
        /// An event left out because its time is not plausible: its readers count it.
        case implausible(StoredEvent)
    }

    static let batchSize = 512
    static let depth = 4

    /// The reader stopped taking (it failed, or the pass is over): the reading thread ends.
    struct Cancelled: Error {}

    // Guards everything below.
    private let condition = NSCondition()
    private var batches: [[Item]] = []
    private var spent: [[Item]] = []
    private var closed = false
    private var failure: (any Error)?
    private var cancelled = false

    /// Waits while the queue is full; throws `Cancelled` once the taking side gave up. Returns the batches read
    /// since, for the caller to free.
    func put(_ batch: [Item]) throws -> [[Item]] {
        condition.lock()
        defer { condition.unlock() }
        while batches.count >= Self.depth, !cancelled { condition.wait() }
        guard !cancelled else { throw Cancelled() }
        batches.append(batch)
        condition.broadcast()
        let freed = spent
        spent = []
        return freed
    }

    /// No more batches; `failure` is what stopped the reading, if anything did.
    func close(failure: (any Error)?) {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        if !(failure is Cancelled) { self.failure = failure }
        condition.broadcast()
    }

    /// The next batch; nil at the end; the reading side's error when it failed. `read` is the batch taken before,
    /// handed back to be freed by the reading thread.
    func take(returning read: [Item]?) throws -> [Item]? {
        condition.lock()
        defer { condition.unlock() }
        if let read, !closed { spent.append(read) }
        while batches.isEmpty, !closed { condition.wait() }
        if !batches.isEmpty {
            condition.broadcast()
            return batches.removeFirst()
        }
        if let failure { throw failure }
        return nil
    }

    /// The taking side is done, whether or not it took everything.
    func cancel() {
        condition.lock()
        defer { condition.unlock() }
        cancelled = true
        batches.removeAll()
        spent.removeAll()
        condition.broadcast()
    }
}
