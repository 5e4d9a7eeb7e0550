import WireProtocol
import XCTest

/// Framing across appends: any split, many messages per append, what lies between messages.
final class StreamingTests: XCTestCase {
    let stream = Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <hello><key>deviceId</key><string>dev-1</string></hello>
        <!-- a comment between messages -->
        <event><key>class</key><string>A</string><key>s</key><string>x&amp;y<![CDATA[<z>]]></string></event>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict><key>class</key><string>B</string><key>d</key><data>AQID
        BA==</data><key>n</key><array><dict><key>k</key><real>1.5</real></dict></array></dict></plist>
        <event
          ><key attr='>'>class</key><string>C</string></event  >\t
        <goodbye/>

        """.utf8)

    func testWholeStream() {
        XCTAssertEqual(summary(decodeAll(stream)), ["hello dev-1", "event A", "event B", "event C", "goodbye"])
    }

    func testSplitAtEveryOffset() {
        let reference = decodeAll(stream)
        for offset in 0...stream.count {
            XCTAssertEqual(decodeSplit(stream, at: offset), reference, "split at \(offset)")
        }
    }

    func testOneByteAtATime() {
        XCTAssertEqual(decodeAll(stream, chunkSize: 1), decodeAll(stream))
        XCTAssertEqual(decodeAll(stream, chunkSize: 7), decodeAll(stream))
    }

    /// A message that arrives whole is taken at its root's first closing tag, without the frame scanner;
    /// where that tag is not the end (in a comment, in CDATA, in an attribute), or the message is over the
    /// limit, the scanner decides. Whole and byte by byte (always the scanner) must agree on each.
    func testWholeMessagesAgreeWithTheScannerWhereAClosingTagMisleads() {
        let cases: [(String, [String])] = [
            ("<event><key>class</key><string>A</string><!-- </event> --></event>", ["event A"]),
            ("<event><key>class</key><string><![CDATA[</event>]]></string></event>", ["event Class"]),
            ("<event><key>class</key><string>B</string></event >", ["event B"]),
            // The scanner gives up on the tag at its '<' and resynchronises on what follows, piece by piece.
            ("<event a=\"</event>\"><key>class</key><string>C</string></event>",
             ["malformedXML", "unexpectedElement", "unexpectedElement", "malformedXML"]),
            ("<event><key>class</key><string>D</string></eventx></event>", ["malformedXML", "malformedXML"]),
            ("<event><key>class</key><string>E</string><event><key>class</key><string>F</string></event>",
             ["malformedXML", "event F"]),
            ("<goodbye/>", ["goodbye"]),
        ]
        for (message, expected) in cases {
            let stream = Array((message + "\n" + goodEvent).utf8)
            let want = expected.map { $0 == "event Class" ? "event </event>" : $0 } + ["event Good"]
            XCTAssertEqual(summary(decodeAll(stream)), want, "whole: \(message)")
            XCTAssertEqual(summary(decodeAll(stream, chunkSize: 1)), want, "byte by byte: \(message)")
        }
        // Over the size limit although complete in the buffer: refused as the scanner refuses it.
        let big = "<event><key>class</key><string>\(String(repeating: "x", count: 300))</string></event>\n"
        let limits = WireLimits(maxMessageBytes: 200)
        XCTAssertEqual(summary(decodeAll(big + goodEvent, limits: limits)), ["messageTooLarge", "event Good"])
        XCTAssertEqual(summary(decodeAll(big + goodEvent, chunkSize: 7, limits: limits)), ["messageTooLarge", "event Good"])
    }

    func testManyMessagesInOneAppend() {
        var bytes: [UInt8] = []
        for i in 0..<5_000 {
            bytes += Array("<event><key>class</key><string>E</string><key>seq</key><integer>\(i)</integer></event>".utf8)
        }
        var decoder = WireDecoder()
        decoder.append(bytes)
        var seqs: [Int64] = []
        while let result = decoder.next() {
            guard case .success(.event(let event)) = result else { return XCTFail("\(result)") }
            seqs.append(event.seq ?? -1)
        }
        XCTAssertEqual(seqs, (0..<5_000).map(Int64.init))
        XCTAssertNil(decoder.finish())
    }

    func testRawBufferAppend() {
        var decoder = WireDecoder()
        Array(goodEvent.utf8).withUnsafeBytes { decoder.append($0) }
        XCTAssertEqual(decoder.next().map { summary([$0]) }, ["event Good"])
        XCTAssertNil(decoder.next())
    }

    func testBufferIsReleasedAfterMessages() {
        var decoder = WireDecoder()
        for _ in 0..<100 {
            decoder.append(Array(goodEvent.utf8))
            while decoder.next() != nil {}
        }
        decoder.append(Array("<event>".utf8))
        XCTAssertNil(decoder.next())
        XCTAssertEqual(decoder.bufferedByteCount, 7, "consumed messages are dropped on append")
    }

    func testTruncated() {
        let partial = "<event><key>class</key><string>A</str"
        let results = decodeAll(partial)
        XCTAssertEqual(summary(results), ["truncated"])
        if case .failure(let error)? = results.first {
            XCTAssertTrue(error.isFatal)
            XCTAssertTrue(error.message.contains("<event>"), error.message)
        }
        XCTAssertEqual(summary(decodeAll(goodEvent + "<")), ["event Good", "truncated"])
        XCTAssertEqual(summary(decodeAll(goodEvent + "<!-- unfinished")), ["event Good", "truncated"])
        XCTAssertEqual(summary(decodeAll(goodEvent + " \n\t ")), ["event Good"], "trailing whitespace is fine")
    }

    func testFinishResetsTheDecoder() {
        var decoder = WireDecoder()
        decoder.append(Array("<event><key>".utf8))
        XCTAssertNil(decoder.next())
        XCTAssertEqual(decoder.finish()?.kind, .truncated)
        XCTAssertEqual(decoder.bufferedByteCount, 0)
        decoder.append(Array(goodEvent.utf8))
        XCTAssertEqual(decoder.next().map { summary([$0]) }, ["event Good"])
    }
}
