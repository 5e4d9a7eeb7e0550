import ControlProtocol
import DaemonTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MuEvalWire
import XCTest

/// Refusals that say why (issue 52, item 2), against the real muevald: 150 phones behind one address (a lab's
/// Wi-Fi, an office's NAT) connecting within two seconds used to get an empty 400 beyond the 120th, and again at
/// every reconnect in that minute, with no log line (the tester pages' request quota counted their upgrades, and
/// Hummingbird answers every upgrade its router turns down with an empty 400). Now they connect under the defaults;
/// past a cap set low the refused ones are told why (429 with `Retry-After`, the setting's name), one log line says
/// so, and `status --json` and /metrics count them by reason; a foreign page gets a 403 that names
/// `capture.web_origins`.
final class WebDeviceRefusalTests: XCTestCase {
    private func consolePort(_ daemon: TestDaemon) async throws -> Int {
        let url = try await daemon.consoleLink().url
        return try XCTUnwrap(URLComponents(string: url)?.port)
    }

    /// `count` web devices from `source` at once, each saying hello; the connected ones once served (each has a
    /// reply to its hello), and the refusals.
    private func phones(_ count: Int, port: Int, source: String, origin: String? = nil) async throws -> ([TestDevice], [WebSocketRefused]) {
        try await withThrowingTaskGroup(of: Result<TestDevice, WebSocketRefused>.self) { group in
            for phone in 0..<count {
                group.addTask {
                    do {
                        let device = try await TestDevice.connectWebSocket(port: port, origin: origin, source: source)
                        try await device.hello(DeviceHello(deviceId: "phone-\(source)-\(phone)"))
                        _ = try await device.waitFor(timeout: 30, "a reply to phone \(phone)'s hello") { $0.first }
                        return .success(device)
                    } catch let refused as WebSocketRefused {
                        return .failure(refused)
                    }
                }
            }
            var connected: [TestDevice] = []
            var refused: [WebSocketRefused] = []
            for try await result in group {
                switch result {
                case .success(let device): connected.append(device)
                case .failure(let refusal): refused.append(refusal)
                }
            }
            return (connected, refused)
        }
    }

    private func refusals(_ daemon: TestDaemon) throws -> [String: Int] {
        let output = try daemon.muevalctl(["status", "--json"])
        XCTAssertEqual(output.status, 0, output.stderr)
        let status = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        let counters = try XCTUnwrap(status["counters"] as? [String: Any])
        return try XCTUnwrap(counters["refusals"] as? [String: Int])
    }

    private func metrics(_ port: Int) async throws -> String {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        return String(decoding: data, as: UTF8.self)
    }

    func testAHundredAndFiftyPhonesBehindOneAddressConnectAndReconnectUnderTheDefaults() async throws {
        // Without a code (`--web-open`) and without a session: each phone is served, its hello answered that no
        // session waits; what is measured is whether it connects.
        let daemon = try await TestDaemon.start(arguments: ["--web-open"])
        defer { daemon.cleanUp() }
        let port = try await consolePort(daemon)
        for round in 1...2 {
            let (connected, refused) = try await phones(150, port: port, source: "127.0.0.1")
            XCTAssertEqual(connected.count, 150, "round \(round): \(refused.prefix(3))")
            for device in connected { await device.close() }
        }
        XCTAssertEqual(try refusals(daemon).values.reduce(0, +), 0)
        XCTAssertFalse(daemon.log.contains("refused a web device"), daemon.log)
    }

    func testPastTheCapsTheRefusedPhonesAreToldWhyOnceLoggedAndCounted() async throws {
        let config = try ConfigFile("[capture]\nweb_max_per_address = 100\nweb_connections_per_minute = 130\n")
        defer { config.remove() }
        let daemon = try await TestDaemon.start(arguments: ["--web-open", "--config", config.path])
        defer { daemon.cleanUp() }
        let port = try await consolePort(daemon)

        // 150 at once from one address: 100 connect, 50 are told the cap, its setting, and when to try again.
        let (connected, refused) = try await phones(150, port: port, source: "127.0.0.1")
        XCTAssertEqual(connected.count, 100)
        XCTAssertEqual(refused.count, 50)
        for refusal in refused {
            XCTAssertEqual(refusal.status, 429)
            XCTAssertEqual(refusal.retryAfter, "30")
            XCTAssertEqual(refusal.reason, "100 web devices are connected from 127.0.0.1 already, the most one address may have (capture.web_max_per_address): try again in 30 s\n")
        }
        let line = "refused a web device from 127.0.0.1 with 429: 100 web devices are connected from 127.0.0.1 already"
        try await eventually(timeout: 10, "the refusal logged") { daemon.log.contains(line) ? true : nil }
        XCTAssertEqual(daemon.log.components(separatedBy: line).count - 1, 1, "one line for the 50 within the minute")

        // The minute's cap (checked well within the minute the first phone began): 30 more connect, 10 are told to wait.
        for device in connected { await device.close() }
        try await eventually(timeout: 20, "the 100 gone") { () -> Bool? in
            try await daemon.ctl.call(ControlRequest.Status()).descriptors?.consoleWebSockets == 0 ? true : nil
        }
        let (late, waiting) = try await phones(40, port: port, source: "127.0.0.1")
        XCTAssertEqual(late.count, 30)
        XCTAssertEqual(waiting.count, 10)
        for refusal in waiting {
            XCTAssertEqual(refusal.status, 429)
            let seconds = try XCTUnwrap(Int(refusal.retryAfter ?? ""))
            XCTAssertTrue((1...60).contains(seconds), "\(seconds)")
            XCTAssertTrue(refusal.reason.contains("(capture.web_connections_per_minute): try again in \(seconds) s"), refusal.reason)
        }
        for device in late { await device.close() }

        // A page of an origin the lab did not list: 403 with its reason, no Retry-After, from another address.
        do {
            _ = try await TestDevice.connectWebSocket(port: port, origin: "https://elsewhere.example", source: "127.0.0.3")
            XCTFail("a foreign origin was upgraded")
        } catch let refused as WebSocketRefused {
            XCTAssertEqual(refused.status, 403)
            XCTAssertNil(refused.retryAfter)
            XCTAssertEqual(refused.reason, "pages from https://elsewhere.example may not capture here: add it to capture.web_origins\n")
        }
        try await eventually(timeout: 10, "the origin's refusal logged") {
            daemon.log.contains("refused a web device from 127.0.0.3 with 403: pages from https://elsewhere.example may not capture here") ? true : nil
        }

        // Counted by reason in `status --json` and /metrics; `status` names the settings.
        let counts = try refusals(daemon)
        XCTAssertEqual(counts["web_per_address"], 50)
        XCTAssertEqual(counts["web_rate"], 10)
        XCTAssertEqual(counts["origin"], 1)
        let scraped = try await metrics(port)
        XCTAssertTrue(scraped.contains(#"mueval_refusals_total{reason="web_per_address"} 50"#), scraped)
        XCTAssertTrue(scraped.contains(#"mueval_refusals_total{reason="web_rate"} 10"#), scraped)
        XCTAssertTrue(scraped.contains(#"mueval_refusals_total{reason="origin"} 1"#), scraped)
        let status = try daemon.muevalctl(["status"]).stdout
        XCTAssertTrue(status.contains("1 by capture.web_origins (origin), 50 by capture.web_max_per_address (web_per_address), 10 by capture.web_connections_per_minute (web_rate)"), status)
    }
}
