internal import MemberwiseInit

/// Group commits have been failing since `since` (a full disk, an unwritable file).
@MemberwiseInit
public struct StorageProblem: Codable, Sendable, Equatable {
    public var since: Double
    public var reason: String
    public var diskFull: Bool
    /// Commits that failed since then.
    public var failedCommits: Int
}
