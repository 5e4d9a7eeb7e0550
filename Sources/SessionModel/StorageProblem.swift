/// Group commits have been failing since `since` (a full disk, an unwritable file).
public struct StorageProblem: Codable, Sendable, Equatable {
    public var since: Double
    public var reason: String
    public var diskFull: Bool
    /// Commits that failed since then.
    public var failedCommits: Int

    public init(since: Double, reason: String, diskFull: Bool, failedCommits: Int) {
        self.since = since
        self.reason = reason
        self.diskFull = diskFull
        self.failedCommits = failedCommits
    }
}
