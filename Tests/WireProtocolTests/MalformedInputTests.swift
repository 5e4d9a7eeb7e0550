import MuEvalWire
import WireProtocol
import XCTest

/// Every kind of bad input gives the right error, and the next message still decodes.
final class MalformedInputTests: XCTestCase {
    let cls = "<key>class</key><string>T</string>"

    func testInvalidValues() {
        for value in [
            "<integer>12x</integer>", "<integer></integer>", "<integer>9223372036854775808</integer>",
            "<integer>-9223372036854775809</integer>", "<integer>1.5</integer>", "<integer>0x10</integer>",
            "<real>1.2.3</real>", "<real>0x1p3</real>", "<real>e5</real>", "<real></real>", "<real>1e</real>",
            "<date>2011-02-30T00:00:00Z</date>", "<date>2011-02-19 22:43:06Z</date>", "<date>2011-02-19T22:43:06</date>",
            "<date>2011-02-19T24:00:00Z</date>", "<date>2011-02-19T22:43:06.Z</date>", "<date>2011-13-01T00:00:00Z</date>",
            "<data>abc</data>", "<data>ab=c</data>", "<data>a*==</data>", "<data>YQ===</data>", "<data>Y===</data>",
            "<true>yes</true>",
        ] {
            assertResyncs("<event>\(cls)<key>v</key>\(value)</event>", [.invalidValue])
        }
    }

    func testErrorCarriesSeq() {
        let error = decodeError("<event><key>seq</key><integer>5</integer>\(cls)<key>v</key><integer>zz</integer></event>")
        XCTAssertEqual(error?.kind, .invalidValue)
        XCTAssertEqual(error?.seq, 5)
        XCTAssertEqual(error?.message.contains("(at v)"), true, error?.message ?? "")
        let nested = decodeError("<event>\(cls)<key>a</key><array><dict/><dict><key>b</key><real>x</real></dict></array></event>")
        XCTAssertEqual(nested?.message.hasSuffix("(at a[1].b)"), true, nested?.message ?? "")
        XCTAssertNil(nested?.seq)
    }

    func testAMessageCutOffByTheNextIsRefusedWithItsSeqAndTheNextIsRead() {
        let cut = "<event>\(cls)<key>seq</key><integer>1</integer><key>x</key><integer>15"
        let next = "<event>\(cls)<key>seq</key><integer>2</integer></event>"
        for chunkSize in [nil, 1, 7] {
            let results = decodeAll(cut + next, chunkSize: chunkSize)
            XCTAssertEqual(results.count, 2, "\(results)")
            guard results.count == 2, case .failure(let error) = results[0], case .success(.event(let event)) = results[1] else {
                return XCTFail("expected an error, then the event: \(results)")
            }
            XCTAssertEqual(error.seq, 1, "the cut-off event is named")
            XCTAssertEqual(event.seq, 2, "the next event is read on its own")
        }
    }

    func testEventFieldTypes() {
        assertResyncs("<event><key>x</key><integer>1</integer></event>", [.missingClass])
        assertResyncs("<event/>", [.missingClass])
        assertResyncs("<event><key>class</key><integer>1</integer></event>", [.invalidValue])
        assertResyncs("<event>\(cls)<key>timestamp</key><string>now</string></event>", [.invalidValue])
        assertResyncs("<event>\(cls)<key>timestamp</key><real>nan</real></event>", [.invalidValue])
        assertResyncs("<event>\(cls)<key>seq</key><real>1</real></event>", [.invalidValue])
    }

    func testDuplicateKeys() {
        assertResyncs("<event>\(cls)<key>a</key><true/><key>a</key><false/></event>", [.duplicateKey])
        assertResyncs("<event>\(cls)<key>class</key><string>U</string></event>", [.duplicateKey])
        assertResyncs("<event>\(cls)<key>d</key><dict><key>a</key><true/><key>a</key><true/></dict></event>", [.duplicateKey])
        // Large dicts take the hashed path.
        let many = (0..<200).map { "<key>k\($0)</key><integer>\($0)</integer>" }.joined()
        assertResyncs("<event>\(cls)\(many)<key>k150</key><true/></event>", [.duplicateKey])
        // The same key in different dicts is fine.
        XCTAssertEqual(try payload("<key>a</key><dict><key>a</key><dict><key>a</key><true/></dict></dict>\(many)")
            .hasPrefix(#"{"class":"T","a":{"a":{"a":true}},"k0":0"#), true)
    }

    func testStructure() {
        // Misnested: the frame ends at the root's closing tag.
        assertResyncs("<event>\(cls)<key>a</key><string>x</event>", [.malformedXML])
        assertResyncs("<event>\(cls)<key>a</key><string>x</strin></event>", [.malformedXML])
        // An extra closing tag ends the frame early; the rest is junk.
        assertResyncs("<event>\(cls)<key>a</key><string>x</string></string></event>", [.malformedXML, .malformedXML])
        assertResyncs("<event>\(cls)<key>a</key></event>", [.malformedXML])
        assertResyncs("<event>\(cls)<key>a</key><key>b</key><true/></event>", [.unexpectedElement])
        assertResyncs("<event>\(cls)<string>x</string></event>", [.unexpectedElement])
        assertResyncs("<event>\(cls)text<key>a</key><true/></event>", [.malformedXML])
        assertResyncs("<event>\(cls)<key>a</key><b>1</b></event>", [.unexpectedElement])
        assertResyncs("<event>\(cls)<key>a</key><string>x<b/></string></event>", [.malformedXML])
        assertResyncs("<event>\(cls)<key>a</key><string>x & y</string></event>", [.malformedXML])
        assertResyncs("<event>\(cls)<key>a</key><array><key>x</key></array></event>", [.unexpectedElement])
    }

    func testBadTagSyntaxAbandonsTheFrame() {
        assertResyncs("<event><key\u{01}>class</key></event>", [.malformedXML])
        assertResyncs("<event><key a=\"<\">class</key></event>", [.malformedXML])
        assertResyncs("<event>< key>class</key></event>", [.malformedXML])
    }

    func testJunkBetweenMessages() {
        assertResyncs("hello world\n", [.malformedXML])
        assertResyncs("</event>", [.malformedXML])
        assertResyncs("< event>", [.malformedXML])
        assertResyncs("<!bogus>", [.malformedXML])
        // One error per run of junk, however it is split, and again after a message.
        XCTAssertEqual(summary(decodeAll("abc < def </x> ghi\n" + goodEvent + "junk" + goodEvent, chunkSize: 3)),
                       ["malformedXML", "event Good", "malformedXML", "event Good"])
    }

    func testRandomBytes() {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for round in 0..<20 {
            var junk: [UInt8] = []
            for _ in 0..<3_000 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                junk.append(UInt8(truncatingIfNeeded: state >> 56))
            }
            let results = decodeAll(junk + Array(goodEvent.utf8))
            XCTAssertEqual(summary(results).last, "event Good", "round \(round)")
            XCTAssertGreaterThanOrEqual(results.count, 2)
            for case .failure(let error) in results { XCTAssertFalse(error.isFatal) }
        }
    }

    func testTooMuchJunkIsFatal() {
        var decoder = WireDecoder()
        decoder.append(Array(repeating: UInt8(ascii: "x"), count: 40_000))
        XCTAssertEqual(decoder.next().map { summary([$0]) }, ["malformedXML"])
        XCTAssertNil(decoder.next())
        decoder.append(Array(repeating: UInt8(ascii: "y"), count: 40_000) + Array(goodEvent.utf8))
        guard case .failure(let error)? = decoder.next() else { return XCTFail("expected notXML") }
        XCTAssertEqual(error.kind, .notXML)
        XCTAssertTrue(error.isFatal)
        XCTAssertNil(decoder.next(), "nothing after a fatal error")
        decoder.append(Array(goodEvent.utf8))
        XCTAssertNil(decoder.next())
        XCTAssertEqual(decoder.bufferedByteCount, 0)
        // Junk separated by valid messages never adds up.
        var chunked: [UInt8] = []
        for _ in 0..<5 { chunked += Array(repeating: UInt8(ascii: "z"), count: 30_000) + Array(goodEvent.utf8) }
        XCTAssertEqual(summary(decodeAll(chunked)), Array(repeating: ["malformedXML", "event Good"], count: 5).flatMap { $0 })
    }

    func testUnknownEntity() {
        assertResyncs("<event>\(cls)<key>v</key><string>&nbsp;</string></event>", [.unknownEntity])
        assertResyncs("<event><key>&foo;</key><string>x</string></event>", [.unknownEntity])
    }

    func testBillionLaughs() {
        let lol = """
            <?xml version="1.0"?>
            <!DOCTYPE plist [
              <!ENTITY lol "lol">
              <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
              <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
              <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
              <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3; ]>">
            ]>
            <plist version="1.0"><dict><key>class</key><string>&lol9;</string></dict></plist>

            """
        assertResyncs(lol, [.dtdRejected, .unknownEntity])
    }

    func testExternalEntity() {
        assertResyncs("""
            <!DOCTYPE event [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
            <event><key>class</key><string>&xxe;</string></event>
            """, [.dtdRejected, .unknownEntity])
    }

    func testDeepNestingIsCheap() {
        let depth = 10_000
        let deep = "<event>\(cls)<key>v</key>" + String(repeating: "<array>", count: depth)
            + String(repeating: "</array>", count: depth) + "</event>"
        let start = ContinuousClock.now
        assertResyncs(deep, [.nestingTooDeep])
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(5))
        // Never closed: skipped until the root's closing tag.
        assertResyncs("<event>\(cls)<key>v</key>" + String(repeating: "<array>", count: depth) + "</event>",
                      [.nestingTooDeep])
    }

    func testValueDepthLimit() throws {
        let limits = WireLimits(maxMessageBytes: 1 << 20, maxDepth: 4)
        func nested(_ arrays: Int) -> String {
            "<event>\(cls)<key>v</key>" + String(repeating: "<array>", count: arrays)
                + String(repeating: "</array>", count: arrays) + "</event>"
        }
        XCTAssertEqual(summary(decodeAll(nested(3), limits: limits)), ["event T"], "depth 4 is allowed")
        assertResyncs(nested(4), [.nestingTooDeep], limits: limits)
        assertResyncs("<event>\(cls)<key>v</key><dict><key>a</key><dict><key>b</key><dict><key>c</key><dict/></dict></dict></dict></event>",
                      [.nestingTooDeep], limits: limits)
    }

    func testMessageTooLarge() {
        let limits = WireLimits(maxMessageBytes: 1_024)
        let big = "<event>\(cls)<key>v</key><string>" + String(repeating: "x", count: 5_000) + "</string></event>"
        assertResyncs(big, [.messageTooLarge], limits: limits)
        assertResyncs(String(repeating: " ", count: 5_000), [], limits: limits)
        // Fed in pieces, the oversized message is dropped as it streams past.
        var decoder = WireDecoder(limits: limits)
        var peak = 0
        var results: [Result<WireMessage, WireError>] = []
        let bytes = Array((big + goodEvent).utf8)
        for start in stride(from: 0, to: bytes.count, by: 100) {
            decoder.append(bytes[start..<min(start + 100, bytes.count)])
            peak = max(peak, decoder.bufferedByteCount)
            while let result = decoder.next() { results.append(result) }
        }
        XCTAssertEqual(summary(results), ["messageTooLarge", "event Good"])
        XCTAssertLessThan(peak, 1_024 + 200)
        // Exactly at the limit is fine.
        let head = "<event>\(cls)<key>v</key><string>"
        let tail = "</string></event>"
        let padded = head + String(repeating: "y", count: 1_024 - head.utf8.count - tail.utf8.count) + tail
        XCTAssertEqual(padded.utf8.count, 1_024)
        XCTAssertEqual(summary(decodeAll(padded, limits: limits)), ["event T"])
        XCTAssertEqual(summary(decodeAll(padded + " ", chunkSize: 10, limits: limits)), ["event T"])
    }

    func testErrorDescriptions() {
        let error = WireError(.messageTooLarge, "message exceeds the 16777216-byte limit", seq: 3)
        XCTAssertEqual(error.description, "messageTooLarge: message exceeds the 16777216-byte limit (seq 3)")
        let tooLarge = decodeAll("<event>" + String(repeating: " ", count: 100) + "</event>", limits: WireLimits(maxMessageBytes: 50))
        guard case .failure(let e)? = tooLarge.first else { return XCTFail() }
        XCTAssertEqual(e.message, "message exceeds the 50-byte limit; it was skipped")
    }
}
