public import Foundation

/// A config file, environment variable or flag that cannot be used; muevald exits with EX_CONFIG (78).
public struct ConfigurationError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }

    public static let exitCode: Int32 = 78
}

/// Where the configuration comes from, kept so that SIGHUP can read it again.
public struct ConfigurationSource: Sendable {
    public var file: String?
    /// Settings from the command line, by config key.
    public var flags: [String: String]

    public init(file: String?, flags: [String: String]) {
        self.file = file
        self.flags = flags
    }

    public func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> DaemonConfiguration {
        try ConfigurationLoader(environment: environment).load(file: file, flags: flags)
    }
}
