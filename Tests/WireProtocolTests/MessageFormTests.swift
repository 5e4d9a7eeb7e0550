import MuEvalWire
import WireProtocol
import XCTest

/// The top-level messages in both directions.
final class MessageFormTests: XCTestCase {
    /// Thesis Listing 4.4, verbatim.
    func testListing4_4() throws {
        let event = try decodeEvent("""
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
            """)
        XCTAssertEqual(event, WireEvent(
            eventClass: "UserInputEvent", timestamp: 1_298_155_386.0, seq: nil, sensor: nil,
            payload: Array(#"{"class":"UserInputEvent","timestamp":{"$date":"2011-02-19T22:43:06Z"},"x":155,"y":267}"#.utf8),
            blobs: []))
    }

    /// Exactly what Python's plistlib.dumps writes.
    func testPlistlibDocument() throws {
        let document = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>class</key>
            \t<string>ScreenshotEvent</string>
            \t<key>timestamp</key>
            \t<date>2011-02-19T22:43:06Z</date>
            \t<key>seq</key>
            \t<integer>7</integer>
            \t<key>scale</key>
            \t<real>2.5</real>
            \t<key>visible</key>
            \t<true/>
            \t<key>hidden</key>
            \t<false/>
            \t<key>image</key>
            \t<data>
            \tAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEy
            \tMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2Rl
            \tZmdoaWprbG1ub3BxcnN0dXZ3
            \t</data>
            \t<key>touches</key>
            \t<array>
            \t\t<dict>
            \t\t\t<key>x</key>
            \t\t\t<integer>155</integer>
            \t\t\t<key>y</key>
            \t\t\t<integer>267</integer>
            \t\t</dict>
            \t\t<dict>
            \t\t\t<key>x</key>
            \t\t\t<integer>-3</integer>
            \t\t\t<key>y</key>
            \t\t\t<integer>0</integer>
            \t\t</dict>
            \t</array>
            \t<key>meta</key>
            \t<dict>
            \t\t<key>name</key>
            \t\t<string>café &lt;1&gt; &amp; co</string>
            \t\t<key>empty</key>
            \t\t<array/>
            \t</dict>
            </dict>
            </plist>

            """
        let event = try decodeEvent(document)
        XCTAssertEqual(event.eventClass, "ScreenshotEvent")
        XCTAssertEqual(event.timestamp, 1_298_155_386.0)
        XCTAssertEqual(event.seq, 7)
        let image = Array(UInt8(0)..<120)
        XCTAssertEqual(event.blobs.map(\.bytes), [image])
        let sha = event.blobs[0].sha256
        XCTAssertEqual(String(decoding: event.payload, as: UTF8.self), """
            {"class":"ScreenshotEvent","timestamp":{"$date":"2011-02-19T22:43:06Z"},"seq":7,"scale":2.5,\
            "visible":true,"hidden":false,"image":{"$data":"\(sha)","$size":120},\
            "touches":[{"x":155,"y":267},{"x":-3,"y":0}],"meta":{"name":"café <1> & co","empty":[]}}
            """)
        XCTAssertEqual(try TypedJSON.decode(event.payload, blob: blobLookup(event.blobs)), .dict([
            "class": .string("ScreenshotEvent"), "timestamp": .date(1_298_155_386), "seq": .integer(7),
            "scale": .real(2.5), "visible": .bool(true), "hidden": .bool(false), "image": .data(image),
            "touches": .array([.dict(["x": .integer(155), "y": .integer(267)]), .dict(["x": .integer(-3), "y": .integer(0)])]),
            "meta": .dict(["name": .string("café <1> & co"), "empty": .array([])]),
        ]))
    }

    func testPlistMustHoldADict() {
        assertResyncs(#"<plist version="1.0"><array/></plist>"#, [.unexpectedElement])
        assertResyncs("<plist/>", [.unexpectedElement])
    }

    func testHello() {
        let results = decodeAll("""
            <hello><key>protocolVersion</key><integer>1</integer><key>deviceId</key><string>A1B2</string>
            <key>deviceName</key><string>Anna's iPhone</string><key>model</key><string>iPhone3,1</string>
            <key>systemVersion</key><string>4.2.1</string><key>appId</key><string>de.example.app</string>
            <key>appVersion</key><string>1.0</string><key>screenWidth</key><integer>320</integer>
            <key>screenHeight</key><real>480</real><key>screenScale</key><real>2.0</real>
            <key>futureKey</key><dict/></hello>
            """)
        XCTAssertEqual(results, [.success(.hello(DeviceHello(
            deviceId: "A1B2", protocolVersion: 1,
            device: DeviceDescription(name: "Anna's iPhone", model: "iPhone3,1", systemVersion: "4.2.1", appId: "de.example.app",
                                      appVersion: "1.0", screenWidth: 320, screenHeight: 480, screenScale: 2))))])
        XCTAssertEqual(decodeAll("<hello><key>deviceId</key><string>x</string></hello>"),
                       [.success(.hello(DeviceHello(deviceId: "x")))])
    }

    func testHelloErrors() {
        assertResyncs("<hello><key>deviceName</key><string>x</string></hello>", [.missingDeviceId])
        assertResyncs("<hello><key>deviceId</key><string></string></hello>", [.missingDeviceId])
        assertResyncs("<hello><key>deviceId</key><string>x</string><key>screenScale</key><string>2</string></hello>",
                      [.invalidValue])
    }

    func testGoodbye() {
        XCTAssertEqual(decodeAll("<goodbye/> <goodbye></goodbye>\n<goodbye> </goodbye>"),
                       [.success(.goodbye), .success(.goodbye), .success(.goodbye)])
    }

    func testReplies() {
        XCTAssertEqual(decodeAll("""
            <welcome><key>session</key><string>s-1</string><key>sensors</key><array><string>touch</string><string>gps</string></array></welcome>
            <welcome><key>session</key><string>s-2</string></welcome>
            <ack><key>seq</key><integer>41</integer></ack>
            <error><key>reason</key><string>bad</string><key>seq</key><integer>3</integer></error>
            <error><key>reason</key><string>worse</string></error>
            """), [
            .success(.welcome(Welcome(sessionId: "s-1", sensors: ["touch", "gps"]))),
            .success(.welcome(Welcome(sessionId: "s-2", sensors: []))),
            .success(.ack(seq: 41)),
            .success(.error(WireReplyError(reason: "bad", seq: 3))),
            .success(.error(WireReplyError(reason: "worse"))),
        ])
        assertResyncs("<ack/>", [.invalidValue])
        assertResyncs("<welcome><key>session</key><string>s</string><key>sensors</key><array><integer>1</integer></array></welcome>",
                      [.invalidValue])
        assertResyncs("<welcome><key>session</key><string>s</string><key>tasks</key><array><dict><key>name</key><string>t</string></dict></array></welcome>",
                      [.invalidValue])
        assertResyncs("<welcome><key>session</key><string>s</string><key>questionnaire</key><integer>1</integer></welcome>",
                      [.invalidValue])
    }

    func testEncoderOutputDecodes() {
        let hello = DeviceHello(deviceId: "dev <1>", protocolVersion: 1,
                                device: DeviceDescription(name: "A & B", model: "m", systemVersion: "s", appId: "a", appVersion: "v",
                                                          screenWidth: 320, screenHeight: 480.5, screenScale: 2))
        let invited = DeviceHello(deviceId: "phone", invitation: "2345abcdef")
        let welcome = Welcome(sessionId: "session-1", sensors: ["touch"])
        let studyWelcome = Welcome(sessionId: "s-2", sensors: [], tasks: [
            WelcomeTask(name: "add <note>", instructions: "Add a note & save it", timeLimit: 120, order: 1),
            WelcomeTask(name: "share", order: 2),
        ], questionnaire: "https://lab.example/i/2345abcdef")
        let error = WireReplyError(reason: "class missing", seq: 9)
        let stream = WireEncoder.hello(hello) + WireEncoder.hello(invited) + WireEncoder.welcome(welcome)
            + WireEncoder.welcome(studyWelcome) + WireEncoder.ack(seq: -5)
            + WireEncoder.error(error) + WireEncoder.error(WireReplyError(reason: "r")) + WireEncoder.goodbye()
        XCTAssertEqual(decodeAll(stream), [
            .success(.hello(hello)), .success(.hello(invited)), .success(.welcome(welcome)), .success(.welcome(studyWelcome)),
            .success(.ack(seq: -5)), .success(.error(error)),
            .success(.error(WireReplyError(reason: "r"))), .success(.goodbye),
        ])
    }

    func testEncoderForms() {
        XCTAssertEqual(String(decoding: WireEncoder.ack(seq: 41), as: UTF8.self),
                       "<ack><key>seq</key><integer>41</integer></ack>\n")
        XCTAssertEqual(String(decoding: WireEncoder.goodbye(), as: UTF8.self), "<goodbye/>\n")
        XCTAssertEqual(String(decoding: WireEncoder.event(["class": .string("A<B"), "t": .date(0.5), "r": .real(1)]),
                              as: UTF8.self),
                       "<event><key>class</key><string>A&lt;B</string><key>t</key><date>1970-01-01T00:00:00.5Z</date>"
                           + "<key>r</key><real>1.0</real></event>\n")
        XCTAssertEqual(String(decoding: WireEncoder.plistDocument(.dict(["a": .array([.integer(1), .data([1, 2, 3])]),
                                                                         "e": .dict([:])])),
                              as: UTF8.self), """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>a</key>
            \t<array>
            \t\t<integer>1</integer>
            \t\t<data>AQID</data>
            \t</array>
            \t<key>e</key>
            \t<dict/>
            </dict>
            </plist>

            """)
    }

    func testUnknownMessage() {
        assertResyncs("<ping><key>a</key><integer>1</integer></ping>", [.unexpectedElement])
        assertResyncs("<ping/>", [.unexpectedElement])
    }
}
