import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import SessionModel
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The limits of the public edge that nobody can reset (issue 38, docs/SECURITY.md "Who can record"),
/// against the real muevald: invitation pages between wrong pairing codes, testers behind a trusted
/// reverse proxy, and the gate's headers on answers no route gives.
final class PublicEdgeTests: XCTestCase {
    static let invitation = "2345abcdef"

    private func config(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("edge-\(UUID().uuidString.prefix(8)).toml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    private func ok(_ daemon: TestDaemon, _ arguments: [String]) throws -> String {
        let run = try daemon.muevalctl(arguments)
        XCTAssertEqual(run.status, 0, "muevalctl \(arguments.joined(separator: " ")): \(run.stderr)")
        return run.stdout
    }

    /// A study with one invitation, valid for an hour.
    private func invite(_ daemon: TestDaemon) throws {
        _ = try ok(daemon, ["study", "create", "remote"])
        _ = try ok(daemon, ["study", "iteration", "add", "remote"])
        let now = Date().timeIntervalSince1970
        try Catalog(directory: daemon.dataDirectory).createInvitations(
            [Invitation(code: Self.invitation, study: "remote", iteration: 1, participant: "TAAAAA", created: now, expires: now + 3600)],
            participants: [Participant(code: "TAAAAA", created: now)],
            recruitment: Recruitment(study: "remote", iteration: 1, target: 1, created: now, seed: 1))
    }

    /// The console's `http://host:port`.
    private func console(_ daemon: TestDaemon) async throws -> String {
        try await daemon.consoleLink().url.components(separatedBy: "/login").first ?? ""
    }

    /// A GET without cookies; its status and headers (names lower-cased).
    private func get(_ url: String, headers: [String: String] = [:]) async throws -> (Int, [String: String]) {
        var request = URLRequest(url: URL(string: url)!)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (_, response) = try await URLSession(configuration: .ephemeral).data(for: request)
        let http = try XCTUnwrap(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields { fields["\(key)".lowercased()] = "\(value)" }
        return (http.statusCode, fields)
    }

    /// One connection presenting a pairing code; the reason of the error it gets.
    private func guess(_ daemon: TestDaemon, _ code: String) async throws -> String {
        let device = try await daemon.connectDevice(from: "127.0.0.1")
        try await device.hello(DeviceHello(deviceId: "guesser", pairing: code))
        let reply = try await device.waitFor("a reply to the hello") { replies in replies.first }
        await device.close()
        guard case .error(let error) = reply else { return "welcomed" }
        return error.reason
    }

    /// The seconds a refusal's "the next attempt in N s" announces.
    private static func announcedWait(_ reason: String) -> Double? {
        guard let range = reason.range(of: "the next attempt in ") else { return nil }
        return Double(reason[range.upperBound...].prefix { $0.isNumber })
    }

    /// The attack issue 38 reproduced: three wrong pairing codes, then, once the address may try again,
    /// the invitation page of one's own invitation, which used to forgive the three. With a first wait
    /// of 2 s the doubling waits are far longer than the few milliseconds between one round's guesses.
    func testInvitationPagesBetweenWrongPairingCodesForgiveNothing() async throws {
        let daemon = try await TestDaemon.start(arguments: ["--config", try config("[server]\npairing_backoff_seconds = 2\n")])
        defer { daemon.cleanUp() }
        try invite(daemon)
        let started = try ok(daemon, ["start", "--name", "lab", "--pairing-code"])
        let right = try XCTUnwrap(started.split(separator: "\n").last?.split(separator: " ").dropFirst(2).first?.dropLast(), started)
        let console = try await console(daemon)

        var reasons: [String] = []
        var wrong = (Int(right) ?? 0) + 1
        for round in 1...3 {
            for _ in 0..<3 {
                reasons.append(try await guess(daemon, String(format: "%06d", wrong % 1_000_000)))
                wrong += 1
            }
            guard round < 3 else { break }
            // Wait as the last counted code said, then look up one's own invitation.
            let wait = try XCTUnwrap(reasons.compactMap(Self.announcedWait).last, "round \(round): \(reasons)")
            try await Task.sleep(for: .seconds(wait + 0.3))
            let (status, _) = try await get(console + "/i/" + Self.invitation)
            XCTAssertEqual(status, 200, "round \(round): after the wait the address may look its invitation up")
        }
        let compared = reasons.filter { $0.hasPrefix("wrong pairing code") }.count
        let heldBack = reasons.filter { $0.hasPrefix("too many wrong pairing codes") }.count
        print("pairing reset attack: \(compared) of \(reasons.count) wrong codes compared in 3 rounds (9 of 9 before issue 38)")
        XCTAssertEqual(compared + heldBack, reasons.count, "\(reasons)")
        // 3 free, then one per round after each doubling wait: the look-ups forgave nothing.
        XCTAssertEqual(compared, 5, "\(reasons)")
    }

    /// Behind a trusted proxy each tester counts by the address the proxy names: one tester's wrong codes
    /// hold back that tester, not the others; a tester cannot name another address to escape its count.
    func testATrustedProxyNamesTheTesterItForwards() async throws {
        let daemon = try await TestDaemon.start(arguments: [
            "--config", try config("[server]\npairing_backoff_seconds = 60\n[console]\ntrusted_proxies = [\"127.0.0.1\"]\n"),
        ])
        defer { daemon.cleanUp() }
        try invite(daemon)
        let console = try await console(daemon)
        var statuses: [Int] = []
        for wrong in ["2345abcdeg", "2345abcdeh", "2345abcdej", "2345abcdek"] {
            statuses.append(try await get(console + "/i/" + wrong, headers: ["X-Forwarded-For": "192.0.2.1"]).0)
        }
        XCTAssertEqual(statuses, [404, 404, 404, 429], "the fourth waits")
        // What the tester writes left of what the proxy appended is not believed.
        let forged = try await get(console + "/i/" + Self.invitation, headers: ["X-Forwarded-For": "203.0.113.5, 192.0.2.1"]).0
        XCTAssertEqual(forged, 429)
        let forwarded = try await get(console + "/i/" + Self.invitation, headers: ["Forwarded": "for=192.0.2.1;proto=https"]).0
        XCTAssertEqual(forwarded, 429)
        // Another tester through the same proxy is not held back.
        let other = try await get(console + "/i/" + Self.invitation, headers: ["X-Forwarded-For": "192.0.2.2"]).0
        XCTAssertEqual(other, 200)
        XCTAssertTrue(daemon.log.contains("wrong invitation code from 192.0.2.1"), daemon.log)
    }

    /// A path no route has still passes the gate: its Host check and its headers.
    func testAnswersNoRouteGivesCarryTheGatesHeaders() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let console = try await console(daemon)
        for path in ["/api/public/nothing", "/assets/nothing.js", "/i/"] {
            let (status, headers) = try await get(console + path)
            XCTAssertEqual(status, 404, path)
            XCTAssertEqual(headers["x-content-type-options"], "nosniff", path)
            XCTAssertTrue(headers["content-security-policy"]?.contains("default-src 'self'") == true, "\(path): \(headers)")
            XCTAssertEqual(headers["referrer-policy"], "no-referrer", path)
        }
        let (misdirected, headers) = try await get(console + "/api/public/nothing", headers: ["Host": "attacker.example"])
        XCTAssertEqual(misdirected, 421)
        XCTAssertNotNil(headers["content-security-policy"])
    }
}
