internal import Foundation
internal import Logging
internal import NIOSSL
internal import PostgresNIO

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

/// The parts of a `postgres://` URL.
struct PostgresTarget: Sendable, Equatable {
    var host: String
    var port: Int
    var user: String
    var password: String?
    var database: String
    /// `?sslmode=`: disable (the default), require (encrypted, any certificate) or verify-full.
    var sslMode: String

    /// The URL's parts; the password from `passwordFile` when given.
    init(url: String, passwordFile: String?) throws(ReplicationError) {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""),
              let host = components.host, !host.isEmpty, let user = components.user, !user.isEmpty
        else {
            throw .badSettings("storage.postgres.url must be postgres://USER@HOST[:PORT]/DATABASE (a password in storage.postgres.password_file)")
        }
        self.host = host
        port = components.port ?? 5432
        self.user = user.removingPercentEncoding ?? user
        password = components.password?.removingPercentEncoding
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? user : path
        sslMode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
        guard ["disable", "require", "verify-full"].contains(sslMode) else {
            throw .badSettings("storage.postgres.url: sslmode=\(sslMode) is not one of disable, require, verify-full")
        }
        if let passwordFile {
            password = try SecretFile.firstLine(of: passwordFile, option: "storage.postgres.password_file")
        }
    }

    /// A connection to the target, waiting at most `timeout` seconds for it. PostgresNIO logs into a
    /// logger of its own that says nothing: the callers say once what went wrong (and a copy of the
    /// daemon's logger would share its level, which a change would silence).
    func connect(timeout: Int64) async throws -> PostgresConnection {
        var configuration = PostgresConnection.Configuration(host: host, port: port, username: user, password: password,
                                                            database: database, tls: try tls())
        configuration.options.connectTimeout = .seconds(timeout)
        let quiet = Logger(label: "mueval.postgres") { _ in SwiftLogNoOpLogHandler() }
        return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: quiet)
    }

    /// How the connection is encrypted, as `sslMode` says.
    private func tls() throws -> PostgresConnection.Configuration.TLS {
        switch sslMode {
        case "require":
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            return .require(try NIOSSLContext(configuration: configuration))
        case "verify-full": return .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        default: return .disable
        }
    }

    /// Where, without credentials: what logs and `status` show.
    var description: String { "\(host):\(port)/\(database)" }
}

public enum ReplicationError: Error, Sendable, CustomStringConvertible {
    case badSettings(String)
    case newerSchema(found: Int, known: Int)
    case timedOut(seconds: Double)
    case unreachable(target: String, reason: String)
    case noSchema(target: String)
    case noSuchSession(selector: String, candidates: [String])
    /// The session's uuid is `owner`'s session in the shared database: this lab writes nothing of it.
    case ownedByAnotherLab(owner: String)

    /// The server or the network, rather than what is in the database or the settings: worth a retry as it is.
    var isConnectionTrouble: Bool {
        switch self {
        case .timedOut, .unreachable: true
        case .badSettings, .newerSchema, .noSchema, .noSuchSession, .ownedByAnotherLab: false
        }
    }

    public var description: String {
        switch self {
        case .badSettings(let reason): reason
        case .unreachable(let target, let reason):
            "cannot connect to PostgreSQL at \(target): \(reason)"
        case .noSchema(let target):
            "\(target) holds no muEval sessions: no muevald has replicated into it yet (storage.postgres.url in muevald's configuration)"
        case .noSuchSession(let selector, let candidates):
            candidates.isEmpty
                ? "the shared database has no session \"\(selector)\"; `muevalctl sessions --from URL` lists them"
                : "\"\(selector)\" is a session of several labs (\(candidates.joined(separator: ", "))): name one as LAB:ID"
        case .timedOut(let seconds):
            "no answer within \(seconds) s (storage.postgres.timeout)"
        case .ownedByAnotherLab(let owner):
            "the session is \(owner)'s in the shared database: this lab leaves its row and events alone"
        case .newerSchema(let found, let known):
            "the PostgreSQL database has muEval schema version \(found), written by a newer muEval; this muevald knows versions up to \(known) and leaves it alone: upgrade this muevald"
        }
    }
}
