public import MuEvalCapture
public import NIOCore
internal import NIOSSL

/// TLS for a simulated device's connections (`muevalsim --tls [--ca FILE]`, or a server whose
/// Zeroconf TXT record says `tls=1`): the server's certificate checked against `--ca`'s certificates,
/// or the system's trust store; and against the host name, or the IP address connected to. The
/// capture library takes it as its `ConnectionSecurity`, so that the library itself needs no TLS stack.
public final class ClientTLS: ConnectionSecurity {
    private let context: NIOSSLContext
    /// The trust roots' file, nil for the system's.
    public let caFile: String?

    public init(caFile: String? = nil) throws(CaptureError) {
        self.caFile = caFile
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        do {
            if let caFile { configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile)) }
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw .badSecurity("\(caFile ?? "the system's trust store"): \(error)")
        }
    }

    /// The handler a new connection to `host` starts with. SNI carries host names only; for an IP
    /// address the certificate is checked against the address itself.
    public func handler(host: String) throws -> any ChannelHandler {
        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        return try NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host)
    }
}
