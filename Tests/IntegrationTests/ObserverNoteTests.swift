import ControlProtocol
import DaemonTestSupport
import Foundation
import MuEvalWire
import SessionModel
import WireProtocol
import XCTest

/// `muevalctl note` through the real daemon: into a recording session (journal, tail, events) and a
/// stopped one (its final file), on the device's clock, in the report; bad notes refused in one line.
final class ObserverNoteTests: XCTestCase {
    /// The device's clock in Listing 4.4: 2011-02-19T22:43:06Z, years behind this machine's.
    static let deviceTime = 1_298_155_386.0

    private func notes(_ daemon: TestDaemon, _ session: String) throws -> [[String: Any]] {
        let run = try daemon.muevalctl(["events", session, "--json", "--class", ObserverNote.eventClass])
        XCTAssertEqual(run.status, 0, run.stderr)
        return try run.stdout.split(separator: "\n").map { line in
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line))
        }
    }

    func testNotesGoIntoARecordingAndAStoppedSessionOnTheDevicesClockAndIntoTheReport() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        XCTAssertEqual(try daemon.muevalctl(["start", "--name", "lab", "--user", "Jill"]).status, 0)
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "iphone-jill"))
        try await device.event(["class": .string("UserInputEvent"), "timestamp": .date(Self.deviceTime), "seq": .integer(1),
                                "type": .string("touch"), "x": .integer(155), "y": .integer(267)])
        try await device.waitForAck(1)
        let tail = try daemon.follow(["tail", "lab", "--json"])
        try await eventually("the tail follows") { () -> Bool? in
            try await daemon.ctl.call(ControlRequest.Status()).tails == 1 ? true : nil
        }

        let live = try daemon.muevalctl(["note", "lab", "looks for the Publish button", "--kind", "problem"])
        XCTAssertEqual(live.status, 0, live.stderr)
        XCTAssertTrue(live.stdout.hasPrefix("note 2 at 2011-02-19T22:4"), live.stdout)
        XCTAssertTrue(live.stdout.hasSuffix(": problem \"looks for the Publish button\"\n"), live.stdout)
        XCTAssertEqual(live.stdout.split(separator: "\n").count, 1, live.stdout)

        let json = try daemon.muevalctl(["--json", "note", "1", "reads the task aloud"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], json.stdout)
        XCTAssertEqual(object["class"] as? String, "ObserverNote")
        XCTAssertEqual(object["device"] as? String, "iphone-jill")
        XCTAssertEqual((object["payload"] as? [String: Any])?["kind"] as? String, "note")

        try await eventually("the note in the live tail") { () -> Bool? in
            tail.lines.contains { $0.contains(#""class":"ObserverNote""#) && $0.contains("looks for the Publish button") } ? true : nil
        }

        // Now the session ends; an observer replaying it adds one more.
        XCTAssertEqual(try daemon.muevalctl(["stop", "lab"]).status, 0)
        let tailStatus = try await tail.exitStatus()
        XCTAssertEqual(tailStatus, 0, "the tail of a stopped session ends")
        let replay = try daemon.muevalctl(["note", "lab", "gives up on the second task", "--kind", "task-done"])
        XCTAssertEqual(replay.status, 0, replay.stderr)

        let stored = try notes(daemon, "lab")
        XCTAssertEqual(stored.count, 3)
        XCTAssertEqual(stored.compactMap { ($0["payload"] as? [String: Any])?["text"] as? String },
                       ["looks for the Publish button", "reads the task aloud", "gives up on the second task"])
        XCTAssertEqual(stored.compactMap { ($0["payload"] as? [String: Any])?["kind"] as? String }, ["problem", "note", "task-done"])
        XCTAssertEqual(stored.compactMap { ($0["payload"] as? [String: Any])?["source"] as? String }, Array(repeating: "muevalctl", count: 3))
        XCTAssertEqual(Set(stored.compactMap { ($0["payload"] as? [String: Any])?["observer"] as? String }).count, 1,
                       "the observer is the user of muevalctl")
        for note in stored {
            // On the device's clock: seconds after its last event, not this machine's time.
            let timestamp = try XCTUnwrap(note["timestamp"] as? Double)
            let received = try XCTUnwrap(note["received"] as? Double)
            XCTAssertEqual(note["timestampEstimated"] as? Bool, false)
            XCTAssertGreaterThanOrEqual(timestamp, Self.deviceTime)
            XCTAssertLessThan(timestamp, Self.deviceTime + 120, "\(note)")
            XCTAssertGreaterThan(received - timestamp, 365 * 86_400, "\(note)")
        }
        let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(sessions.first?.events, 4, "the catalog counts the note added after the stop")

        let out = daemon.directory + "/report"
        let report = try daemon.muevalctl(["report", "lab", "--out", out, "--sections", "notes,timeline"])
        XCTAssertEqual(report.status, 0, report.stderr)
        let html = try String(contentsOfFile: out + "/index.html", encoding: .utf8)
        let list = try XCTUnwrap(html.range(of: "<ol class=\"notes\">").map { String(html[$0.lowerBound...]) })
        for text in ["looks for the Publish button", "reads the task aloud", "gives up on the second task"] {
            XCTAssertTrue(list.contains("<p class=\"text\">\(text)</p>"), "the report's notes lack \(text)")
        }
        await device.close()
    }

    func testABadNoteGetsOneLineAndStatusOne() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        XCTAssertEqual(try daemon.muevalctl(["start", "--name", "lab"]).status, 0)
        let cases: [(arguments: [String], error: String)] = [
            (["note", "lab", "x", "--kind", "two\nlines"], #"Error: "two\nlines" cannot be a note's kind: it contains control characters"#),
            (["note", "lab", "x", "--kind", ""], #"Error: "" cannot be a note's kind: it is empty"#),
            (["note", "lab", ""], "Error: a note needs some text"),
            (["note", "lab", String(repeating: "x", count: 5000)], "Error: the note is 5000 bytes long; a note holds at most 4096 bytes"),
            (["note", "nope", "x"], #"Error: no session "nope""#),
        ]
        for (arguments, error) in cases {
            let run = try daemon.muevalctl(arguments)
            XCTAssertEqual(run.status, 1, "\(arguments)")
            XCTAssertTrue(run.stderr.hasPrefix(error), "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
            XCTAssertEqual(run.stdout, "")
        }
        XCTAssertEqual(try notes(daemon, "lab").count, 0)
    }
}
