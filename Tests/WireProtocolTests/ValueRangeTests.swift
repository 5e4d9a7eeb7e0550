import MuEvalWire
import OrderedCollections
import Testing
import WireProtocol

/// Values with a meaning have a range (docs/PROTOCOL.md, "Value ranges"): the decoder refuses an event
/// or chunk with one outside it, naming the field and the range, and decodes the next message.
struct ValueRangeTests {
    let ranges = ValueRanges.default
    static let absurd: [Double] = [.nan, .infinity, -.infinity, 1e300, -1e300, 1e18]

    @Test func singleValues() {
        for value in Self.absurd {
            #expect(!ranges.isPlausible(time: value), "\(value)")
            #expect(!ranges.isPlausible(coordinate: value), "\(value)")
            #expect(!ranges.isPlausible(size: value), "\(value)")
            #expect(!ranges.isPlausible(duration: value), "\(value)")
            #expect(ranges.coordinate(value) == nil && ranges.time(value) == nil, "\(value)")
        }
        #expect(ranges.isPlausible(time: 1_298_155_386.25))
        #expect(ranges.isPlausible(time: 0), "a phone whose clock was lost says 1970")
        #expect(!ranges.isPlausible(time: -1))
        #expect(!ranges.isPlausible(time: 4_102_444_800.001), "after 2100")
        #expect(ranges.isPlausible(coordinate: -120.5) && ranges.isPlausible(coordinate: 1_000_000))
        #expect(!ranges.isPlausible(coordinate: 1_000_000.5))
        #expect(ranges.isPlausible(size: 0) && !ranges.isPlausible(size: -1))
        #expect(ranges.isPlausible(duration: 0) && !ranges.isPlausible(duration: -0.001))
        #expect(!ranges.isPlausible(duration: 400 * 86_400), "more than a year")
        #expect(ranges.isPlausible(part: 0) && !ranges.isPlausible(part: -1) && !ranges.isPlausible(part: .max))
        #expect(ranges.duration(2.5) == 2.5 && ranges.size(nil) == nil)
    }

    @Test func problemsNameTheFieldTheValueAndTheRange() {
        #expect(ranges.problem(timestamp: 1e18)?.description
            == #""timestamp" is 1e+18, outside its range: a time from 1970-01-01T00:00:00Z to 2100-01-01T00:00:00Z"#)
        #expect(ranges.problem(timestamp: 1_700_000_000) == nil)
        let event: PlistValue = .dict([
            "class": .string("UserInterfaceEvent"), "timestamp": .real(1_700_000_000),
            "uiState": .dict(["frame": .array([.integer(0), .integer(0), .real(320), .real(480)]),
                              "subviews": .array([.dict(["className": .string("UIButton")]),
                                                  .dict(["frame": .dict(["x": .real(1), "y": .real(2), "width": .real(-5), "height": .real(3)])])])]),
        ])
        let problem = ranges.problem(inEvent: event)
        #expect(problem?.field == "uiState.subviews[1].frame.width")
        #expect(problem?.quantity == .size)
        #expect(problem?.description == #""uiState.subviews[1].frame.width" is -5, outside its range: a size from 0 to 1000000 points"#)
    }

    @Test func everyRangedPlaceIsChecked() {
        func problem(_ fields: OrderedDictionary<String, PlistValue>) -> String? {
            var event: OrderedDictionary<String, PlistValue> = ["class": .string("T")]
            event.merge(fields) { kept, _ in kept }
            return ranges.problem(inEvent: event)?.field
        }
        #expect(problem(["x": .real(.nan)]) == "x")
        #expect(problem(["y": .integer(.max)]) == "y")
        #expect(problem(["timestamp": .date(-86_400)]) == "timestamp")
        #expect(problem(["frame": .array([.real(1), .real(2), .real(3), .real(.infinity)])]) == "frame[3]")
        #expect(problem(["path": .array([.array([.real(1), .real(2)]), .array([.real(1e300), .real(2)])])]) == "path[1][0]")
        #expect(problem(["target": .dict(["frame": .dict(["x": .real(-.infinity)])])]) == "target.frame.x")
        #expect(problem(["duration": .real(-1)]) == "duration")
        // Not ranged: other keys, strings, a nested "timestamp", a date under "x", the fifth element of a frame.
        #expect(problem(["v": .real(.nan), "x": .string("nan"), "inner": .dict(["timestamp": .real(1e18)]),
                         "frame": .array([.real(1), .real(2), .real(3), .real(4), .real(.nan)]), "y": .date(-1e12)]) == nil)
    }

    @Test func decoderRefusesAnAbsurdEventNamingFieldAndRangeThenDecodesTheNext() {
        let bad = "<event><key>class</key><string>UserInputEvent</string><key>seq</key><integer>4</integer>"
            + "<key>timestamp</key><real>1e18</real><key>x</key><real>10</real></event>"
        let good = "<event><key>class</key><string>UserInputEvent</string><key>seq</key><integer>5</integer>"
            + "<key>timestamp</key><real>1700000000.5</real><key>x</key><real>10</real></event>"
        for chunkSize in [nil, 1, 13] {
            let results = decodeAll(bad + good, chunkSize: chunkSize)
            guard results.count == 2, case .failure(let error) = results[0], case .success(.event(let event)) = results[1] else {
                Issue.record("expected an error then an event: \(results)")
                return
            }
            #expect(error.kind == .invalidValue)
            #expect(error.seq == 4)
            #expect(error.message == #""timestamp" is 1e+18, outside its range: a time from 1970-01-01T00:00:00Z to 2100-01-01T00:00:00Z"#)
            #expect(event.seq == 5)
        }
    }

    @Test func decoderNamesTheNestedPath() {
        let xml = "<event><key>class</key><string>UserInterfaceEvent</string><key>uiState</key><dict><key>subviews</key><array>"
            + "<dict><key>frame</key><array><real>0</real><real>0</real><real>nan</real><real>1</real></array></dict>"
            + "</array></dict></event>"
        let results = decodeAll(xml)
        guard case .failure(let error)? = results.first else {
            Issue.record("expected an error: \(results)")
            return
        }
        #expect(error.message == #""uiState.subviews[0].frame[2]" is nan, outside its range: a size from 0 to 1000000 points"#)
    }

    @Test func theThesisFormAndADateTimestampStillDecode() throws {
        let event = try decodeEvent("""
            <event><key>class</key><string>UserInputEvent</string><key>timestamp</key><date>2011-02-19T22:43:06Z</date>\
            <key>x</key><integer>155</integer><key>y</key><integer>267</integer><key>v</key><real>nan</real></event>
            """)
        #expect(event.timestamp == 1_298_155_386)
    }

    @Test func configuredRangesApply() {
        let narrow = WireLimits(valueRanges: ValueRanges(times: 1_600_000_000...1_800_000_000, maxCoordinate: 100))
        let results = decodeAll("<event><key>class</key><string>T</string><key>timestamp</key><integer>1000</integer></event>"
            + "<event><key>class</key><string>T</string><key>x</key><integer>101</integer></event>", limits: narrow)
        #expect(summary(results) == ["invalidValue", "invalidValue"])
        guard case .failure(let error)? = results.last else { return }
        #expect(error.message == #""x" is 101, outside its range: a coordinate from -100 to 100 points"#)
    }

    @Test func mediaPartStartAndDurationAreChecked() {
        func media(part: String = "0", start: String = "1700000000.25", duration: String = "1.0") -> String {
            "<media><key>stream</key><string>voice-1</string><key>contentType</key><string>audio/wav</string>"
                + "<key>part</key><integer>\(part)</integer><key>start</key><real>\(start)</real>"
                + "<key>duration</key><real>\(duration)</real><key>seq</key><integer>9</integer><key>data</key><data>AAAA</data></media>"
        }
        #expect(summary(decodeAll(media())) == ["media voice-1 0"])
        for (xml, expected) in [
            (media(part: "9223372036854775807"), #"<media> "part" is 9.223372036854776e+18, outside its range: a part number from 0 to 10000000"#),
            (media(start: "1e18"), #"<media> "start" is 1e+18, outside its range: a time from 1970-01-01T00:00:00Z to 2100-01-01T00:00:00Z"#),
            (media(duration: "1e300"), #"<media> "duration" is 1e+300, outside its range: a duration from 0 to 31622400 seconds"#),
        ] {
            let results = decodeAll(xml + media(part: "1"))
            guard results.count == 2, case .failure(let error) = results[0] else {
                Issue.record("expected an error then the next chunk: \(results)")
                continue
            }
            #expect(error.message == expected)
            #expect(error.seq == 9)
            #expect(summary([results[1]]) == ["media voice-1 1"])
        }
    }

    @Test func aHellosScreenSizeAndScaleAreChecked() {
        func hello(_ key: String, _ value: String) -> String {
            "<hello><key>deviceId</key><string>phone</string><key>\(key)</key><real>\(value)</real></hello>"
        }
        #expect(summary(decodeAll(hello("screenWidth", "320") + hello("screenScale", "3"))) == ["hello phone", "hello phone"])
        let results = decodeAll(hello("screenHeight", "nan") + hello("screenScale", "0"))
        guard results.count == 2, case .failure(let height) = results[0], case .failure(let scale) = results[1] else {
            Issue.record("expected two errors: \(results)")
            return
        }
        #expect(height.message == #"<hello> "screenHeight" is nan, outside its range: a size from 0 to 1000000 points"#)
        #expect(scale.message == #"<hello> "screenScale" is 0, outside its range: a scale from 0.1 to 100 pixels per point"#)
    }

    @Test func eventsMadeFromFieldsAreCheckedToo() {
        #expect(throws: WireError(.invalidValue, #""x" is inf, outside its range: a coordinate from -1000000 to 1000000 points"#, seq: 3)) {
            try WireEvent(fields: ["class": .string("UserInputEvent"), "seq": .integer(3), "x": .real(.infinity)])
        }
        #expect(throws: Never.self) { try WireEvent(fields: ["class": .string("UserInputEvent"), "x": .real(12)]) }
    }
}
