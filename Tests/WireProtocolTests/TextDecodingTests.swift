import WireProtocol
import XCTest

/// Character data: references, CDATA, comments, whitespace.
final class TextDecodingTests: XCTestCase {
    func testPredefinedEntities() throws {
        XCTAssertEqual(try payload("<key>v</key><string>&lt;a&gt; &amp; &quot;b&quot; &apos;c&apos;</string>"),
                       json(#""<a> & \"b\" 'c'""#))
    }

    func testNumericReferences() throws {
        XCTAssertEqual(try payload("<key>v</key><string>&#65;&#x42;&#x43;&#233;&#x1F600;&#x10FFFF;</string>"),
                       json("\"AB\u{43}é😀\u{10FFFF}\""))
        for bad in ["&#X43;", "&#0;", "&#xD800;", "&#xDFFF;", "&#x110000;", "&#;", "&#x;", "&#12a;", "&#99999999999;"] {
            XCTAssertEqual(decodeError("<event><key>class</key><string>\(bad)</string></event>")?.kind, .malformedXML, bad)
        }
    }

    func testReferencesInKeys() throws {
        XCTAssertEqual(try payload("<key>a&amp;b</key><integer>1</integer>"), #"{"class":"T","a&b":1}"#)
    }

    func testCDATA() throws {
        XCTAssertEqual(try payload("<key>v</key><string>x<![CDATA[<not> &a tag;]]>y</string>"),
                       json(#""x<not> &a tag;y""#))
        XCTAssertEqual(try payload("<key>v</key><string><![CDATA[]]]]><![CDATA[>]]></string>"), json(#""]]>""#))
        XCTAssertEqual(try payload("<key>v</key><integer><![CDATA[12]]></integer>"), json("12"))
    }

    func testCommentsAnywhere() throws {
        XCTAssertEqual(try payload("""
            <!-- before --><key>v</key><!-- between --><string>a<!-- inside -->b</string><!-- after -->
            <key>w</key><array><!-- x --><true/><!-- <fake> --></array>
            """), #"{"class":"T","v":"ab","w":[true]}"#)
    }

    func testAttributesAreIgnored() throws {
        XCTAssertEqual(try payload(#"<key id="1">v</key><string xml:space='preserve' a = "&lt;">x</string>"#),
                       json(#""x""#))
    }

    func testInvalidUTF8() {
        let bad: [UInt8] = Array("<event><key>class</key><string>T</string><key>v</key><string>a".utf8) + [0xC3, 0x28]
            + Array("</string></event>".utf8)
        assertResyncs(bad, [.invalidValue])
        // Overlong encoding and a UTF-8 encoded surrogate.
        assertResyncs(Array("<event><key>class</key><string>".utf8) + [0xC0, 0xAF] + Array("</string></event>".utf8),
                      [.invalidValue])
        assertResyncs(Array("<event><key>class</key><string>".utf8) + [0xED, 0xA0, 0x80] + Array("</string></event>".utf8),
                      [.invalidValue])
        assertResyncs(Array("<event><key>".utf8) + [0xFF] + Array("</key><string>T</string></event>".utf8),
                      [.invalidValue])
    }
}
