internal import SessionCore
internal import Logging
internal import NIOCore
internal import NIOConcurrencyHelpers
internal import NIOSSL
internal import NIOTLS

/// The PEM files of the capture server's TLS (`server.tls_certificate`, `server.tls_key`, and
/// `server.tls_client_ca` to require device certificates).
public struct CaptureTLSFiles: Sendable, Equatable {
    public var certificate: String
    public var key: String
    public var clientCA: String?

    public init(certificate: String, key: String, clientCA: String? = nil) {
        self.certificate = certificate
        self.key = key
        self.clientCA = clientCA
    }
}

/// Why the TLS files cannot be used, said with the file at fault.
public struct CaptureTLSError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}

/// The TLS listener's certificate, key and trust, read from their files. New connections take the
/// context in effect when they are accepted; `reload()` (SIGHUP) reads the files again, so a renewed
/// certificate serves the next handshake while open connections keep theirs.
public final class CaptureTLS: Sendable {
    public let files: CaptureTLSFiles
    private let context: NIOLockedValueBox<NIOSSLContext>

    public init(files: CaptureTLSFiles) throws {
        self.files = files
        context = NIOLockedValueBox(try Self.makeContext(files))
    }

    /// Reads the files again; on failure the running context stays, and the reason is returned.
    @discardableResult
    public func reload() -> CaptureTLSError? {
        do {
            let fresh = try Self.makeContext(files)
            context.withLockedValue { $0 = fresh }
            return nil
        } catch let error as CaptureTLSError {
            return error
        } catch {
            return CaptureTLSError(description: "\(error)")
        }
    }

    /// The handlers a new TLS connection starts with: the TLS server, and the watch that counts and
    /// logs a failed handshake.
    func handlers(counters: CaptureCounters, logger: Logger) -> [any ChannelHandler] {
        [NIOSSLServerHandler(context: context.withLockedValue { $0 }), TLSHandshakeWatch(counters: counters, logger: logger)]
    }

    private static func makeContext(_ files: CaptureTLSFiles) throws -> NIOSSLContext {
        func read<T>(_ path: String, _ what: String, _ body: () throws -> T) throws -> T {
            do {
                return try body()
            } catch {
                throw CaptureTLSError(description: "\(path): cannot read the \(what) (PEM): \(error)")
            }
        }
        let chain = try read(files.certificate, "certificate") { try NIOSSLCertificate.fromPEMFile(files.certificate) }
        guard !chain.isEmpty else { throw CaptureTLSError(description: "\(files.certificate): holds no PEM certificate") }
        let key = try read(files.key, "private key") { try NIOSSLPrivateKey(file: files.key, format: .pem) }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        if let clientCA = files.clientCA {
            let roots = try read(clientCA, "client CA") { try NIOSSLCertificate.fromPEMFile(clientCA) }
            configuration.trustRoots = .certificates(roots)
            // Devices present a certificate the CA signed; they have no host name to check.
            configuration.certificateVerification = .noHostnameVerification
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw CaptureTLSError(description: "\(files.certificate), \(files.key): the certificate and key do not make a TLS context: \(error)")
        }
    }
}

/// Sits after the TLS handler until the handshake is done: a handshake that fails (a device speaking
/// plaintext to the TLS port, a certificate the device or server does not trust, an expired one)
/// is one log line and one count, and closes that connection only.
final class TLSHandshakeWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let counters: CaptureCounters
    private let logger: Logger

    init(counters: CaptureCounters, logger: Logger) {
        self.counters = counters
        self.logger = logger
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        counters.tlsHandshakeFailures.add(1)
        let peer = context.remoteAddress?.ipAddress ?? "?"
        logger.notice("TLS: handshake with \(peer) failed, connection closed: \(Self.describe(error))")
        context.close(promise: nil)
    }

    /// The commonest failure in words; the library's own text after it.
    static func describe(_ error: Error) -> String {
        let text = "\(error)"
        if text.contains("WRONG_VERSION_NUMBER") || text.contains("HTTP_REQUEST") || text.contains("PACKET_LENGTH_TOO_LONG") {
            return "the device does not speak TLS (plaintext to the TLS port?): \(text)"
        }
        if text.contains("CERTIFICATE_EXPIRED") { return "a certificate has expired: \(text)" }
        if text.contains("CERTIFICATE_REQUIRED") || text.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE") {
            return "the device presented no certificate (server.tls_client_ca requires one): \(text)"
        }
        return text
    }
}
