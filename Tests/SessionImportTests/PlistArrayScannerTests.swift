import Testing
@testable import SessionImport

@Suite struct PlistArrayScannerTests {
    private let document = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <array>
        \t<dict>
        \t\t<key>class</key>
        \t\t<string>a > b <!-- not a comment --></string>
        \t\t<key>empty</key>
        \t\t<array/>
        \t</dict>
        \t<!-- between <dict> elements -->
        \t<dict><key>x</key><string><![CDATA[</dict>]]></string></dict>
        \t<dict/>
        </array>
        </plist>

        """

    private func scan(_ text: String, chunk: Int) throws -> (elements: [String], scanner: PlistArrayScanner) {
        var scanner = PlistArrayScanner()
        var elements: [String] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            try scanner.scan(Array(bytes[index..<min(bytes.count, index + chunk)])) { element, _ in
                elements.append(String(decoding: element, as: UTF8.self))
            }
            index += chunk
        }
        return (elements, scanner)
    }

    @Test(arguments: [1, 2, 5, 13, 4096])
    func findsTheRootArraysElementsWhereverTheChunksEnd(chunk: Int) throws {
        let (elements, scanner) = try scan(document, chunk: chunk)
        #expect(elements.count == 3)
        #expect(elements[0].hasPrefix("<dict>") && elements[0].hasSuffix("</dict>") && elements[0].contains("a > b"))
        #expect(elements[1] == "<dict><key>x</key><string><![CDATA[</dict>]]></string></dict>")
        #expect(elements[2] == "<dict/>")
        #expect(scanner.ending.closed)
    }

    @Test func aCutOffFileEndsInsideItsLastElement() throws {
        let cut = String(document.prefix(upTo: document.range(of: "<key>empty")!.lowerBound))
        let (elements, scanner) = try scan(cut, chunk: 7)
        #expect(elements.isEmpty)
        #expect(scanner.ending.closed == false)
        #expect(scanner.ending.insideElementAt == TextPosition(line: 5, column: 2))
    }

    @Test func anotherRootIsNamed() {
        #expect {
            _ = try scan("<?xml version=\"1.0\"?>\n<kml>\n</kml>\n", chunk: 3)
        } throws: { error in
            (error as? ScanFailure)?.reason.contains("the root element is <kml>") == true
        }
    }
}
