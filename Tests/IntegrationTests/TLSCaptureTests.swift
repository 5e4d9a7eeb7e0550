import ControlProtocol
import DaemonTestSupport
import DeviceSimulator
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// Devices over TLS, end to end through the real daemon: certificates made here with openssl (a CA,
/// and server certificates for 127.0.0.1 it signs), muevalsim as the device.
final class TLSCaptureTests: XCTestCase {
    private var directory = ""
    private var certificates: TestCertificates!

    override func setUpWithError() throws {
        if let reason = TestCertificates.unavailableReason { throw XCTSkip("CANNOT RUN HERE: " + reason) }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString.prefix(8))").path
        certificates = try TestCertificates(directory: directory)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func daemon(_ extra: String = "") async throws -> TestDaemon {
        let config = directory + "/muevald.toml"
        try """
            [server]
            tls_certificate = "\(directory)/server.pem"
            tls_key = "\(directory)/server.key"
            \(extra)
            [transcription]
            enabled = false
            """.write(toFile: config, atomically: true, encoding: .utf8)
        return try await TestDaemon.start(arguments: ["--config", config])
    }

    private func simulate(_ port: Int, tls: Bool, events: Int = 30, extra: [String] = []) throws -> (status: Int32, report: SimulationReport?, output: String) {
        let run = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(port)", "--scenario", "wordpress", "--seed", "9", "--events", String(events), "--rate", "max", "--json",
        ] + (tls ? ["--ca", directory + "/ca.pem"] : []) + extra, timeout: 120)
        return (run.status, try? JSONDecoder().decode(SimulationReport.self, from: Data(run.stdout.utf8)), run.stdout + run.stderr)
    }

    func testADeviceRecordsOverTLSAndPlaintextToTheTLSPortIsRefusedAlone() async throws {
        let daemon = try await daemon()
        defer { daemon.cleanUp() }
        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertEqual(status.listen?.tls, true, "the one listener requires TLS")
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "remote"))

        // Plaintext to the TLS port: that connection fails, counted and logged once.
        let plain = try simulate(daemon.port, tls: false, events: 5, extra: ["--ack-timeout", "2"])
        XCTAssertNotEqual(plain.status, 0, plain.output)
        let failures = try await eventually("the failed handshake counted") {
            let counters = try await daemon.ctl.call(ControlRequest.Status()).counters
            return counters.tlsHandshakeFailures > 0 ? counters.tlsHandshakeFailures : nil
        }
        XCTAssertGreaterThan(failures, 0)
        XCTAssertTrue(daemon.log.contains("TLS: handshake with 127.0.0.1 failed, connection closed: the device does not speak TLS"), daemon.log)

        // A device with the CA records as over plaintext.
        let run = try simulate(daemon.port, tls: true)
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertEqual(run.report?.total.acknowledged, 30)
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
        XCTAssertEqual(try SessionReader(path: session.path).eventCount(), 30)
    }

    func testAPlaintextAndATLSListenerSideBySide() async throws {
        let daemon = try await daemon("tls_listen = \"127.0.0.1:0\"")
        defer { daemon.cleanUp() }
        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertNil(status.listen?.tls, "server.listen stays plaintext")
        let tlsPort = try XCTUnwrap(status.listenTLS?.port)
        XCTAssertEqual(status.listenTLS?.tls, true)
        for (port, tls) in [(daemon.port, false), (tlsPort, true)] {
            let session = try await daemon.ctl.call(ControlRequest.StartSession(name: tls ? "internet" : "lab"))
            let run = try simulate(port, tls: tls)
            XCTAssertEqual(run.status, 0, run.output)
            _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
            XCTAssertEqual(try SessionReader(path: session.path).eventCount(), 30, tls ? "over TLS" : "in plaintext")
        }
        // A TLS device that does not trust the server's CA: its handshake fails, nothing else does.
        let untrusted = try simulate(tlsPort, tls: false, events: 5, extra: ["--tls", "--ack-timeout", "2"])
        XCTAssertNotEqual(untrusted.status, 0, untrusted.output)
    }

    func testAnExpiredCertificateFailsTheHandshakeWithOneLogLineAndACount() async throws {
        try certificates.makeServer(serial: "03", days: 0)
        try await eventually("the certificate to expire (it is valid for no whole second)") { try self.certificates.serverCertificateExpired ? true : nil }
        let daemon = try await daemon()
        defer { daemon.cleanUp() }
        let run = try simulate(daemon.port, tls: true, events: 5, extra: ["--ack-timeout", "2"])
        XCTAssertNotEqual(run.status, 0, run.output)
        try await eventually("the failed handshake counted") {
            try await daemon.ctl.call(ControlRequest.Status()).counters.tlsHandshakeFailures > 0 ? true : nil
        }
        XCTAssertTrue(daemon.log.contains("TLS: handshake with 127.0.0.1 failed, connection closed: a certificate has expired"), daemon.log)
    }

    func testARenewedCertificateIsTakenOnSIGHUPWithoutDroppingConnections() async throws {
        let daemon = try await daemon()
        defer { daemon.cleanUp() }
        XCTAssertTrue(try certificates.servedSerial(port: daemon.port).contains("01"))
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "long"))
        // A device recording across the reload: 6 s at 20 events/s.
        let device = try FollowingProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--ca", directory + "/ca.pem", "--scenario", "wordpress", "--seed", "4",
            "--rate", "20", "--duration", "6", "--json",
        ])
        try await eventually("the device to connect") {
            try await daemon.ctl.call(ControlRequest.Status()).counters.connectionsOpen > 0 ? true : nil
        }
        try certificates.makeServer(serial: "02")
        kill(daemon.process.processIdentifier, SIGHUP)
        try await eventually("the reload") { daemon.log.contains("reload: TLS certificate and key read again") ? true : nil }
        XCTAssertTrue(try certificates.servedSerial(port: daemon.port).contains("02"), "the next handshake gets the renewed certificate")
        let exit = try await device.exitStatus(timeout: 60)
        XCTAssertEqual(exit, 0, device.stderr)
        let report = try JSONDecoder().decode(SimulationReport.self, from: Data(device.lines.joined(separator: "\n").utf8))
        XCTAssertEqual(report.total.disconnects, 0, "the open connection kept its handshake")
        XCTAssertEqual(report.total.unacknowledged, 0)
    }
}
