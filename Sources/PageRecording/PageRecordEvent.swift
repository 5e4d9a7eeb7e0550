public import MuEvalWire
internal import OrderedCollections
internal import WireProtocol

/// A device's page record event as it is stored (docs/STORAGE.md, "Page recordings"): `class`, `timestamp`, `seq`,
/// `sanitiser` (`PageRecordSanitizer.version`), `dom` (the record sanitised, as JSON, long stylesheets replaced by `{"$asset": SHA}`) and `assets` (those
/// stylesheets' rules as `data` values, so that each is stored once per session file and exported with the event). A
/// record that cannot be read keeps its place as `invalid` (why), without `dom`: the replay sees a gap there.
public enum PageRecordEvent {
    /// `event` as it is stored: sanitised when its class is a page record's, else as it came.
    public static func stored(_ event: WireEvent, assetBytes: Int = PageRecordSanitizer.defaultAssetBytes) -> WireEvent {
        guard let pageClass = PageRecordClass(rawValue: event.eventClass) else { return event }
        let payload = try? TypedJSON.decodeLeavingBlobs(event.payload)
        var sanitizer = PageRecordSanitizer(mode: .storing(assetBytes: assetBytes, carried: carried(payload, blobs: event.blobs)))
        var fields: OrderedDictionary<String, PlistValue> = ["class": .string(event.eventClass)]
        if let timestamp = event.timestamp { fields["timestamp"] = .real(timestamp) }
        if let seq = event.seq { fields["seq"] = .integer(seq) }
        if case .string(let dom)? = payload?["dom"], let record = sanitizer.sanitise(Array(dom.utf8), as: pageClass) {
            // A record naming rules it carries unread is not this sanitiser's alone: whoever reads it checks it again.
            if sanitizer.unreadAssets.isEmpty { fields["sanitiser"] = .integer(PageRecordSanitizer.version) }
            fields["dom"] = .string(String(decoding: record, as: UTF8.self))
            if !sanitizer.assets.isEmpty { fields["assets"] = .array(sanitizer.assets.map { .data(Array($0.css.utf8)) }) }
        } else {
            fields["invalid"] = .string("its dom field is not a \(pageClass.rawValue) record (docs/WEB-CAPTURE.md, \"Records\"): left out")
        }
        var (json, blobs) = TypedJSON.encode(.dict(fields))
        if fields["dom"] != nil, !sanitizer.unreadAssets.isEmpty {
            appendUnread(sanitizer.unreadAssets, afterAssets: fields["assets"] != nil, to: &json)
        }
        return WireEvent(eventClass: event.eventClass, timestamp: event.timestamp, seq: event.seq, sensor: nil,
                         payload: json, blobs: blobs)
    }

    /// The stylesheets an event carries in its `assets` (an exported event imported again), with their rules when
    /// its blobs hold them.
    private static func carried(_ payload: PlistValue?, blobs: [Blob]) -> [String: PageRecordSanitizer.CarriedRules] {
        guard case .array(let assets)? = payload?["assets"] else { return [:] }
        var carried: [String: PageRecordSanitizer.CarriedRules] = [:]
        for case .dict(let reference) in assets {
            guard case .string(let sha)? = reference["$data"], BlobName(sha) != nil, case .integer(let size)? = reference["$size"] else { continue }
            carried[sha] = blobs.first { $0.sha256 == sha }.map { .rules(String(decoding: $0.bytes, as: UTF8.self)) } ?? .unread(size: size)
        }
        return carried
    }

    /// Adds references to rules whose bytes come later in the file to the payload's `assets` (its last member, when
    /// `afterAssets`), since typed JSON writes a `data` value only from its bytes.
    private static func appendUnread(_ unread: [(sha256: String, size: Int64)], afterAssets: Bool, to json: inout [UInt8]) {
        let references = unread.map { #"{"$data":"\#($0.sha256)","$size":\#($0.size)}"# }.joined(separator: ",")
        json.removeLast(afterAssets ? 2 : 1)  // `]}` or `}`
        json.append(contentsOf: ((afterAssets ? "," : #","assets":["#) + references + "]}").utf8)
    }
    /// The record (`dom`) of a stored event's payload, and whether this sanitiser's version stored it: then passing the
    /// allowlist again would change nothing. Nil for an `invalid` one.
    public static func record(in payload: PlistValue) -> (dom: String, isCurrent: Bool)? {
        guard case .string(let dom)? = payload["dom"] else { return nil }
        return (dom, payload["sanitiser"] == .integer(PageRecordSanitizer.version))
    }
}
