import MuEvalWire
import OrderedCollections
import WireProtocol
import XCTest

/// PlistValue → WireEncoder → WireDecoder → TypedJSON.decode gives back the value.
final class RoundTripTests: XCTestCase {
    let everything: OrderedDictionary<String, PlistValue> = [
        "class": .string("RoundTrip"),
        "timestamp": .date(1_298_155_386.123456),
        "seq": .integer(.max),
        "string": .string("ünïcödé 😀 中文 <&> \"quotes\" 'apostrophes' ]]> \\ \t\n\r\u{1}\u{1F}\u{7F}  "),
        "empty string": .string(""),
        "whitespace": .string("  \n  "),
        "$dollar": .string("$"),
        "$$double": .integer(2),
        "$date": .date(0),
        "integers": .array([.integer(0), .integer(-1), .integer(.min), .integer(1 << 53)]),
        "reals": .array([.real(0), .real(-0.0), .real(1), .real(0.1), .real(-2.5e-300), .real(1.7976931348623157e308),
                         .real(.leastNonzeroMagnitude), .real(1e20), .real(.infinity), .real(-.infinity)]),
        "bools": .array([.bool(true), .bool(false)]),
        "dates": .array([.date(-1.5), .date(0.000001), .date(1_600_000_000.5), .date(-62_135_596_800),
                         .date(253_402_300_799), .date(1_298_155_386.000001)]),
        "data": .array([.data([]), .data([0]), .data(Array(0...255)), .data(Array(0...255))]),
        "empty array": .array([]),
        "empty dict": .dict([:]),
        "nested": .dict(["a": .array([.dict(["b": .array([.array([.string("deep")])])])]), "": .string("empty key")]),
    ]

    func testEventForm() throws {
        try assertRoundTrip(WireEncoder.event(everything))
    }

    /// A document (what `export --format plist` writes) has Apple's whole-second dates, rounded down;
    /// every other value is kept. The wire form above keeps the fractions.
    func testPlistDocument() throws {
        let document = WireEncoder.plistDocument(.dict(everything))
        XCTAssertTrue(String(decoding: document, as: UTF8.self).contains("<date>1970-01-01T00:00:00Z</date>"))
        XCTAssertFalse(String(decoding: document, as: UTF8.self).contains(".123456Z"))
        guard case .dict(let whole) = Self.wholeSeconds(.dict(everything)) else { return XCTFail() }
        try assertRoundTrip(document, expecting: whole)
    }

    private static func wholeSeconds(_ value: PlistValue) -> PlistValue {
        switch value {
        case .date(let t): .date(t.rounded(.down))
        case .array(let items): .array(items.map(wholeSeconds))
        case .dict(let dict): .dict(dict.mapValues(wholeSeconds))
        default: value
        }
    }

    func testTypedJSONEncodeMatchesTheDecoder() throws {
        let event = try decodeOne(WireEncoder.event(everything))
        let (json, blobs) = TypedJSON.encode(.dict(everything))
        XCTAssertEqual(String(decoding: json, as: UTF8.self), String(decoding: event.payload, as: UTF8.self))
        XCTAssertEqual(blobs, event.blobs)
        XCTAssertEqual(blobs.count, 3, "identical data is one blob")
        XCTAssertEqual(try TypedJSON.decode(json, blob: blobLookup(blobs)), .dict(everything))
    }

    func testNaNSurvives() throws {
        let event = try decodeOne(WireEncoder.event(["class": .string("N"), "v": .real(.nan)]))
        XCTAssertEqual(String(decoding: event.payload, as: UTF8.self), #"{"class":"N","v":{"$real":"nan"}}"#)
        guard case .dict(let dict) = try TypedJSON.decode(event.payload, blob: blobLookup([])),
              case .real(let value)? = dict["v"] else { return XCTFail() }
        XCTAssertTrue(value.isNaN)
    }

    func testTypedJSONReaderRejectsBadInput() {
        for bad in [#"{"a":1"#, #"{"$x":1}"#, #"{"a":1,"$date":"2011-02-19T22:43:06Z"}"#, #"{"a":1,"a":2}"#,
                    #"{"$date":"yesterday"}"#, #"{"$data":"00","$size":1}"#, #"[1,]"#, "nul", #""\ud800""#,
                    "99999999999999999999", "1 2", #"{"$real":"1"}"#] {
            XCTAssertThrowsError(try TypedJSON.decode(Array(bad.utf8), blob: blobLookup([])), bad)
        }
        XCTAssertEqual(try TypedJSON.decode(Array(#" { "a" : [ 1 , 2.0 , "\u00e9\ud83d\ude00\n" ] } "#.utf8),
                                            blob: blobLookup([])),
                       .dict(["a": .array([.integer(1), .real(2), .string("é😀\n")])]))
    }

    private func decodeOne(_ bytes: [UInt8]) throws -> WireEvent {
        let results = decodeAll(bytes)
        guard results.count == 1, case .success(.event(let event)) = results[0] else {
            throw TestFailure("expected one event, got \(results)")
        }
        return event
    }

    private func assertRoundTrip(_ bytes: [UInt8], expecting expected: OrderedDictionary<String, PlistValue>? = nil,
                                 file: StaticString = #filePath, line: UInt = #line) throws {
        let expected = expected ?? everything
        let event = try decodeOne(bytes)
        XCTAssertEqual(event.eventClass, "RoundTrip", file: file, line: line)
        XCTAssertEqual(event.seq, .max, file: file, line: line)
        guard case .date(let timestamp)? = expected["timestamp"] else { return XCTFail("no timestamp", file: file, line: line) }
        XCTAssertEqual(event.timestamp, timestamp, file: file, line: line)
        let decoded = try TypedJSON.decode(event.payload, blob: blobLookup(event.blobs))
        XCTAssertEqual(decoded, .dict(expected), file: file, line: line)
        // Byte-by-byte feeding gives the same event.
        XCTAssertEqual(decodeAll(bytes, chunkSize: 1), [.success(.event(event))], file: file, line: line)
    }
}
