internal import Foundation

/// A CA and server certificates it signs, made with openssl in a directory of the test's, for TLS
/// tests: `ca.pem`, and `server.pem` / `server.key` for an IP address (renewed in place by
/// `makeServer` again, as certbot renews: the same file names, new contents).
public struct TestCertificates: Sendable {
    public let directory: String
    public var caFile: String { directory + "/ca.pem" }
    public var certificateFile: String { directory + "/server.pem" }
    public var keyFile: String { directory + "/server.key" }

    /// Why these tests cannot run here, or nil.
    public static var unavailableReason: String? {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") ? nil : "/usr/bin/openssl is missing (make test-deps installs openssl)"
    }

    /// Makes the CA, and a server certificate for `ip` with serial 01.
    public init(directory: String, ip: String = "127.0.0.1") throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                     "-subj", "/CN=muEval test CA", "-keyout", "ca.key", "-out", "ca.pem"])
        try makeServer(ip: ip, serial: "01")
    }

    /// A certificate for `ip` (an IP subject alternative name) signed by the CA, into server.pem and
    /// server.key, valid for `days` (0: it expires the second it is made).
    public func makeServer(ip: String = "127.0.0.1", serial: String, days: Int = 2) throws {
        try "subjectAltName = IP:\(ip)\n".write(toFile: directory + "/san.cnf", atomically: true, encoding: .utf8)
        try openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=\(ip)",
                     "-keyout", "next.key", "-out", "server.csr"])
        try openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "0x" + serial,
                     "-days", String(days), "-extfile", "san.cnf", "-out", "next.pem"])
        for name in ["pem", "key"] {
            try? FileManager.default.removeItem(atPath: directory + "/server." + name)
            try FileManager.default.moveItem(atPath: directory + "/next." + name, toPath: directory + "/server." + name)
        }
    }

    /// Whether server.pem has expired (`openssl x509 -checkend 0`).
    public var serverCertificateExpired: Bool {
        get throws { try runProcess("/usr/bin/openssl", ["x509", "-in", certificateFile, "-noout", "-checkend", "0"]).status != 0 }
    }

    /// The serial number of the certificate a TLS server on 127.0.0.1:`port` presents now (`serial=02`).
    public func servedSerial(port: Int) throws -> String {
        try runProcess("/bin/sh", ["-c", "openssl s_client -connect 127.0.0.1:\(port) -CAfile '\(caFile)' </dev/null 2>/dev/null | openssl x509 -noout -serial"]).stdout
    }

    private func openssl(_ arguments: [String]) throws {
        let run = try runProcess("/bin/sh", ["-c", "cd '\(directory)' && exec openssl \"$@\"", "openssl"] + arguments)
        guard run.status == 0 else { throw CertificateError(message: "openssl \(arguments.joined(separator: " ")): \(run.stderr)") }
    }

    struct CertificateError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
