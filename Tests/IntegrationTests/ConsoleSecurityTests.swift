import ControlProtocol
import DaemonTestSupport
import Foundation
import SessionModel
import XCTest

/// The console's access holes of issue 29, against a real muevald over real sockets: absurd queries
/// and bodies, the Host allowlist (DNS rebinding), logout, TLS 1.2 minimum, the certificate read
/// again on SIGHUP, and plaintext beyond loopback refused.
final class ConsoleSecurityTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("console-security-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func loggedIn(_ daemon: TestDaemon) async throws -> ConsoleClient {
        let link = try await daemon.consoleLink()
        let client = ConsoleClient(link: link.url)
        let reply = try await client.login(link.url)
        XCTAssertEqual(reply.status, 303, reply.text)
        return client
    }

    private func curl(_ arguments: [String]) throws -> String {
        try runProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10"] + arguments).stdout
    }

    func testAbsurdNumbersInQueriesAndBodiesAreA400AndTheDaemonStays() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let client = try await loggedIn(daemon)
        let started = try await client.request("POST", "/api/sessions", json: ["name": "absurd"])
        XCTAssertEqual(started.status, 201, started.text)
        let id = try XCTUnwrap((try started.json() as? [String: Any])?["id"] as? Int)

        for query in ["limit=1e300", "limit=NaN", "limit=-5", "limit=0", "limit=99999999999999999999999", "after=-1", "after=1e300",
                      "after=inf", "after=9223372036854775808"] {
            let reply = try await client.request("GET", "/api/sessions/\(id)/events?\(query)")
            XCTAssertEqual(reply.status, 400, "\(query): \(reply.text)")
            let name = String(query.prefix { $0 != "=" })
            XCTAssertTrue(reply.text.contains("\(name) must be a whole number"), "\(query): \(reply.text)")
        }
        let page = try await client.request("GET", "/api/sessions/\(id)/events?limit=100000&after=0")
        XCTAssertEqual(page.status, 200, "more than a page asked for is a page: \(page.text)")

        for time in [1e300, -1e300, 1e18, -1] {
            let note = try await client.request("POST", "/api/sessions/\(id)/notes", json: ["text": "absurd", "t": time])
            XCTAssertEqual(note.status, 400, "t = \(time): \(note.text)")
            XCTAssertTrue(note.text.contains("outside its range"), note.text)
        }
        let hugeInteger = try await client.request("POST", "/api/studies", json: ["name": "s1"])
        XCTAssertEqual(hugeInteger.status, 201, hugeInteger.text)
        for body in [#"{"number": 1e300}"#, #"{"number": 99999999999999999999999}"#, #"{"number": -1}"#] {
            // Raw JSON: numbers no JSON encoder here would write.
            let status = try curl(["-X", "POST", "-H", "Cookie: mueval_console=\(client.cookie ?? "")", "-H", "X-CSRF-Token: \(client.csrf ?? "")",
                                   "-H", "Content-Type: application/json", "--data-binary", body, client.base + "/api/studies/s1/iterations"])
            XCTAssertEqual(status, "400", body)
        }
        let task = try await client.request("POST", "/api/studies/s1/tasks", json: ["name": "Sign up", "timeLimit": 1e300])
        XCTAssertEqual(task.status, 400, task.text)
        XCTAssertTrue(task.text.contains("timeLimit"), task.text)
        let report = try await client.request("GET", "/api/studies/s1/report?iteration=1e300")
        XCTAssertEqual(report.status, 400, report.text)

        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertNotNil(status.listen, "muevald still answers")
        XCTAssertTrue(daemon.process.isRunning)
    }

    /// DNS rebinding: a page of evil.example, its name pointed at 127.0.0.1, would read the console's
    /// answers as its own origin's; its requests carry `Host: evil.example` and are refused.
    func testARequestForAnotherHostNameIsRefusedMetricsIncluded() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let link = try await daemon.consoleLink()
        let port = try XCTUnwrap(URL(string: link.url)?.port)
        let metrics = "http://127.0.0.1:\(port)/metrics"
        XCTAssertEqual(try curl([metrics]), "200")
        XCTAssertEqual(try curl(["-H", "Host: localhost:\(port)", metrics]), "200")
        XCTAssertEqual(try curl(["-H", "Host: [::1]:\(port)", metrics]), "200")
        for host in ["evil.example", "evil.example:\(port)", "127.0.0.1.evil.example:\(port)", "localhost.evil.example"] {
            XCTAssertEqual(try curl(["-H", "Host: \(host)", metrics]), "421", host)
            XCTAssertEqual(try curl(["-H", "Host: \(host)", link.url]), "421", "the login link, for \(host)")
        }
        let body = try runProcess("/usr/bin/curl", ["-s", "-H", "Host: evil.example", metrics]).stdout
        XCTAssertFalse(body.contains("mueval_"), "no counter reaches another host name: \(body)")
        // The link was not spent by the refused requests.
        let client = ConsoleClient(link: link.url)
        let login = try await client.login(link.url)
        XCTAssertEqual(login.status, 303, login.text)
    }

    func testLogoutEndsTheLoginOnTheServer() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let client = try await loggedIn(daemon)
        let forged = try await client.request("POST", "/api/logout", csrf: false)
        XCTAssertEqual(forged.status, 403, "a logout needs the CSRF token: \(forged.text)")
        let crossSite = try await client.request("POST", "/api/logout", headers: ["Origin": "http://evil.example"])
        XCTAssertEqual(crossSite.status, 403, crossSite.text)
        let stillIn = try await client.request("GET", "/api/sessions")
        XCTAssertEqual(stillIn.status, 200, stillIn.text)

        let logout = try await client.request("POST", "/api/logout")
        XCTAssertEqual(logout.status, 204, logout.text)
        let cookie = try XCTUnwrap(logout.header("Set-Cookie"))
        XCTAssertTrue(cookie.hasPrefix("mueval_console=;") && cookie.contains("Max-Age=0"), cookie)
        // The same cookie, as a copy of it elsewhere would send it: the login is gone on the server.
        let after = try await client.request("GET", "/api/sessions")
        XCTAssertEqual(after.status, 401, after.text)
        let page = try await client.request("GET", "/")
        XCTAssertEqual(page.status, 401)
        XCTAssertTrue(page.text.contains("muevalctl console"), page.text)
    }

    /// The control every page's navigation has, in Chromium (Tests/Browser/logout_browser.py).
    func testLogoutInARealBrowser() async throws {
        if let missing = try BrowserRequirement.missing() { throw XCTSkip(missing) }
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/logout_browser.py").path
        let browser = try runProcess(BrowserRequirement.python, [script], environment: ["CONSOLE_LOGIN_URL": try await daemon.consoleLink().url],
                                     timeout: 120)
        XCTAssertEqual(browser.status, 0, "logout_browser.py: \(browser.stdout)\n\(browser.stderr)")
    }

    func testANonLoopbackConsoleWithoutTLSDoesNotStart() async throws {
        // Refused before it binds: nothing listens beyond loopback.
        let daemon = try await TestDaemon.start(arguments: ["--console-listen", "0.0.0.0:0"])
        defer { daemon.cleanUp() }
        let result = try await eventually("muevalctl console to report the refusal") { () -> (status: Int32, stdout: String, stderr: String)? in
            let result = try daemon.muevalctl(["console"])
            return result.stderr.contains("still starting") ? nil : result
        }
        XCTAssertEqual(result.status, 1, result.stdout)
        XCTAssertTrue(result.stderr.contains("console.allow_plaintext = true"), result.stderr)
        XCTAssertTrue(result.stderr.contains("console.tls_certificate"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertTrue(daemon.log.contains("the web console cannot serve on 0.0.0.0:0"), daemon.log)
    }

    // MARK: TLS

    private func tlsDaemon(_ certificates: TestCertificates) async throws -> (TestDaemon, port: Int) {
        let config = directory + "/muevald.toml"
        try """
            [console]
            tls_certificate = "\(certificates.certificateFile)"
            tls_key = "\(certificates.keyFile)"
            [transcription]
            enabled = false
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try await TestDaemon.start(arguments: ["--config", config])
        let link = try await daemon.consoleLink()
        return (daemon, try XCTUnwrap(URL(string: link.url)?.port))
    }

    private func handshake(_ port: Int, _ version: String) throws -> (accepted: Bool, output: String) {
        // SECLEVEL=0: OpenSSL 3 offers TLS 1.0 and 1.1 only there; the server must be the one to refuse.
        let run = try runProcess("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-" + version,
                                                      "-cipher", "DEFAULT:@SECLEVEL=0"], input: Data(), timeout: 20)
        return (run.status == 0 && run.stdout.contains("BEGIN CERTIFICATE"), run.stdout + run.stderr)
    }

    /// SHA-256 fingerprint of the certificate the console presents now, or of a PEM file.
    private func fingerprint(port: Int) throws -> String {
        try runProcess("/bin/sh", ["-c", "openssl s_client -connect 127.0.0.1:\(port) </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256"]).stdout
    }

    private func fingerprint(file: String) throws -> String {
        try runProcess("/usr/bin/openssl", ["x509", "-in", file, "-noout", "-fingerprint", "-sha256"]).stdout
    }

    func testTheConsolesTLSRefusesVersionsBelow1_2() async throws {
        if let reason = TestCertificates.unavailableReason { throw XCTSkip("CANNOT RUN HERE: " + reason) }
        let certificates = try TestCertificates(directory: directory + "/certs")
        let (daemon, port) = try await tlsDaemon(certificates)
        defer { daemon.cleanUp() }
        for version in ["tls1", "tls1_1"] {
            let old = try handshake(port, version)
            XCTAssertFalse(old.accepted, "\(version) was accepted: \(old.output)")
        }
        for version in ["tls1_2", "tls1_3"] {
            let current = try handshake(port, version)
            XCTAssertTrue(current.accepted, "\(version) was refused: \(current.output)")
        }
    }

    func testSIGHUPServesARenewedCertificateAndKeepsItWhenTheNewFilesAreUnusable() async throws {
        if let reason = TestCertificates.unavailableReason { throw XCTSkip("CANNOT RUN HERE: " + reason) }
        let certificates = try TestCertificates(directory: directory + "/certs")
        let (daemon, port) = try await tlsDaemon(certificates)
        defer { daemon.cleanUp() }
        let first = try fingerprint(file: certificates.certificateFile)
        XCTAssertTrue(first.contains("Fingerprint="), first)
        XCTAssertEqual(try fingerprint(port: port), first)

        try certificates.makeServer(serial: "02")
        let renewed = try fingerprint(file: certificates.certificateFile)
        XCTAssertNotEqual(renewed, first)
        kill(daemon.process.processIdentifier, SIGHUP)
        try await eventually("the console's reload") { daemon.log.contains("the console's TLS certificate and key read again") ? true : nil }
        XCTAssertEqual(try fingerprint(port: port), renewed, "the next connection gets the renewed certificate")

        // A certificate that cannot be read: the running one stays, and the log says why.
        try "not a certificate\n".write(toFile: certificates.certificateFile, atomically: true, encoding: .utf8)
        kill(daemon.process.processIdentifier, SIGHUP)
        try await eventually("the refused reload") { daemon.log.contains("the console keeps its TLS certificate") ? true : nil }
        XCTAssertEqual(try fingerprint(port: port), renewed)

        // A key of another certificate is refused too.
        let other = try TestCertificates(directory: directory + "/other")
        try certificates.makeServer(serial: "03")
        try FileManager.default.removeItem(atPath: certificates.keyFile)
        try FileManager.default.copyItem(atPath: other.keyFile, toPath: certificates.keyFile)
        let logged = daemon.log.components(separatedBy: "the console keeps its TLS certificate").count
        kill(daemon.process.processIdentifier, SIGHUP)
        try await eventually("the second refused reload") {
            daemon.log.components(separatedBy: "the console keeps its TLS certificate").count > logged ? true : nil
        }
        XCTAssertEqual(try fingerprint(port: port), renewed)
        XCTAssertTrue(daemon.process.isRunning)
    }
}
