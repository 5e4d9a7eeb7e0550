import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import XCTest

/// muevalctl as a developer types it: real processes, real control socket.
final class MuevalctlTests: XCTestCase {
    func testStartPrintsTheIdAndSessionsJSONHasTheDocumentedKeys() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let start = try daemon.muevalctl(["start", "--name", "usability-run", "--user", "Jill", "--sensors", "UserInputEvent, CustomEvent"])
        XCTAssertEqual(start.status, 0, start.stderr)
        XCTAssertEqual(start.stdout, "1\n")

        let json = try daemon.muevalctl(["sessions", "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let sessions = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(sessions.count, 1)
        for key in ["id", "name", "state", "events", "path"] {
            XCTAssertNotNil(sessions[0][key], "sessions --json lacks \(key)")
        }
        XCTAssertTrue(sessions[0].keys.contains("device") || sessions[0]["device"] == nil)
        XCTAssertEqual(sessions[0]["name"] as? String, "usability-run")
        XCTAssertEqual(sessions[0]["state"] as? String, "waiting")
        XCTAssertEqual(sessions[0]["sensors"] as? [String], ["UserInputEvent", "CustomEvent"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: sessions[0]["path"] as? String ?? ""))

        let table = try daemon.muevalctl(["sessions"])
        XCTAssertTrue(table.stdout.hasPrefix("ID  NAME"), table.stdout)
        XCTAssertTrue(table.stdout.contains("usability-run  waiting"), table.stdout)

        let status = try daemon.muevalctl(["status"])
        XCTAssertEqual(status.status, 0)
        XCTAssertTrue(status.stdout.contains("127.0.0.1:\(daemon.port)"), status.stdout)

        let stop = try daemon.muevalctl(["stop", "usability-run"])
        XCTAssertEqual(stop.status, 0, stop.stderr)
        XCTAssertTrue(stop.stdout.contains("stopped session 1"), stop.stdout)

        let again = try daemon.muevalctl(["stop", "1"])
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.stderr.contains("already stopped"), again.stderr)

        let delete = try daemon.muevalctl(["delete", "1"])
        XCTAssertEqual(delete.status, 0, delete.stderr)
        XCTAssertEqual(try daemon.muevalctl(["sessions"]).stdout, "no sessions\n")
    }

    func testUnknownSessionAndMissingDaemonGiveOneClearLineAndAFailureStatus() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let unknown = try daemon.muevalctl(["events", "nope"])
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertTrue(unknown.stderr.contains("no session \"nope\""), unknown.stderr)

        try await daemon.stop()
        let down = try daemon.muevalctl(["status"])
        XCTAssertNotEqual(down.status, 0)
        XCTAssertTrue(down.stderr.contains("muevald is not running"), down.stderr)
        XCTAssertEqual(down.stderr.split(separator: "\n").count, 1, down.stderr)
    }

    func testEventsJSONIsOneObjectPerLineWithTheTypedPayload() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        _ = try daemon.muevalctl(["start", "--name", "s"])
        let device = try await daemon.connectDevice()
        try await device.send(CaptureSessionTests.listing44 + CaptureSessionTests.listing44.replacingOccurrences(of: "155", with: "156"))
        try await eventually("two events") { () -> Bool? in
            let out = try daemon.muevalctl(["events", "s", "--json"]).stdout
            return out.split(separator: "\n").count == 2 ? true : nil
        }
        let lines = try daemon.muevalctl(["events", "s", "--json", "--limit", "1"]).stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 1)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        let payload = try XCTUnwrap(object["payload"] as? [String: Any])
        XCTAssertEqual(payload["x"] as? Int, 156)
        XCTAssertEqual((payload["timestamp"] as? [String: Any])?["$date"] as? String, "2011-02-19T22:43:06Z")
        XCTAssertEqual(object["class"] as? String, "UserInputEvent")
        await device.close()
    }
}
