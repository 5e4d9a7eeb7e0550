import Testing
import WireProtocol

/// What imports, replication and the analysis take for a blob's name from a payload: a SHA-256 in 64
/// lower-case hex digits, nothing else (docs/SECURITY.md).
struct BlobNameCheckTests {
    static let good = String(repeating: "0123456789abcdef", count: 4)
    /// Names that climb out of a folder, short and as long as a SHA-256, and near misses.
    static let bad = ["../../x", "../../" + String(repeating: "y", count: 58), good.uppercased(), String(good.dropLast()),
                      good + "0", String(good.dropLast()) + "/"]

    @Test func onlySixtyFourLowerCaseHexDigitsAreAName() {
        #expect(BlobName(Self.good)?.hex == Self.good)
        for name in Self.bad { #expect(BlobName(name) == nil, "\(name)") }
    }

    @Test(arguments: bad)
    func aPayloadNamingAnythingElseIsNotTypedJSON(name: String) {
        let payload = Array(#"{"class":"UserInterfaceEvent","screenshot":{"$data":"\#(name)","$size":3}}"#.utf8)
        #expect(throws: TypedJSONError.self) { try TypedJSON.decodeLeavingBlobs(payload) }
        #expect(payload.withUnsafeBufferPointer { TypedJSON.blobReferences(in: $0) } == [])
        // A dictionary of the event's own that looks like one (its keys escaped with one more `$`) names no blob either.
        let own = Array(#"{"screenshot":{"$$data":"\#(name)","$$size":3}}"#.utf8)
        #expect((try? TypedJSON.decodeLeavingBlobs(own))?["screenshot"]?.blobReference == nil)
    }

    @Test func aSHA256IsReferencedAndRead() throws {
        let payload = Array(#"{"screenshot":{"$data":"\#(Self.good)","$size":3},"image":{"$data":"\#(Self.good)","$size":3}}"#.utf8)
        #expect(payload.withUnsafeBufferPointer { TypedJSON.blobReferences(in: $0) } == [Self.good])
        #expect(try TypedJSON.decodeLeavingBlobs(payload).screenshot == BlobReference(name: BlobName(Self.good)!, size: 3))
    }
}
