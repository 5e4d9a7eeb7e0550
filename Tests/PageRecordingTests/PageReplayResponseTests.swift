import Foundation
import MuEvalWire
import PageRecording
import SessionModel
import Testing
import WireProtocol

/// The console's answer of page records: what this sanitiser stored is served as stored; what another version stored
/// (or a file from before the stamp) passes the allowlist again, its stylesheets too.
@Suite struct PageReplayResponseTests {
    static let hostile = #"{"s":1,"n":0,"root":{"i":1,"c":[{"i":2,"t":"script","c":[{"i":3,"x":"alert(1)"}]},"#
        + #"{"i":4,"t":"button","a":{"onclick":"alert(2)","class":"buy"},"c":[{"i":5,"x":"Buy"}]}]}}"#

    func stored(_ payload: PlistValue, id: Int64 = 1) -> StoredEvent {
        let (json, _) = TypedJSON.encode(payload)
        return StoredEvent(id: id, device: "phone", seq: 1, eventClass: "DOMSnapshot", timestamp: 1_700_000_000,
                           timestampEstimated: false, received: 1_700_000_000, payload: String(decoding: json, as: UTF8.self))
    }

    func served(_ events: [StoredEvent], rules: [String: String] = [:]) throws -> [String: Any] {
        var response = PageReplayResponse()
        for event in events { response.add(event) }
        let json = response.json(rules: { rules[$0].map { Array($0.utf8) } }, more: false, remoteAssets: nil)
        return try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
    }

    func dom(_ answer: [String: Any]) throws -> String {
        let records = try #require(answer["records"] as? [[String: Any]])
        let record = try #require(records.first?["dom"])
        return String(decoding: try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test func aRecordThisSanitiserStoredIsServedAsStored() throws {
        let (json, blobs) = TypedJSON.encode(.dict(["class": .string("DOMSnapshot"), "dom": .string(Self.hostile)]))
        let event = PageRecordEvent.stored(WireEvent(eventClass: "DOMSnapshot", timestamp: 1, seq: 1, sensor: nil, payload: json, blobs: blobs))
        let payload = try TypedJSON.decodeLeavingBlobs(event.payload)
        #expect(payload["sanitiser"] == .integer(PageRecordSanitizer.version))
        let storedDOM = try #require(payload["dom"]?.string)
        let answer = try served([stored(payload)])
        let canonical = try JSONSerialization.data(withJSONObject: JSONSerialization.jsonObject(with: Data(storedDOM.utf8)), options: [.sortedKeys])
        #expect(try dom(answer) == String(decoding: canonical, as: UTF8.self))
        #expect(!storedDOM.contains("script") && !storedDOM.contains("onclick") && storedDOM.contains("buy"))
        // Not passed again: the allowlist would write these keys sorted, the answer has them as the file does.
        let unsorted = #"{"s":1,"n":0,"root":{"i":1}}"#
        let stamped = stored(.dict(["class": .string("DOMSnapshot"), "sanitiser": .integer(PageRecordSanitizer.version),
                                    "dom": .string(unsorted)]))
        var response = PageReplayResponse()
        response.add(stamped)
        let text = String(decoding: response.json(rules: { _ in nil }, more: false, remoteAssets: nil), as: UTF8.self)
        #expect(text.contains(#""dom":\#(unsorted)"#), "\(text)")
    }

    @Test(arguments: [nil, PageRecordSanitizer.version + 1, 0])
    func aRecordOfAnotherSanitiserPassesTheAllowlistAgain(version: Int64?) throws {
        let sha = String(repeating: "ab", count: 32)
        let record = Self.hostile.replacingOccurrences(of: #"{"i":4,"#, with: #"{"i":6,"t":"style","css":{"$asset":"\#(sha)"}},{"i":4,"#)
        let recordText = String(decoding: try JSONSerialization.data(withJSONObject: record, options: [.fragmentsAllowed]), as: UTF8.self)
        // Typed JSON as a file holds it: the stylesheet's rules are a blob the payload names.
        let payload = #"{"class":"DOMSnapshot","# + (version.map { #""sanitiser":\#($0),"# } ?? "")
            + #""dom":\#(recordText),"assets":[{"$data":"\#(sha)","$size":3}]}"#
        let event = StoredEvent(id: 1, device: "phone", seq: 1, eventClass: "DOMSnapshot", timestamp: 1, timestampEstimated: false,
                                received: 1, payload: payload)
        let answer = try served([event], rules: [sha: "p { background: url(javascript:alert(3)) } h1 { color: red }"])
        let sanitised = try dom(answer)
        #expect(!sanitised.contains("script") && !sanitised.contains("onclick"), "\(sanitised)")
        #expect(sanitised.contains("buy") && sanitised.contains(sha))
        let rules = try #require((answer["assets"] as? [String: String])?[sha])
        #expect(!rules.contains("javascript") && rules.contains("color: red"), "\(rules)")
    }
}
