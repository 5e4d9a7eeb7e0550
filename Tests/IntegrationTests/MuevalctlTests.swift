import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import OrderedCollections
import WireProtocol
import XCTest
import SessionModel

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
        XCTAssertNil(sessions[0]["device"], "a waiting session has no device yet")
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

    /// `--socket` and `--json` before the command, as systemctl and kubectl users type them.
    func testGlobalOptionsGoBeforeOrAfterTheCommand() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let muevalctl = TestDaemon.executable("muevalctl")
        XCTAssertEqual(try runProcess(muevalctl, ["--socket", daemon.socketPath, "start", "--name", "first"]).stdout, "1\n")
        for arguments in [["--json", "--socket", daemon.socketPath, "sessions"], ["--socket=\(daemon.socketPath)", "sessions", "--json"],
                          ["--json", "sessions", "--socket", daemon.socketPath]] {
            let run = try runProcess(muevalctl, arguments)
            XCTAssertEqual(run.status, 0, "\(arguments): \(run.stderr)")
            let sessions = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]], run.stdout)
            XCTAssertEqual(sessions.first?["name"] as? String, "first")
        }
        let config = ["XDG_CONFIG_HOME=\(daemon.directory)/config", muevalctl]
        let saved = try runProcess("/usr/bin/env", config + ["--json", "report-config", "save", "lab", "--sections", "overview"])
        XCTAssertEqual(saved.status, 0, saved.stderr)
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(saved.stdout.utf8)) as? [String: String],
                       ["path": "\(daemon.directory)/config/mueval/reports/lab.json"])
        let list = try runProcess("/usr/bin/env", config + ["--json", "report-config", "list"])
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String], ["lab"], list.stdout + list.stderr)
        XCTAssertEqual(try runProcess("/usr/bin/env", config + ["report-config", "list"]).stdout, "lab\n")
        // A wrong threshold is one line, without the usage of some other command.
        let wrong = try runProcess("/usr/bin/env", config + ["report-config", "save", "lab", "--set", "speed=1"])
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.stderr.hasPrefix("Error: --set speed=1: give one of "), wrong.stderr)
        XCTAssertEqual(wrong.stderr.split(separator: "\n").count, 1, wrong.stderr)

        let help = try runProcess(muevalctl, ["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("--socket PATH and --json go before or after the command"), help.stdout)
        let tailHelp = try runProcess(muevalctl, ["--json", "tail", "--help"])
        XCTAssertTrue(tailHelp.stdout.contains("--socket <PATH>") && tailHelp.stdout.contains("--json"), tailHelp.stdout)
    }

    func testDevicesListsWhatConnectedInATableAndAsJSON() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        XCTAssertEqual(try daemon.muevalctl(["devices"]).stdout, "no device has connected yet\n")
        _ = try daemon.muevalctl(["start", "--name", "s"])
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "iphone-jill", device: DeviceDescription(
            name: "Jill's iPhone", model: "iPhone3,1", systemVersion: "4.3", appId: "org.wordpress", appVersion: "2.6.4",
            screenWidth: 320, screenHeight: 480, screenScale: 2)))
        try await device.event(["class": .string("CustomEvent"), "seq": .integer(1), "name": .string("hello")])
        try await device.waitForAck(1)

        let table = try daemon.muevalctl(["devices"])
        XCTAssertEqual(table.status, 0, table.stderr)
        let lines = table.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, table.stdout)
        XCTAssertTrue(lines[0].hasPrefix("DEVICE ") && lines[0].hasSuffix("LAST SEEN"), lines[0])
        for column in ["iphone-jill", "Jill's iPhone", "iPhone3,1", "4.3", "org.wordpress 2.6.4", "127.0.0.1"] {
            XCTAssertTrue(lines[1].contains(column), "no \(column) in \(lines[1])")
        }

        let json = try daemon.muevalctl(["devices", "--json"])
        let devices = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]], json.stdout)
        XCTAssertEqual(devices.count, 1)
        XCTAssertEqual(devices[0]["id"] as? String, "iphone-jill")
        XCTAssertEqual(devices[0]["name"] as? String, "Jill's iPhone")
        XCTAssertEqual(devices[0]["model"] as? String, "iPhone3,1")
        XCTAssertEqual(devices[0]["systemVersion"] as? String, "4.3")
        XCTAssertEqual(devices[0]["appVersion"] as? String, "2.6.4")
        XCTAssertEqual(devices[0]["screenScale"] as? Double, 2)
        XCTAssertTrue((devices[0]["address"] as? String)?.hasPrefix("127.0.0.1") ?? false, "\(devices[0])")
        let firstSeen = try XCTUnwrap(devices[0]["firstSeen"] as? Double)
        let lastSeen = try XCTUnwrap(devices[0]["lastSeen"] as? Double)
        XCTAssertLessThanOrEqual(firstSeen, lastSeen)
        XCTAssertLessThan(abs(lastSeen - Date().timeIntervalSince1970), 60)

        let sessions = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try daemon.muevalctl(["sessions", "--json"]).stdout.utf8))
                                     as? [[String: Any]])
        XCTAssertEqual(sessions.first?["device"] as? String, "iphone-jill", "the recording session names its device")
        await device.close()
    }

    /// Every value type through device → muevald → session file → `export --format jsonl`: each line is
    /// JSON, and its payload reads back to exactly what was sent (integers stay integers, fractions stay).
    func testExportJSONLinesThroughTheDaemonKeepEveryValueAndType() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        _ = try daemon.muevalctl(["start", "--name", "typed"])
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "iphone-typed"))
        let shot = (0..<4096).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let sent: [OrderedDictionary<String, PlistValue>] = [
            ["class": .string("UserInputEvent"), "seq": .integer(1), "timestamp": .date(1_298_155_386.25), "x": .integer(155),
             "pressure": .real(0.5), "whole": .real(2), "tap": .bool(true), "view": .string("Posts <&> \"é\" ✓")],
            ["class": .string("UserInterfaceEvent"), "seq": .integer(2), "timestamp": .real(1_298_155_387.125), "screenshot": .data(shot),
             "stack": .array([.string("Posts"), .string("Editor")]), "nested": .dict(["a": .array([.integer(-1), .dict([:])]), "$odd": .bool(false)]),
             "big": .integer(.max), "when": .date(1_298_155_388)],
        ]
        for event in sent { try await device.event(event) }
        try await device.waitForAck(2)

        let export = try daemon.muevalctl(["export", "typed", "--format", "jsonl"])
        XCTAssertEqual(export.status, 0, export.stderr)
        let lines = export.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 5, "two events, the session's record and the screenshot's blob, each ending in a newline: \(export.stdout)")
        XCTAssertEqual(lines.last, "")
        XCTAssertTrue(lines[2].hasPrefix(#"{"session":{"#), String(lines[2]))
        XCTAssertTrue(lines[3].hasPrefix(#"{"blob":{"#) && lines[3].contains(TypedJSON.encode(.data(shot)).blobs[0].sha256), String(lines[3]))
        let blob = TypedJSON.encode(.data(shot)).blobs[0]
        for (index, (line, event)) in zip(lines, sent).enumerated() {
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line))
            XCTAssertEqual(object["device"] as? String, "iphone-typed")
            XCTAssertEqual(object["seq"] as? Int, index + 1)
            // Foundation's JSON reader blurs 2 and 2.0: the payload is read with the typed reader.
            let payload = try XCTUnwrap(line.range(of: ",\"payload\":").map { line[$0.upperBound...].dropLast() }, String(line))
            let value = try TypedJSON.decode(Array(payload.utf8)) { sha in
                guard sha == blob.sha256 else { throw CocoaError(.fileReadCorruptFile) }
                return shot
            }
            XCTAssertEqual(value, .dict(event))
        }
        XCTAssertTrue(export.stdout.contains(#""timestamp":{"$date":"2011-02-19T22:43:06.25Z"}"#), export.stdout)
        XCTAssertTrue(export.stdout.contains(#""whole":2.0"#) && export.stdout.contains(#""x":155,"#), export.stdout)
        await device.close()
    }

    /// The whole chain: a device (muevalsim) → muevald → session file → `muevalctl report` by session name.
    func testReportOfASessionRecordedThroughTheDaemon() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        _ = try daemon.muevalctl(["start", "--name", "usability-run", "--user", "Jill"])
        let run = try runProcess(TestDaemon.executable("muevalsim"), [
            "--connect", "127.0.0.1:\(daemon.port)", "--scenario", "plainnote", "--seed", "5", "--rate", "max",
        ])
        XCTAssertEqual(run.status, 0, run.stderr + run.stdout)
        let stop = try daemon.muevalctl(["stop", "usability-run"])
        XCTAssertEqual(stop.status, 0, stop.stderr)

        let out = daemon.directory + "/report"
        let report = try daemon.muevalctl(["report", "usability-run", "--out", out])
        XCTAssertEqual(report.status, 0, report.stderr)
        XCTAssertEqual(report.stdout, out + "/index.html\n")
        let html = try String(contentsOfFile: out + "/index.html", encoding: .utf8)

        // What the report counts is what the daemon stored.
        let session = try await daemon.ctl.call(ControlRequest.ListSessions())[0]
        let events = try SessionReader(path: session.path).events()
        XCTAssertGreaterThan(events.count, 10)
        XCTAssertTrue(html.contains("usability-run") && html.contains("Jill"))
        for (eventClass, count) in Dictionary(grouping: events, by: \.eventClass).mapValues(\.count) {
            XCTAssertTrue(html.contains("<li>\(eventClass): \(count)</li>"), "the overview lacks \(count) \(eventClass)")
        }
        let views = Set(events.compactMap { event -> String? in
            guard case .dict(let payload)? = try? TypedJSON.decodeLeavingBlobs(Array(event.payload.utf8)),
                  case .string(let view)? = payload["view"] else { return nil }
            return view
        })
        XCTAssertFalse(views.isEmpty)
        for view in views { XCTAssertTrue(html.contains(view), "the report does not name the view \(view)") }

        let unknown = try daemon.muevalctl(["report", "nope", "--out", out])
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertEqual(unknown.stderr, "Error: muevald knows no session \"nope\"; see `muevalctl sessions`\n")
    }
}
