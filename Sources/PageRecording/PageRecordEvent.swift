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
        var sanitizer = PageRecordSanitizer(mode: .storing(assetBytes: assetBytes))
        var fields: OrderedDictionary<String, PlistValue> = ["class": .string(event.eventClass)]
        if let timestamp = event.timestamp { fields["timestamp"] = .real(timestamp) }
        if let seq = event.seq { fields["seq"] = .integer(seq) }
        let payload = try? TypedJSON.decodeLeavingBlobs(event.payload)
        if case .string(let dom)? = payload?["dom"], let record = sanitizer.sanitise(Array(dom.utf8), as: pageClass) {
            fields["sanitiser"] = .integer(PageRecordSanitizer.version)
            fields["dom"] = .string(String(decoding: record, as: UTF8.self))
            if !sanitizer.assets.isEmpty { fields["assets"] = .array(sanitizer.assets.map { .data(Array($0.css.utf8)) }) }
        } else {
            fields["invalid"] = .string("its dom field is not a \(pageClass.rawValue) record (docs/WEB-CAPTURE.md, \"Records\"): left out")
        }
        let (json, blobs) = TypedJSON.encode(.dict(fields))
        return WireEvent(eventClass: event.eventClass, timestamp: event.timestamp, seq: event.seq, sensor: nil,
                         payload: json, blobs: blobs)
    }

    /// The record (`dom`) of a stored event's payload, and whether this sanitiser's version stored it: then passing the
    /// allowlist again would change nothing. Nil for an `invalid` one.
    public static func record(in payload: PlistValue) -> (dom: String, isCurrent: Bool)? {
        guard case .string(let dom)? = payload["dom"] else { return nil }
        return (dom, payload["sanitiser"] == .integer(PageRecordSanitizer.version))
    }
}
