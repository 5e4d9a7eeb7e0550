import Foundation
import JournalStorage
import SessionImport
import Testing

/// A GPX track whose element name is not UTF-8 made Foundation's XMLParser read freed memory (the import
/// fuzz target, docs/FUZZING.md): it is refused, naming the byte, before the parser sees it; UTF-8 split
/// across the reader's pieces still imports.
@Suite struct GPXEncodingTests {
    private func importing(_ bytes: [UInt8]) throws -> Result<Int64, any Error> {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gpx-utf8-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/walk.gpx"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let importer = SessionImporter(catalog: try Catalog(directory: directory + "/data"), lab: "test")
        return Result { try importer.run(ImportRequest(files: [try ImportFile.open(path)]), now: 1_700_000_000)[0].events }
    }

    private func track(point: [UInt8], name: String = "walk") -> [UInt8] {
        Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\"><trk><name>\(name)</name><trkseg>\n<".utf8) + point
            + Array(" lat=\"49.0069\" lon=\"8.4037\"><time>2014-07-05T12:03:20Z</time></trkpt></trkseg></trk></gpx>\n".utf8)
    }

    @Test func anElementNameThatIsNotUTF8IsRefused() throws {
        let bytes = track(point: Array("trkp".utf8) + [0xFF] + Array("t".utf8))
        let error = try #require(throws: (any Error).self) { try importing(bytes).get() }
        #expect("\(error)".hasSuffix("walk.gpx: byte \(bytes.firstIndex(of: 0xFF)!): is not UTF-8 text: muEval reads XML files as UTF-8"), "\(error)")
    }

    @Test func utf8AcrossTheReadersPiecesImports() throws {
        // The name's "é"s straddle every offset, one of them the end of the parser's first 4 KiB piece.
        let name = String(repeating: "é", count: 4_000)
        #expect(try importing(track(point: Array("trkpt".utf8), name: name)).get() == 1)
    }
}
