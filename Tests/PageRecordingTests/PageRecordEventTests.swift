import Foundation
import MuEvalWire
import PageRecording
import Testing
import WireProtocol

/// A page record event as muevald stores it: sanitised, its long stylesheets as `data` values (blobs, once per file).
@Suite struct PageRecordEventTests {
    func event(_ eventClass: String, dom: String) -> WireEvent {
        let (json, blobs) = TypedJSON.encode(.dict(["class": .string(eventClass), "timestamp": .real(1_700_000_000.5),
                                                    "seq": .integer(7), "dom": .string(dom), "extra": .string("dropped")]))
        return WireEvent(eventClass: eventClass, timestamp: 1_700_000_000.5, seq: 7, sensor: nil, payload: json, blobs: blobs)
    }

    @Test func storedWithItsStylesheetsAsBlobs() throws {
        let rules = String(repeating: "p { color: red } ", count: 64)
        let dom = #"{"s":1,"n":0,"root":{"i":1,"c":[{"i":2,"t":"style","css":"\#(rules)"},{"i":3,"t":"script"}]}}"#
        let stored = PageRecordEvent.stored(event("DOMSnapshot", dom: dom))
        let payload = try TypedJSON.decodeLeavingBlobs(stored.payload)
        #expect(payload["class"]?.string == "DOMSnapshot")
        #expect(payload["seq"] == .integer(7))
        #expect(payload["extra"] == nil)
        let record = try #require(payload["dom"]?.string)
        #expect(!record.contains("script"))
        #expect(stored.blobs.count == 1)
        #expect(String(decoding: try #require(stored.blobs.first).bytes, as: UTF8.self) == rules)
        #expect(record.contains(#"{"$asset":"\#(try #require(stored.blobs.first).sha256)"}"#))
        #expect(stored.seq == 7 && stored.timestamp == 1_700_000_000.5)
    }

    /// An export names a stylesheet by its blob: a JSON lines export carries the bytes after the events, a plist one
    /// with the event. Imported again, the record keeps its stylesheet either way.
    @Test(arguments: [false, true])
    func anExportedRecordImportedAgainKeepsItsStylesheet(withItsBytes: Bool) throws {
        let rules = String(repeating: "p { color: red } ", count: 64)
        let first = PageRecordEvent.stored(event("DOMSnapshot", dom: #"{"s":1,"n":0,"root":{"i":1,"c":[{"i":2,"t":"style","css":"\#(rules)"}]}}"#))
        let sha = try #require(first.blobs.first).sha256
        let again = PageRecordEvent.stored(WireEvent(eventClass: "DOMSnapshot", timestamp: first.timestamp, seq: first.seq, sensor: nil,
                                                     payload: first.payload, blobs: withItsBytes ? first.blobs : []))
        let payload = try TypedJSON.decodeLeavingBlobs(again.payload)
        #expect(try #require(payload["dom"]?.string).contains(#"{"$asset":"\#(sha)"}"#))
        #expect(again.payload.withUnsafeBufferPointer(TypedJSON.blobReferences) == [sha], "the file keeps the rules and exports them")
        // Rules whose bytes came along passed the allowlist here; rules named only are checked by whoever reads them.
        #expect(payload["sanitiser"] == (withItsBytes ? .integer(PageRecordSanitizer.version) : nil))
        #expect(again.blobs == (withItsBytes ? first.blobs : []))
    }

    @Test func aReferenceToRulesTheEventDoesNotCarryIsRefused() throws {
        let sha = String(repeating: "ab", count: 32)
        let stored = PageRecordEvent.stored(event("DOMSnapshot", dom: #"{"s":1,"n":0,"root":{"i":1,"c":[{"i":2,"t":"style","css":{"$asset":"\#(sha)"}}]}}"#))
        let payload = try TypedJSON.decodeLeavingBlobs(stored.payload)
        #expect(try #require(payload["dom"]?.string).contains(sha) == false)
        #expect(payload["sanitiser"] == .integer(PageRecordSanitizer.version))
    }

    @Test func anUnreadableRecordKeepsItsPlace() throws {
        let stored = PageRecordEvent.stored(event("DOMMutations", dom: "{not json"))
        let payload = try TypedJSON.decodeLeavingBlobs(stored.payload)
        #expect(payload["dom"] == nil)
        #expect(payload["invalid"]?.string?.contains("DOMMutations") == true)
        #expect(stored.seq == 7)
    }

    @Test func otherClassesAreUntouched() {
        let touch = event("UserInputEvent", dom: "<script>")
        #expect(PageRecordEvent.stored(touch) == touch)
    }
}
