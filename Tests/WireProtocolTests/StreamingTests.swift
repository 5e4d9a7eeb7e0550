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
            var decoder = WireDecoder()
            var results: [Result<WireMessage, WireError>] = []
            decoder.append(stream[..<offset])
            while let result = decoder.next() { results.append(result) }
            decoder.append(stream[offset...])
            while let result = decoder.next() { results.append(result) }
            XCTAssertNil(decoder.finish())
            XCTAssertEqual(results, reference, "split at \(offset)")
        }
    }

    func testOneByteAtATime() {
        XCTAssertEqual(decodeAll(stream, chunkSize: 1), decodeAll(stream))
        XCTAssertEqual(decodeAll(stream, chunkSize: 7), decodeAll(stream))
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
