internal import Foundation

/// `storage.postgres.*`: where muevald replicates what it stores (docs/POSTGRES.md).
public struct ReplicationSettings: Sendable, Equatable {
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`; never logged whole (the password stays out).
    public var url: String
    /// A file whose first line is the password, instead of one in the URL.
    public var passwordFile: String?
    /// This lab's name in the shared database (default: the host name).
    public var lab: String
    /// Events per replication transaction.
    public var batchEvents: Int
    /// Seconds between passes when there is nothing to catch up.
    public var interval: Double
    /// Seconds a pass may take before the connection is given up as dead and opened again.
    public var timeout: Double

    /// Refuses a `passwordFile` that others may read (docs/POSTGRES.md), at start rather than at the first connection.
    public func checkPasswordFile() throws(ReplicationError) {
        if let passwordFile { _ = try SecretFile.firstLine(of: passwordFile, option: "storage.postgres.password_file") }
    }

    /// The lab's name when none is configured: the host name.
    public static var defaultLab: String { ProcessInfo.processInfo.hostName }

    public init(url: String, passwordFile: String? = nil, lab: String? = nil, batchEvents: Int = 2000, interval: Double = 1, timeout: Double = 30) {
        self.url = url
        self.passwordFile = passwordFile
        self.lab = lab ?? Self.defaultLab
        self.batchEvents = batchEvents
        self.interval = interval
        self.timeout = timeout
    }
}
