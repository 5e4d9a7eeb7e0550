public import SessionModel
internal import MuEvalWire
internal import WireProtocol

/// The console's answer to `GET /api/sessions/ID/page` (docs/CONSOLE.md, "The page replayed"): page records as the
/// replay applies them, and the rules of the stylesheets they name. A record stored by another version of the sanitiser
/// (or before it stamped its records) is sanitised again on its way out, so that it is served as safely.
public struct PageReplayResponse {
    private var json: [UInt8] = Array(#"{"records":["#.utf8)
    private var assetNames: [String] = []
    private var first = true
    /// Whether a record added was stored by another sanitiser: the stylesheets it names pass `PageStyles` again too.
    private var rulesNeedSanitising = false
    /// The session file the records come from, and where sanitised records are kept between answers.
    private let cache: (path: String, records: PageRecordCache)?

    public init(cache: (path: String, records: PageRecordCache)? = nil) {
        self.cache = cache
    }

    /// Adds a stored page record event; one without a readable record (`invalid`, another class) is left out.
    public mutating func add(_ event: StoredEvent) {
        let bytes = Array(event.payload.utf8)
        guard let pageClass = PageRecordClass(rawValue: event.eventClass), let payload = try? TypedJSON.decodeLeavingBlobs(bytes),
              case let (dom, isCurrent)? = PageRecordEvent.record(in: payload) else { return }
        let record: [UInt8]
        if isCurrent {
            // Passing the allowlist again would change nothing, and is most of a seek's time.
            record = Array(dom.utf8)
        } else {
            rulesNeedSanitising = true
            let sanitise = { () -> [UInt8]? in
                var sanitizer = PageRecordSanitizer(mode: .serving)
                return sanitizer.sanitise(Array(dom.utf8), as: pageClass)
            }
            guard let made = cache.map({ $0.records.record(path: $0.path, id: event.id, make: sanitise) }) ?? sanitise() else { return }
            record = made
        }
        if !first { json.append(UInt8(ascii: ",")) }
        first = false
        json.append(contentsOf: #"{"id":"#.utf8)
        JSONObject.integer(event.id, to: &json)
        json.append(contentsOf: #","t":"#.utf8)
        JSONObject.number(event.timestamp, to: &json)
        json.append(contentsOf: #","class":"#.utf8)
        JSONString.append(pageClass.rawValue, to: &json)
        json.append(contentsOf: #","dom":"#.utf8)
        json.append(contentsOf: record)
        json.append(UInt8(ascii: "}"))
        for name in bytes.withUnsafeBufferPointer(TypedJSON.blobReferences) where !assetNames.contains(name) {
            assetNames.append(name)
        }
    }

    /// The stylesheets the records added name, by SHA-256, each read once.
    public var assets: [String] { assetNames }

    /// The whole answer: `rules(sha)` gives an asset's stored rules (nil: it is left out, and the replay shows the
    /// page without them); `more` tells the replay to ask on after the last record; `remoteAssets` what the lab's
    /// browser may fetch (`replay.remote_assets`).
    public consuming func json(rules: (String) throws -> [UInt8]?, more: Bool, remoteAssets: [String]?) rethrows -> [UInt8] {
        json.append(contentsOf: #"],"assets":{"#.utf8)
        var firstAsset = true
        for name in assetNames {
            guard let bytes = try rules(name) else { continue }
            if !firstAsset { json.append(UInt8(ascii: ",")) }
            firstAsset = false
            JSONString.append(name, to: &json)
            json.append(UInt8(ascii: ":"))
            let rules = String(decoding: bytes, as: UTF8.self)
            JSONString.append(rulesNeedSanitising ? PageStyles.sanitise(rules) : rules, to: &json)
        }
        json.append(contentsOf: #"},"more":"#.utf8)
        JSONObject.bool(more, to: &json)
        json.append(contentsOf: #","remoteAssets":"#.utf8)
        if let remoteAssets {
            json.append(UInt8(ascii: "["))
            for (index, origin) in remoteAssets.enumerated() {
                if index > 0 { json.append(UInt8(ascii: ",")) }
                JSONString.append(origin, to: &json)
            }
            json.append(UInt8(ascii: "]"))
        } else {
            json.append(contentsOf: #""all""#.utf8)
        }
        json.append(UInt8(ascii: "}"))
        return json
    }
}
