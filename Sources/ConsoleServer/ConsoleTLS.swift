internal import NIOConcurrencyHelpers
internal import NIOCore
internal import NIOSSL

/// What became of a reload of the console's certificate (`ConsoleServer.reloadTLS`).
public enum ConsoleTLSReload: Sendable, Equatable {
    /// The console speaks plain HTTP: nothing to read.
    case notConfigured
    /// The next handshake presents the certificate read from this file.
    case reloaded(certificate: String)
    /// The files could not be used; the running certificate stays.
    case kept(reason: String)
}

/// The console's certificate and key, read from their PEM files. Every handshake takes the pair in
/// effect at that moment (NIOSSL's context callback), so a certificate renewed in the same files and
/// read again by `reload()` (SIGHUP) serves the next connection, while open ones keep theirs. An
/// unusable new pair is refused whole and the running one stays. TLS 1.2 or newer only.
final class ConsoleTLS: Sendable {
    let certificateFile: String
    let keyFile: String
    private let current: NIOLockedValueBox<Identity>

    private struct Identity: Sendable {
        var chain: [NIOSSLCertificate]
        var key: NIOSSLPrivateKey
    }

    init(certificate: String, key: String) throws(ConsoleError) {
        certificateFile = certificate
        keyFile = key
        current = NIOLockedValueBox(try Self.read(certificate: certificate, key: key))
    }

    /// Reads the files again; on failure the running pair stays, and the reason is returned.
    func reload() -> ConsoleTLSReload {
        do {
            let fresh = try Self.read(certificate: certificateFile, key: keyFile)
            current.withLockedValue { $0 = fresh }
            return .reloaded(certificate: certificateFile)
        } catch {
            return .kept(reason: error.description)
        }
    }

    /// The server's configuration: the pair read at start, replaced at each handshake by the current one.
    var configuration: TLSConfiguration {
        let identity = current.withLockedValue { $0 }
        var configuration = Self.serverConfiguration(identity)
        configuration.sslContextCallback = { [current] _, promise in
            let identity = current.withLockedValue { $0 }
            var override = NIOSSLContextConfigurationOverride()
            override.certificateChain = identity.chain.map { .certificate($0) }
            override.privateKey = .privateKey(identity.key)
            promise.succeed(override)
        }
        return configuration
    }

    private static func serverConfiguration(_ identity: Identity) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: identity.chain.map { .certificate($0) },
                                                                     privateKey: .privateKey(identity.key))
        // TLS 1.0 and 1.1 are deprecated (RFC 8996).
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }

    private static func read(certificate: String, key: String) throws(ConsoleError) -> Identity {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw .misconfigured("\(certificate): cannot read the console's certificate (PEM, console.tls_certificate): \(error)")
        }
        guard !chain.isEmpty else { throw .misconfigured("\(certificate): holds no PEM certificate (console.tls_certificate)") }
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw .misconfigured("\(key): cannot read the console's private key (PEM, console.tls_key): \(error)")
        }
        let identity = Identity(chain: chain, key: privateKey)
        // A context is made only to have BoringSSL check the pair (a key of another certificate) now, not at a handshake.
        do {
            _ = try NIOSSLContext(configuration: serverConfiguration(identity))
        } catch {
            throw .misconfigured("\(certificate), \(key): the certificate and key do not make a TLS context: \(error)")
        }
        return identity
    }
}
