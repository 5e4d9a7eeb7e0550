/// The one sync of the data directory's file system that every session's commits share (`storage.shared_sync`,
/// docs/STORAGE.md): how many ran and how many failed since muevald started.
public struct StorageSyncStatus: Codable, Sendable, Equatable {
    public var syncs: Int
    /// A failed sync answered its commits' devices with an error instead of an ack (they resend).
    public var failures: Int

    public init(syncs: Int, failures: Int) {
        self.syncs = syncs
        self.failures = failures
    }
}
