import ControlClient
import ControlProtocol
import DaemonTestSupport
import Foundation
import JournalStorage
import MuEvalWire
import OrderedCollections
import SessionModel
import WireProtocol
import XCTest

/// A developer's capture sessions, end to end: the real muevald, real TCP, the real control socket, real SQLite files.
final class CaptureSessionTests: XCTestCase {
    static let listing44 = """
        <event>
          <key>class</key>
          <string>UserInputEvent</string>
          <key>timestamp</key>
          <date>2011-02-19T22:43:06Z</date>
          <key>x</key>
          <integer>155</integer>
          <key>y</key>
          <integer>267</integer>
        </event>

        """

    func testThesisListing44SentAsIsIsStoredExactly() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "listing-4.4"))

        // A device that sends no hello, like `nc`: identified by its address.
        let device = try await daemon.connectDevice()
        try await device.send(Self.listing44)
        let welcome = try await device.waitFor("welcome") { _ in device.welcome }
        XCTAssertEqual(welcome.sessionId, String(session.id))

        let events = try await eventually("the event to be stored") { () -> [StoredEvent]? in
            let events = try await daemon.ctl.events(ControlRequest.Events(session: String(session.id)))
            return events.isEmpty ? nil : events
        }
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual(events[0].eventClass, "UserInputEvent")
        XCTAssertEqual(events[0].timestamp, 1_298_155_386)
        XCTAssertFalse(events[0].timestampEstimated)
        XCTAssertEqual(events[0].device, "address:127.0.0.1")
        XCTAssertEqual(events[0].payload, #"{"class":"UserInputEvent","timestamp":{"$date":"2011-02-19T22:43:06Z"},"x":155,"y":267}"#)

        let stopped = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
        XCTAssertEqual(stopped.first?.state, .stopped)
        XCTAssertEqual(stopped.first?.events, 1)

        // The file is a plain SQLite document: the sqlite3 shell reads it with json_extract.
        let query = try runProcess("/usr/bin/sqlite3", [session.path, "SELECT class, json_extract(payload, '$.x'), json_extract(payload, '$.y') FROM events"])
        XCTAssertEqual(query.stdout, "UserInputEvent|155|267\n", query.stderr)
        await device.close()
    }

    func testTwoSessionsThreeDevicesConcurrentlyStoreExactlyWhatWasSent() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let jack = try await daemon.ctl.call(ControlRequest.StartSession(name: "jack", device: "iphone-jack", user: "Jack"))
        let jill = try await daemon.ctl.call(ControlRequest.StartSession(name: "jill", user: "Jill"))

        let perDevice = 500
        let devices = ["iphone-jack", "iphone-jill", "iphone-stranger"]
        let connections = try await withThrowingTaskGroup(of: (String, TestDevice).self) { group in
            for (index, id) in devices.enumerated() {
                group.addTask {
                    // The stranger connects last, when Jill's unbound session is already claimed.
                    if index == 2 {
                        try await eventually("jill's session to be claimed") { () -> Bool? in
                            let status = try await daemon.ctl.call(ControlRequest.Status())
                            return status.sessions.first { $0.id == jill.id }?.device == "iphone-jill" ? true : nil
                        }
                    }
                    let device = try await daemon.connectDevice()
                    try await device.hello(DeviceHello(deviceId: id, device: DeviceDescription(name: "\(id)'s phone", model: "iPhone3,1", systemVersion: "4.3")))
                    if index < 2 { _ = try await device.waitFor("welcome") { _ in device.welcome } }
                    var stream: [UInt8] = []
                    for seq in 1...perDevice {
                        stream += WireEncoder.event(Self.touch(seq: seq, device: id))
                    }
                    // Many events in few writes, split at arbitrary points by TCP.
                    for chunk in stride(from: 0, to: stream.count, by: 1000) {
                        try await device.send(Array(stream[chunk..<min(chunk + 1000, stream.count)]))
                    }
                    return (id, device)
                }
            }
            var result: [String: TestDevice] = [:]
            for try await (id, device) in group { result[id] = device }
            return result
        }
        try await connections["iphone-jack"]!.waitForAck(Int64(perDevice))
        try await connections["iphone-jill"]!.waitForAck(Int64(perDevice))
        let stranger = connections["iphone-stranger"]!
        try await stranger.waitFor("errors for the stranger") { _ in stranger.errors.count >= perDevice ? true : nil }
        XCTAssertTrue(stranger.errors.last?.reason.contains("no session") == true, "\(stranger.errors.last as Any)")

        let stopped = try await daemon.ctl.call(ControlRequest.StopSessions(.all))
        XCTAssertEqual(stopped.map(\.id), [jack.id, jill.id])
        for (session, device) in [(jack, "iphone-jack"), (jill, "iphone-jill")] {
            let reader = try SessionReader(path: session.path)
            let stored = try reader.events()
            XCTAssertEqual(stored.count, perDevice)
            XCTAssertEqual(stored.map(\.seq), (1...perDevice).map { Int64($0) })
            XCTAssertEqual(Set(stored.map(\.device)), [device])
            for event in stored {
                let sent = Self.touch(seq: Int(event.seq!), device: device)
                XCTAssertEqual(try TypedJSON.decode(Array(event.payload.utf8)) { _ in [] }, .dict(sent))
            }
            XCTAssertEqual(try reader.session()?.state, .stopped)
            XCTAssertEqual(try reader.devices().first?.model, "iPhone3,1")
        }
        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertEqual(status.counters.eventsRejectedNoSession, perDevice)
        XCTAssertEqual(status.counters.eventsStored, 2 * perDevice)
        for device in connections.values { await device.close() }
    }

    func testServesDevicesWhenZeroconfCannotEvenReachDBus() async throws {
        // No system bus at all (a container, a minimal install): the daemon warns once and serves TCP.
        // The bus address leads nowhere, so nothing reaches the real network.
        let daemon = try await TestDaemon.start(launcher: ["env", "DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent/mueval-bus"],
                                                zeroconf: true)
        defer { daemon.cleanUp() }
        try await eventually("the warning, and status saying so") { () -> Bool? in
            let status = try await daemon.ctl.call(ControlRequest.Status())
            return status.zeroconf == "waiting for avahi-daemon" && daemon.log.contains("devices must connect to") ? true : nil
        }
        _ = try await daemon.ctl.call(ControlRequest.StartSession())
        let device = try await daemon.connectDevice()
        try await device.event(Self.touch(seq: 1, device: "address:127.0.0.1"))
        try await device.waitForAck(1)
        XCTAssertEqual(daemon.log.components(separatedBy: "avahi-daemon is not running").count - 1, 1, daemon.log)
        await device.close()
    }

    func testDuplicatesAreStoredOnceAndAcknowledged() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(device: "ipad"))
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "ipad"))
        for _ in 0..<2 {
            for seq in 1...20 { try await device.event(Self.touch(seq: seq, device: "ipad")) }
        }
        try await device.waitForAck(20)
        // The ack of 20 may come before the second round is read: stopping then would leave duplicates unread.
        try await eventually("every duplicate read") {
            try await daemon.ctl.call(ControlRequest.Status()).counters.eventsDuplicate == 20 ? true : nil
        }
        let stopped = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
        XCTAssertEqual(stopped.first?.events, 20)
        XCTAssertEqual(stopped.first?.duplicates, 20)
        XCTAssertEqual(try SessionReader(path: session.path).eventCount(), 20)
    }

    func testSensorSelectionStoresOnlySelectedEventsAndCountsTheRest() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(
            ControlRequest.StartSession(sensors: ["UserInputEvent", "battery"]))
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "phone"))
        let welcome = try await device.waitFor("welcome") { _ in device.welcome }
        XCTAssertEqual(welcome.sensors, ["UserInputEvent", "battery"])
        try await device.event(Self.touch(seq: 1, device: "phone"))
        try await device.event(["class": .string("DeviceSensorEvent"), "sensor": .string("battery"), "level": .real(0.5), "seq": .integer(2)])
        try await device.event(["class": .string("DeviceSensorEvent"), "sensor": .string("accelerometer"), "x": .real(0.1), "seq": .integer(3)])
        try await device.event(["class": .string("ApplicationEvent"), "type": .string("launch"), "seq": .integer(4)])
        try await device.event(Self.touch(seq: 5, device: "phone"))
        try await device.waitForAck(5)
        // A stream that ends with events the session does not select is acknowledged to its end:
        // the device must not keep them for ever.
        try await device.event(["class": .string("ApplicationEvent"), "type": .string("background"), "seq": .integer(6)])
        try await device.event(["class": .string("CustomEvent"), "name": .string("not selected"), "seq": .integer(7)])
        try await device.waitForAck(7)
        let stopped = try await daemon.ctl.call(ControlRequest.StopSessions(session: String(session.id)))
        XCTAssertEqual(stopped.first?.events, 3)
        XCTAssertEqual(stopped.first?.filtered, 4)
        XCTAssertEqual(try SessionReader(path: session.path).events().compactMap(\.seq), [1, 2, 5])
    }

    func testMalformedMessagesGetErrorsAndNothingElseIsLost() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let first = try await daemon.ctl.call(ControlRequest.StartSession(device: "good"))
        let second = try await daemon.ctl.call(ControlRequest.StartSession(device: "bad"))
        let good = try await daemon.connectDevice()
        let bad = try await daemon.connectDevice()
        try await good.hello(DeviceHello(deviceId: "good"))
        try await bad.hello(DeviceHello(deviceId: "bad"))
        try await bad.event(Self.touch(seq: 1, device: "bad"))
        try await bad.send("<event><key>class</key><string>UserInputEvent</string><key>x</key><integer>12z</integer></event>")
        try await bad.send("<event><key>x</key><integer>1</integer></event>")
        try await bad.send("<event><key>class</key><string>A</string><key>n</key><string>x</event>")
        try await bad.send("<!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;\">]><event><key>class</key><string>&lol2;</string></event>")
        try await bad.event(Self.touch(seq: 2, device: "bad"))
        for seq in 1...10 { try await good.event(Self.touch(seq: seq, device: "good")) }
        try await good.waitForAck(10)
        try await bad.waitForAck(2)
        try await bad.waitFor("four errors") { _ in bad.errors.count >= 4 ? true : nil }
        XCTAssertFalse(bad.isClosed)
        XCTAssertTrue(good.errors.isEmpty, "\(good.errors)")
        let status = try await daemon.ctl.call(ControlRequest.Status())
        XCTAssertGreaterThanOrEqual(status.counters.malformedMessages, 4)
        _ = try await daemon.ctl.call(ControlRequest.StopSessions(.all))
        XCTAssertEqual(try SessionReader(path: first.path).eventCount(), 10)
        XCTAssertEqual(try SessionReader(path: second.path).events().compactMap(\.seq), [1, 2])
    }

    func testRecordingSessionSurvivesKillAndResumesWhenTheDeviceReconnects() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession(name: "field-test", device: "phone"))
        let before = try await daemon.connectDevice()
        try await before.hello(DeviceHello(deviceId: "phone"))
        for seq in 1...50 { try await before.event(Self.touch(seq: seq, device: "phone")) }
        try await before.waitForAck(50)

        try await daemon.kill()
        try await daemon.restart()
        let recovered = try await daemon.ctl.call(ControlRequest.ListSessions())
        XCTAssertEqual(recovered.first?.state, .interrupted)
        XCTAssertEqual(recovered.first?.events, 50)

        let indexes = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' ORDER BY name"
        XCTAssertEqual(try runProcess("/usr/bin/sqlite3", [session.path, indexes]).stdout, "",
                       "an open session's file gets its indexes when the session stops")

        let after = try await daemon.connectDevice()
        try await after.hello(DeviceHello(deviceId: "phone"))
        // The device resends what it has no ack for: duplicates are stored once.
        for seq in 41...80 { try await after.event(Self.touch(seq: seq, device: "phone")) }
        try await after.waitForAck(80)
        let stopped = try await daemon.ctl.call(ControlRequest.StopSessions(session: "field-test"))
        XCTAssertEqual(stopped.first?.events, 80)

        let reader = try SessionReader(path: session.path)
        XCTAssertEqual(try reader.events().compactMap(\.seq), (1...80).map { Int64($0) })
        let gaps = try reader.gaps()
        XCTAssertEqual(gaps.count, 1)
        XCTAssertEqual(gaps.first?.reason, "muevald was not running")
        XCTAssertNotNil(gaps.first?.end)
        let integrity = try runProcess("/usr/bin/sqlite3", [session.path, "PRAGMA integrity_check"])
        XCTAssertEqual(integrity.stdout, "ok\n")
        XCTAssertEqual(try runProcess("/usr/bin/sqlite3", [session.path, indexes]).stdout,
                       "events_class\nevents_device_seq\nevents_received\nevents_timestamp\n")
    }

    func testAutoPolicyOpensASessionPerConnection() async throws {
        let daemon = try await TestDaemon.start(arguments: ["--unknown-devices", "auto"])
        defer { daemon.cleanUp() }
        let device = try await daemon.connectDevice()
        try await device.hello(DeviceHello(deviceId: "field-phone"))
        for seq in 1...5 { try await device.event(Self.touch(seq: seq, device: "field-phone")) }
        try await device.waitForAck(5)
        try await device.goodbye()
        await device.close()
        let sessions = try await eventually("the auto session to stop") { () -> [SessionRecord]? in
            let sessions = try await daemon.ctl.call(ControlRequest.ListSessions())
            return sessions.first?.state == .stopped ? sessions : nil
        }
        XCTAssertEqual(sessions.count, 1)
        XCTAssertEqual(sessions.first?.name, "auto-field-phone")
        XCTAssertEqual(sessions.first?.events, 5)
    }

    func testShutdownOnSigtermCommitsAndExitsZero() async throws {
        let daemon = try await TestDaemon.start()
        defer { daemon.cleanUp() }
        let session = try await daemon.ctl.call(ControlRequest.StartSession())
        let device = try await daemon.connectDevice()
        var stream: [UInt8] = []
        for seq in 1...2000 { stream += WireEncoder.event(Self.touch(seq: seq, device: "d")) }
        try await device.send(stream)
        try await device.goodbye()
        try await device.waitFor("welcome") { _ in device.welcome }
        let started = Date()
        let status = try await daemon.stop()
        XCTAssertEqual(status, 0, daemon.log)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        // Everything the daemon read before the signal is in the file.
        let stored = try SessionReader(path: session.path).eventCount()
        XCTAssertGreaterThan(stored, 0)
        XCTAssertEqual(try SessionReader(path: session.path).events().compactMap(\.seq), (1...Int64(stored)).map { $0 })
    }

    /// A touch as the capture library sends it.
    static func touch(seq: Int, device: String) -> OrderedDictionary<String, PlistValue> {
        [
            "class": .string("UserInputEvent"),
            "timestamp": .real(1_298_155_386 + Double(seq) / 1000),
            "seq": .integer(Int64(seq)),
            "type": .string("touch"),
            "phase": .string(seq % 3 == 0 ? "ended" : "began"),
            "x": .real(Double(seq % 320)),
            "y": .integer(Int64(seq % 480)),
            "view": .string("PostsViewController"),
            "device": .string(device),
        ]
    }
}
