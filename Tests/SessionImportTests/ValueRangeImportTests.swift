import Foundation
import JournalStorage
import SessionImport
import Testing
import WireProtocol

/// Every import reader runs the wire's value ranges (docs/PROTOCOL.md, "Value ranges"): a record with an
/// absurd value refuses the file, naming where, the field and the range, and nothing is stored.
@Suite struct ValueRangeImportTests {
    private static let timeRange = "a time from 1970-01-01T00:00:00Z to 2100-01-01T00:00:00Z"

    /// Imports `content` as a file named `name` into an empty data directory; the error, and what is left there.
    private func refusal(_ name: String, _ content: String) throws -> (error: String, sessions: Int, leftovers: [String]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ranges-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + name
        try content.write(toFile: path, atomically: true, encoding: .utf8)
        let catalog = try Catalog(directory: directory + "/data")
        let importer = SessionImporter(catalog: catalog, lab: "test")
        var refusal = ""
        do {
            _ = try importer.run(ImportRequest(files: [try ImportFile.open(path)]), now: 1_700_000_000)
        } catch {
            refusal = "\(error)"
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory + "/data/sessions")
        return (refusal, try catalog.sessions().count, leftovers)
    }

    private func expectRefused(_ name: String, _ content: String, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (error, sessions, leftovers) = try refusal(name, content)
        #expect(error.hasSuffix(name + expected) || error.contains("/" + name + expected), "\(error)", sourceLocation: sourceLocation)
        #expect(sessions == 0 && leftovers.isEmpty, "nothing stored: \(sessions) sessions, \(leftovers)", sourceLocation: sourceLocation)
    }

    private func imutLog(relTime: String, event: String) -> String {
        """
        [
          {"type" : "sync", "sid" : "s1", "seq" : 1, "abs-date-time" : "2014-07-05T14:03:22+02:00"},
          {"type" : "events", "sid" : "s1", "seq" : 2, "rel-time" : \(relTime), "events" : [\(event)]}
        ]
        """
    }

    @Test func imutLog() throws {
        let backlight = #"{"event" : "backlightChange", "type" : "abs", "params" : {"val" : 0.5}}"#
        try expectRefused("time.json", imutLog(relTime: "1e18", event: backlight),
                          #":3:3: packet 2: events[0]: "timestamp" is 1.0000000014045618e+18, outside its range: \#(Self.timeRange)"#)
        // A module muEval does not know is kept whole, as a custom event: its "x" is a coordinate still.
        try expectRefused("module.json", imutLog(relTime: "1", event: #"{"event" : "touchModule", "type" : "abs", "params" : {"x" : -1e300}}"#),
                          #":3:3: packet 2: events[0]: "x" is -1e+300, outside its range: a coordinate from -1000000 to 1000000 points"#)
    }

    @Test func imutScreenSize() throws {
        let log = """
            [
              {"type" : "session-init", "sid" : "s1", "seq" : 0, "meta" : {"screen-size" : {"scale" : 2, "points" : {"width" : 320, "height" : -568}}}},
              {"type" : "sync", "sid" : "s1", "seq" : 1, "abs-date-time" : "2014-07-05T14:03:22+02:00"}
            ]
            """
        try expectRefused("screen.json", log,
                          #":2:3: packet 1: meta's screen-size: "screenHeight" is -568, outside its range: a size from 0 to 1000000 points"#)
    }

    @Test func gpxTrack() throws {
        try expectRefused("old.gpx", "<gpx version=\"1.1\"><trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\"><time>1900-01-01T00:00:00Z</time></trkpt></trkseg></trk></gpx>",
                          #":2:57: "<time> 1900-01-01T00:00:00Z" is -2208988800, outside its range: \#(Self.timeRange)"#)
    }

    @Test func jsonLinesExport() throws {
        let line = { (timestamp: String, payload: String) in
            #"{"class":"UserInputEvent","device":"d","received":1700000000,"timestamp":\#(timestamp),"payload":{"class":"UserInputEvent"\#(payload)}}"# + "\n"
        }
        try expectRefused("time.jsonl", line("1e18", ""), #":1:74: an event line: "timestamp" is 1e+18, outside its range: \#(Self.timeRange)"#)
        try expectRefused("x.jsonl", line("1700000000", #","x":{"$real":"nan"}"#),
                          #":1:95: the payload: "x" is nan, outside its range: a coordinate from -1000000 to 1000000 points"#)
        let media = #"{"media":{"device":"d","stream":"voice-1","kind":"audio","contentType":"audio/wav","part":0,"start":1700000000,"duration":-1,"received":1700000000,"data":"AAAA"}}"#
        try expectRefused("media.jsonl", line("1700000000", "") + media + "\n",
                          #":2:1: a media record: "duration" is -1, outside its range: a duration from 0 to 31622400 seconds"#)
        let device = #"{"id":"d","screenWidth":320,"screenHeight":480,"screenScale":2,"firstSeen":1700000000,"lastSeen":1700000000}"#
        let session = #"{"session":{"version":1,"uuid":"u","name":"n","sensors":[],"created":1700000000,"started":1e18,"filtered":0,"duplicates":0,"devices":[\#(device)],"gaps":[]}}"#
        try expectRefused("session.jsonl", session + "\n" + line("1700000000", ""),
                          #":1:1: the session record: "started" is 1e+18, outside its range: \#(Self.timeRange)"#)
        let tiny = device.replacingOccurrences(of: #""screenScale":2"#, with: #""screenScale":0.01"#)
        try expectRefused("scale.jsonl", session.replacingOccurrences(of: "1e18", with: "1700000000").replacingOccurrences(of: device, with: tiny) + "\n",
                          #":1:1: the session record's devices[0]: "screenScale" is 0.01, outside its range: a scale from 0.1 to 100 pixels per point"#)
    }

    @Test func plistExport() throws {
        let plist = { (elements: String) in
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<array>\n\(elements)</array>\n</plist>\n"
        }
        let event = "\t<dict><key>class</key><string>UserInterfaceEvent</string><key>timestamp</key><real>1700000000</real>"
            + "<key>uiState</key><dict><key>frame</key><array><real>0</real><real>0</real><real>inf</real><real>480</real></array></dict></dict>\n"
        try expectRefused("frame.plist", plist(event),
                          #":4:2: "uiState.frame[2]" is inf, outside its range: a size from 0 to 1000000 points"#)
        let media = "\t<dict><key>media</key><dict><key>device</key><string>d</string><key>stream</key><string>v</string>"
            + "<key>contentType</key><string>audio/wav</string><key>part</key><integer>99999999999</integer>"
            + "<key>start</key><real>1700000000</real><key>data</key><data>AAAA</data></dict></dict>\n"
        try expectRefused("media.plist", plist(media),
                          #":4:2: a media record: "part" is 99999999999, outside its range: a part number from 0 to 10000000"#)
    }
}
