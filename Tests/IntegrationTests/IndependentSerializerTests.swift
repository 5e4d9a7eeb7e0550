import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import SessionModel
import XCTest

/// Property lists written and read by an independent implementation: Python's plistlib.
final class IndependentSerializerTests: XCTestCase {
    /// Writes one event per value type with plistlib, sends the bytes as they are, exports the
    /// session as a plist, and has plistlib compare what it reads back with what it wrote.
    func testPlistlibEventsSurviveStorageAndExportWithEveryValueAndType() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "plistlib"))
        let script = daemon.directory + "/events.py"
        try Self.python.write(toFile: script, atomically: true, encoding: .utf8)
        let written = try runProcess("/usr/bin/env", ["python3", script, "write"])
        XCTAssertEqual(written.status, 0, written.stderr)

        let device = try await daemon.connectDevice()
        try await device.send(written.stdout)
        try await device.waitForAck(3)

        let exported = daemon.directory + "/export.plist"
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(session: "plistlib"))
        let export = try daemon.muevalctl(["export", String(session.id), "--format", "plist", "-o", exported])
        XCTAssertEqual(export.status, 0, export.stderr)
        let compared = try runProcess("/usr/bin/env", ["python3", script, "compare", exported])
        XCTAssertEqual(compared.status, 0, compared.stdout + compared.stderr)
        XCTAssertEqual(compared.stdout, "3 events identical\n")
        await device.close()
    }

    /// A `<date>` with a fraction (the wire allows one; Apple's format has none): the plist export still
    /// reads in plistlib and in Foundation, with the time rounded down to its second; JSONL keeps the fraction.
    func testFractionalDatesExportAsAPlistThatPlistlibAndFoundationRead() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        _ = try await daemon.ctl.call(ControlRequest.StartSession(name: "fractions"))
        let device = try await daemon.connectDevice()
        try await device.send("<event><key>class</key><string>UserInputEvent</string><key>seq</key><integer>1</integer>"
            + "<key>timestamp</key><date>2011-02-19T22:43:06.75Z</date><key>last</key><date>1999-12-31T23:59:59.999999Z</date>"
            + "<key>before1970</key><date>1969-12-31T23:59:58.5Z</date><key>list</key><array><date>2011-02-19T22:43:07.000001+01:00</date></array></event>\n")
        try await device.waitForAck(1)

        let exported = daemon.directory + "/export.plist"
        let export = try daemon.muevalctl(["export", "fractions", "-o", exported])
        XCTAssertEqual(export.status, 0, export.stderr)
        let read = try runProcess("/usr/bin/env", ["python3", "-c", """
            import plistlib, sys
            event = plistlib.load(open(sys.argv[1], "rb"))[0]
            print(event["timestamp"].isoformat(), event["last"].isoformat(), event["before1970"].isoformat(), event["list"][0].isoformat())
            """, exported])
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertEqual(read.stdout, "2011-02-19T22:43:06 1999-12-31T23:59:59 1969-12-31T23:59:58 2011-02-19T21:43:07\n")

        let plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: URL(fileURLWithPath: exported)), format: nil)
        let event = try XCTUnwrap((plist as? [Any])?.first as? [String: Any])
        XCTAssertEqual(event["timestamp"] as? Date, Date(timeIntervalSince1970: 1_298_155_386))
        XCTAssertEqual(event["last"] as? Date, Date(timeIntervalSince1970: 946_684_799))
        XCTAssertEqual(event["before1970"] as? Date, Date(timeIntervalSince1970: -2))

        let jsonl = try daemon.muevalctl(["export", "fractions", "--format", "jsonl"])
        XCTAssertTrue(jsonl.stdout.contains(#""timestamp":{"$date":"2011-02-19T22:43:06.75Z"}"#), jsonl.stdout)
        XCTAssertTrue(jsonl.stdout.contains(#""last":{"$date":"1999-12-31T23:59:59.999999Z"}"#), jsonl.stdout)
        await device.close()
    }

    static let python = #"""
    import datetime, plistlib, sys

    def events():
        shot = bytes(range(256)) * 40
        return [
            {"class": "UserInputEvent", "seq": 1, "timestamp": 1298155386.125, "x": 155, "y": -267,
             "pressure": 0.5, "tap": True, "drag": False, "view": "PostsViewController <&> \"quoted\" 'single' é ✓"},
            {"class": "UserInterfaceEvent", "seq": 2, "timestamp": datetime.datetime(2011, 2, 19, 22, 43, 6),
             "screenshot": shot, "empty": b"", "stack": ["Posts", "Editor"], "nested": {"a": [1, 2.5, {"b": []}], "$odd": "dollar"},
             "big": 9223372036854775807, "small": -9223372036854775808, "blank": "", "spaces": "  two  "},
            {"class": "CustomEvent", "seq": 3, "name": "Edit blog posting", "phase": "begin", "emptyDict": {}, "tiny": 1e-300},
        ]

    if sys.argv[1] == "write":
        sys.stdout.write("".join(plistlib.dumps(e).decode() for e in events()))
    else:
        with open(sys.argv[2], "rb") as f:
            back = plistlib.load(f)
        # The export ends with the session's own record (docs/IMPORT.md): the events come before it.
        if "session" not in back[-1]:
            print("no session record last", back[-1])
            sys.exit(1)
        back = back[:-1]
        sent = events()
        if back != sent:
            for a, b in zip(sent, back):
                if a != b:
                    print("sent    ", a)
                    print("exported", b)
            sys.exit(1)
        # plistlib compares 1 == 1.0: check that every type survived too.
        def types(v):
            if isinstance(v, dict): return {k: types(x) for k, x in v.items()}
            if isinstance(v, list): return [types(x) for x in v]
            return type(v).__name__
        if types(back) != types(sent):
            print("types differ", types(sent), types(back))
            sys.exit(1)
        print(f"{len(back)} events identical")
    """#
}
