@testable import DeviceSimulator
import Testing

/// The splitter on hand-made boxes: no encoder, no process.
struct FragmentedMP4SplitterTests {
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + payload.count)
        return withUnsafeBytes(of: size.bigEndian, Array.init) + Array(type.utf8) + payload
    }

    static func fullBox(_ type: String, version: UInt8, _ payload: [UInt8]) -> [UInt8] {
        box(type, [version, 0, 0, 0] + payload)
    }

    static func be32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
    static func be64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }

    /// ftyp, moov (timescale 1000), then fragments at 0, 1 and 2.5 s (the last with a 64-bit tfdt and a 64-bit-sized mdat).
    static let stream: (bytes: [UInt8], parts: [[UInt8]]) = {
        let initSegment = box("ftyp", Array("isom".utf8) + be32(0))
            + box("moov", box("trak", box("mdia", fullBox("mdhd", version: 0, be32(0) + be32(0) + be32(1000) + be32(0)))))
        func fragment(_ time: UInt64, version: UInt8, bigMdat: Bool) -> [UInt8] {
            let tfdt = version == 1 ? fullBox("tfdt", version: 1, be64(time)) : fullBox("tfdt", version: 0, be32(UInt32(time)))
            let moof = box("moof", fullBox("mfhd", version: 0, be32(1)) + box("traf", fullBox("tfhd", version: 0, be32(1)) + tfdt))
            let data: [UInt8] = [1, 2, 3, 4, 5]
            let mdat = bigMdat ? be32(1) + Array("mdat".utf8) + be64(UInt64(16 + data.count)) + data : box("mdat", data)
            return moof + mdat
        }
        let parts = [initSegment, fragment(0, version: 0, bigMdat: false), fragment(1000, version: 0, bigMdat: false),
                     fragment(2500, version: 1, bigMdat: true)]
        return (parts.flatMap { $0 }, parts)
    }()

    @Test func initSegmentThenWholeFragmentsWithTheirTimes() throws {
        var splitter = FragmentedMP4Splitter()
        var parts = try splitter.append(Self.stream.bytes)
        if let last = try splitter.finish() { parts.append(last) }
        #expect(parts.map(\.bytes) == Self.stream.parts)
        #expect(parts.map(\.isInit) == [true, false, false, false])
        #expect(parts.map(\.start) == [0, 0, 1, 2.5])
    }

    @Test func theSamePartsWhereverTheBytesAreCut() throws {
        for cut in 1..<Self.stream.bytes.count {
            var splitter = FragmentedMP4Splitter()
            var parts = try splitter.append(Self.stream.bytes[..<cut])
            parts += try splitter.append(Self.stream.bytes[cut...])
            if let last = try splitter.finish() { parts.append(last) }
            #expect(parts.map(\.bytes) == Self.stream.parts, "cut at \(cut)")
        }
    }

    @Test func aStreamEndingInsideABoxOrWithABrokenSizeIsAnError() throws {
        var truncated = FragmentedMP4Splitter()
        _ = try truncated.append(Self.stream.bytes.dropLast(3))
        // The last mdat (16 + 5 bytes) lacks 3: its 18 bytes are left over.
        #expect(throws: FragmentedMP4Splitter.Failure.truncated(bytes: 18)) {
            try truncated.finish()
        }
        var broken = FragmentedMP4Splitter()
        #expect(throws: FragmentedMP4Splitter.Failure.badBox(offset: 0)) { try broken.append(Self.be32(4) + Array("free".utf8)) }
    }
}
