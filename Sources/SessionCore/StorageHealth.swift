public import SessionModel
internal import NIOConcurrencyHelpers

/// Whether group commits succeed. A full disk or an unwritable file makes commits fail; devices
/// get `<error>` replies for what is refused, and `status` and the log say so until a commit
/// succeeds again (by itself, once space is freed: every batch is tried anew).
public final class StorageHealth: Sendable {

    private let box = NIOLockedValueBox<StorageProblem?>(nil)

    public init() {}

    public var problem: StorageProblem? { box.withLockedValue { $0 } }

    /// Records a failed commit; true when commits were fine until now.
    package func failed(reason: String, diskFull: Bool, now: Double) -> Bool {
        box.withLockedValue { problem in
            if problem == nil {
                problem = StorageProblem(since: now, reason: reason, diskFull: diskFull, failedCommits: 1)
                return true
            }
            problem?.failedCommits += 1
            problem?.reason = reason
            return false
        }
    }

    /// Records a successful commit; returns the problem it ends, if there was one.
    package func succeeded() -> StorageProblem? {
        box.withLockedValue { problem in
            defer { problem = nil }
            return problem
        }
    }
}
