internal import Foundation
internal import Logging
internal import NIOSSL
package import PostgresNIO

/// The parts of a `postgres://` URL.
package struct PostgresTarget: Sendable, Equatable {
    package var host: String
    package var port: Int
    package var user: String
    package var password: String?
    package var database: String
    /// `?sslmode=`: disable (the default), require (encrypted, any certificate) or verify-full.
    package var sslMode: String

    /// The URL's parts; the password from `passwordFile` when given.
    package init(url: String, passwordFile: String?) throws(ReplicationError) {
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
    package func connect(timeout: Int64) async throws -> PostgresConnection {
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
    package var description: String { "\(host):\(port)/\(database)" }
}
