internal import Foundation
internal import ReportCritique
#if canImport(Glibc)
internal import Glibc
#endif

/// The automatic reports still to write, on disk: one empty file per session under `<data>/reports/.queue/`,
/// named by its id, synced before it counts as queued. A stop queues one; a report written (or failed for good)
/// removes it; a restart writes what is left. Bounded only by the disk: a name each, nothing in memory but a count.
package struct ReportQueue: Sendable {
    package let directory: String

    /// The queue of the data directory's reports; made if it is missing.
    package init(dataDirectory: String) throws {
        directory = ReportLocations(dataDirectory: dataDirectory).root + "/.queue"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Queues `session`'s report, durably: the file and the directory entry are synced before this returns.
    package func add(_ session: Int64) throws(ReportQueueError) {
        let path = directory + "/\(session)"
        let file = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw ReportQueueError(action: "create \(path)", errno: errno) }
        let synced = fsync(file)
        let fileErrno = errno
        close(file)
        guard synced == 0 else { throw ReportQueueError(action: "sync \(path)", errno: fileErrno) }
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw ReportQueueError(action: "open \(directory)", errno: errno) }
        defer { close(folder) }
        guard fsync(folder) == 0 else { throw ReportQueueError(action: "sync \(directory)", errno: errno) }
    }

    /// Its report is done: off the queue (already off is no error).
    package func remove(_ session: Int64) {
        unlink(directory + "/\(session)")
    }

    /// The queued sessions, oldest (lowest id) first; names that are no session id (an editor's file) are ignored.
    package func sessions() -> [Int64] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).compactMap { Int64($0) }.filter { $0 > 0 }.sorted()
    }
}

/// A report could not be queued: the disk refused (full, read-only); the report is still written this time.
package struct ReportQueueError: Error, CustomStringConvertible {
    let action: String
    let errno: Int32

    package var description: String {
        "cannot \(action) to queue an automatic report: \(String(cString: strerror(errno))) (is the data directory's disk full or read-only?)"
    }
}
