import MuEvalWire
import WireProtocol
import XCTest

/// Each plist value type, decoded from an `<event>` into typed JSON.
final class ValueDecodingTests: XCTestCase {
    func testStrings() throws {
        XCTAssertEqual(try payload("<key>v</key><string>hello world</string>"), json(#""hello world""#))
        XCTAssertEqual(try payload("<key>v</key><string/>"), json(#""""#))
        XCTAssertEqual(try payload("<key>v</key><string></string>"), json(#""""#))
        // Whitespace is kept exactly.
        XCTAssertEqual(try payload("<key>v</key><string>  two\n\tlines </string>"), json(#""  two\n\tlines ""#))
        // Non-ASCII UTF-8 passes through; quotes, backslashes and control characters are escaped for JSON.
        XCTAssertEqual(try payload("<key>v</key><string>café ✓ 😀 \"q\" back\\slash</string>"),
                       json(#""café ✓ 😀 \"q\" back\\slash""#))
        XCTAssertEqual(try payload("<key>v</key><string>a&#1;b&#31;c\r</string>"), json(#""a\u0001b\u001fc\r""#))
    }

    func testIntegers() throws {
        XCTAssertEqual(try payload("<key>v</key><integer>0</integer>"), json("0"))
        XCTAssertEqual(try payload("<key>v</key><integer>-42</integer>"), json("-42"))
        XCTAssertEqual(try payload("<key>v</key><integer>+7</integer>"), json("7"))
        XCTAssertEqual(try payload("<key>v</key><integer> 12 </integer>"), json("12"))
        XCTAssertEqual(try payload("<key>v</key><integer>9223372036854775807</integer>"), json("9223372036854775807"))
        XCTAssertEqual(try payload("<key>v</key><integer>-9223372036854775808</integer>"), json("-9223372036854775808"))
    }

    func testReals() throws {
        XCTAssertEqual(try payload("<key>v</key><real>1</real>"), json("1.0"))
        XCTAssertEqual(try payload("<key>v</key><real>2.5</real>"), json("2.5"))
        XCTAssertEqual(try payload("<key>v</key><real>-0.1</real>"), json("-0.1"))
        XCTAssertEqual(try payload("<key>v</key><real>.5</real>"), json("0.5"))
        XCTAssertEqual(try payload("<key>v</key><real>6.02E23</real>"), json("6.02e+23"))
        XCTAssertEqual(try payload("<key>v</key><real>1e-7</real>"), json("1e-07"))
        XCTAssertEqual(try payload("<key>v</key><real>nan</real>"), json(#"{"$real":"nan"}"#))
        XCTAssertEqual(try payload("<key>v</key><real>inf</real>"), json(#"{"$real":"inf"}"#))
        XCTAssertEqual(try payload("<key>v</key><real>-inf</real>"), json(#"{"$real":"-inf"}"#))
        XCTAssertEqual(try payload("<key>v</key><real>+infinity</real>"), json(#"{"$real":"inf"}"#))
    }

    func testRealsReadBackAsTheSameDouble() throws {
        for value in [0.1, 1.0 / 3.0, 1e300, .leastNonzeroMagnitude, -123456.789, 1e16, 2.2250738585072014e-308] {
            let event = try decodeEvent("<event><key>class</key><string>T</string><key>v</key><real>\(value)</real></event>")
            let tree = try TypedJSON.decode(event.payload, blob: blobLookup([]))
            guard case .dict(let dict) = tree, case .real(let decoded)? = dict["v"] else {
                return XCTFail("not a real: \(tree)")
            }
            XCTAssertEqual(decoded, value)
        }
    }

    /// The decoder computes short decimals itself (Clinger's fast path) and hands the rest to strtod:
    /// both must give the double that Swift's own parser gives, bit for bit.
    func testDecimalRealsParseAsSwiftParsesThem() throws {
        var generator = SystemRandomNumberGenerator()
        var texts = ["0", "-0", "-0.0", ".5", "5.", "1e22", "1e23", "9007199254740993", "9007199254740992.5",
                     "1298155386.037", "0.000000000000000000001", "123456789012345678901234567890", "1e-22", "4.9e-324",
                     "1.7976931348623157e308", "2.2250738585072011e-308", "+3.25E+2", "7e0000000000000001"]
        for _ in 0..<2_000 {
            let digits = String((0..<Int.random(in: 1...20, using: &generator)).map { _ in "0123456789".randomElement(using: &generator)! })
            let point = Int.random(in: 0...digits.count, using: &generator)
            var text = String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
            if Bool.random(using: &generator) { text += "e\(Int.random(in: -30...30, using: &generator))" }
            texts.append(Bool.random(using: &generator) ? "-" + text : text)
        }
        for text in texts {
            guard text != "." else { continue }
            let event = try decodeEvent("<event><key>class</key><string>T</string><key>v</key><real>\(text)</real></event>")
            let tree = try TypedJSON.decode(event.payload, blob: blobLookup([]))
            guard case .dict(let dict) = tree, case .real(let decoded)? = dict["v"], let expected = Double(text) else {
                return XCTFail("\(text): not a real")
            }
            XCTAssertEqual(decoded.bitPattern, expected.bitPattern, text)
        }
    }

    func testBooleans() throws {
        XCTAssertEqual(try payload("<key>v</key><true/>"), json("true"))
        XCTAssertEqual(try payload("<key>v</key><false/>"), json("false"))
        XCTAssertEqual(try payload("<key>v</key><true></true>"), json("true"))
    }

    func testDates() throws {
        XCTAssertEqual(try payload("<key>v</key><date>2011-02-19T22:43:06Z</date>"),
                       json(#"{"$date":"2011-02-19T22:43:06Z"}"#))
        // Offsets are converted to UTC; fractions are kept to the microsecond, trailing zeros trimmed.
        XCTAssertEqual(try payload("<key>v</key><date>2011-02-19T23:43:06+01:00</date>"),
                       json(#"{"$date":"2011-02-19T22:43:06Z"}"#))
        XCTAssertEqual(try payload("<key>v</key><date>2011-02-19T22:43:06.250Z</date>"),
                       json(#"{"$date":"2011-02-19T22:43:06.25Z"}"#))
        XCTAssertEqual(try payload("<key>v</key><date>2000-02-29T00:00:00.123456-05:30</date>"),
                       json(#"{"$date":"2000-02-29T05:30:00.123456Z"}"#))
        XCTAssertEqual(try payload("<key>v</key><date>1969-12-31T23:59:59.5Z</date>"),
                       json(#"{"$date":"1969-12-31T23:59:59.5Z"}"#))
        let event = try decodeEvent("""
            <event><key>class</key><string>T</string><key>timestamp</key><date>1970-01-02T00:00:01.5Z</date></event>
            """)
        XCTAssertEqual(event.timestamp, 86_401.5)
    }

    func testData() throws {
        let event = try decodeEvent("""
            <event><key>class</key><string>T</string>
            <key>a</key><data>aGVs
              bG8=</data>
            <key>b</key><data>aGVsbG8=</data>
            <key>c</key><data></data></event>
            """)
        let hello = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        XCTAssertEqual(String(decoding: event.payload, as: UTF8.self),
                       #"{"class":"T","a":{"$data":"\#(hello)","$size":5},"b":{"$data":"\#(hello)","$size":5},"#
                           + #""c":{"$data":"\#(empty)","$size":0}}"#)
        // The same content is one blob.
        XCTAssertEqual(event.blobs, [Blob(sha256: hello, bytes: Array("hello".utf8)), Blob(sha256: empty, bytes: [])])
    }

    func testContainers() throws {
        XCTAssertEqual(try payload("""
            <key>v</key>
            <array>
              <integer>1</integer>
              <array/>
              <dict/>
              <dict><key>b</key><string>x</string><key>a</key><array><false/></array></dict>
            </array>
            """), json(#"[1,[],{},{"b":"x","a":[false]}]"#))
    }

    func testDollarKeysAreEscaped() throws {
        XCTAssertEqual(try payload("<key>$v</key><integer>1</integer><key>$$w</key><integer>2</integer>"),
                       #"{"class":"T","$$v":1,"$$$w":2}"#)
    }

    func testEventFields() throws {
        let event = try decodeEvent("""
            <event><key>seq</key><integer>41</integer><key>class</key><string>Touch</string>
            <key>sensor</key><string>touch</string><key>timestamp</key><real>1298155386.25</real></event>
            """)
        XCTAssertEqual(event.eventClass, "Touch")
        XCTAssertEqual(event.seq, 41)
        XCTAssertEqual(event.sensor, "touch")
        XCTAssertEqual(event.timestamp, 1_298_155_386.25)
        // The fields stay in the payload too.
        XCTAssertEqual(String(decoding: event.payload, as: UTF8.self),
                       #"{"seq":41,"class":"Touch","sensor":"touch","timestamp":1298155386.25}"#)

        let integerTime = try decodeEvent("""
            <event><key>class</key><string>T</string><key>timestamp</key><integer>10</integer>
            <key>sensor</key><integer>3</integer></event>
            """)
        XCTAssertEqual(integerTime.timestamp, 10)
        XCTAssertNil(integerTime.sensor, "a non-string sensor is not indexed")
        XCTAssertNil(integerTime.seq)
    }
}
