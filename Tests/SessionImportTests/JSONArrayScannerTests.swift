import Testing
@testable import SessionImport

@Suite struct JSONArrayScannerTests {
    private func elements(_ text: String, chunk: Int) throws -> (elements: [String], ending: JSONArrayScanner.Ending) {
        var scanner = JSONArrayScanner()
        var found: [String] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            let piece = Array(bytes[index..<min(bytes.count, index + chunk)])
            try scanner.scan(piece) { element, _ in found.append(String(decoding: element, as: UTF8.self)) }
            index += chunk
        }
        return (found, scanner.ending)
    }

    @Test(arguments: [1, 2, 3, 7, 1000])
    func splitsAnArrayOfObjectsWhereverTheChunksEnd(chunk: Int) throws {
        let log = "[\n  {\"a\": \"x]}\\\"\", \"b\": [1, {\"c\": 2}]},\n  {\"d\": {}}\n]\n"
        let result = try elements(log, chunk: chunk)
        #expect(result.elements == ["{\"a\": \"x]}\\\"\", \"b\": [1, {\"c\": 2}]}", "{\"d\": {}}"])
        #expect(result.ending == .closed)
    }

    @Test func anUnfinishedLogEndsAfterItsLastWholePacket() throws {
        let result = try elements("[\n  {\"a\": 1},\n  {\"b\": [2", chunk: 4)
        #expect(result.elements == ["{\"a\": 1}"])
        #expect(result.ending == .insideElement(start: TextPosition(line: 3, column: 3)))
        #expect(try elements("[{\"a\": 1},", chunk: 100).ending == .unclosed)
    }

    @Test func garbageBetweenPacketsIsReportedWhereItIs() throws {
        #expect {
            _ = try elements("[\n  {\"a\": 1}\n  x", chunk: 5)
        } throws: { error in
            guard let failure = error as? ScanFailure else { return false }
            return failure.position == TextPosition(line: 3, column: 3) && failure.reason.contains("expected ',' or ']'")
        }
    }
}
