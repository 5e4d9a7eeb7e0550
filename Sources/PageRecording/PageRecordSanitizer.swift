internal import WireProtocol

/// A page record (the JSON of a DOM event's `dom` field) rebuilt from what the allowlist keeps (docs/SECURITY.md,
/// "Page recordings"): members the format does not name are left out, numbers are finite and bounded, nodes and
/// attributes pass `PageAllowlist`, CSS passes `PageStyles`. Run when an event is stored, and when it is served unless
/// it was stored by this `version`.
public struct PageRecordSanitizer {
    /// Stored with every record this sanitiser wrote (`sanitiser`): a record of this version is served as stored, one
    /// of another (or of none: a file written before the stamp) is sanitised again on its way out. Raise it whenever
    /// the allowlist keeps less, so that what was stored under the old one passes the new one.
    public static let version: Int64 = 1

    /// How stylesheets' rules are kept.
    public enum Mode: Sendable {
        /// A device's record on its way into the session file: rules of at least `assetBytes` bytes are kept apart as
        /// assets (stored once per session however often they are sent). An asset reference is taken only for rules
        /// the event carries itself (an exported event imported again, `carried`), else refused.
        case storing(assetBytes: Int, carried: [String: CarriedRules] = [:])
        /// A stored record on its way to the console: asset references (64 hex digits) stay.
        case serving
    }

    /// Rules an event carries in its own `assets` (`storing`), by SHA-256.
    public enum CarriedRules: Sendable {
        /// Its bytes came with it: they pass the allowlist like any rules.
        case rules(String)
        /// Named only, its bytes later in the same file (a JSON lines export): the reference stays, unchecked, and the
        /// console and the reports pass those rules through the allowlist when they read them.
        case unread(size: Int64)
    }

    /// Stylesheets kept apart while storing: SHA-256 → the sanitised rules.
    public private(set) var assets: [(sha256: String, css: String)] = []
    /// Carried references kept unchecked (`CarriedRules.unread`): the record is not this sanitiser's alone.
    public private(set) var unreadAssets: [(sha256: String, size: Int64)] = []
    private let mode: Mode

    public init(mode: Mode) {
        self.mode = mode
    }

    /// Rules at least this long are kept apart as assets when stored: a page's stylesheets are sent again with every
    /// snapshot, and they are most of its bytes.
    public static let defaultAssetBytes = 512

    /// The sanitised record of class `pageClass`, as JSON, or nil when `json` is no record of it (not JSON, or
    /// without its `s` and `n`).
    public mutating func sanitise(_ json: some Collection<UInt8>, as pageClass: PageRecordClass) -> [UInt8]? {
        guard let record = PageJSON.parse(json), let s = record["s"]?.id, let n = record["n"]?.id else { return nil }
        var out: [String: PageJSON] = ["s": .number(Double(s)), "n": .number(Double(n))]
        var assets = Assets(kept: self.assets, unread: unreadAssets)
        let mode = self.mode
        let nodes = PageNodeSanitizer(css: { Self.css($0, mode: mode, assets: &assets) })
        switch pageClass {
        case .snapshot:
            guard let root = record["root"].flatMap(nodes.document) else { return nil }
            out["root"] = root
            if record["doctype"]?.string == "html" { out["doctype"] = .string("html") }
            if let viewport = record["viewport"].flatMap(Self.viewport) { out["viewport"] = viewport }
            if let scroll = record["scroll"].flatMap(Self.scroll) { out["scroll"] = scroll }
            if let focus = record["focus"] { out["focus"] = focus.id.map { .number(Double($0)) } ?? .null }
        case .mutations:
            out.merge(Self.mutations(record, nodes: nodes, css: { Self.css($0, mode: mode, assets: &assets) })) { $1 }
        case .scroll:
            out["scroll"] = record["scroll"].flatMap(Self.scroll) ?? .array([])
        case .viewport:
            guard case .object(let viewport)? = Self.viewport(record) else { return nil }
            out.merge(viewport) { $1 }
        case .focus:
            out["focus"] = record["focus"]?.id.map { .number(Double($0)) } ?? .null
        }
        self.assets = assets.kept
        unreadAssets = assets.unread
        return PageJSON.object(out).bytes
    }

    // MARK: Parts

    private static func mutations(_ record: PageJSON, nodes: PageNodeSanitizer, css: (PageJSON) -> PageJSON?) -> [String: PageJSON] {
        var out: [String: PageJSON] = [:]
        if let removed = record["rm"]?.array?.compactMap(\.id), !removed.isEmpty {
            out["rm"] = .array(removed.map { .number(Double($0)) })
        }
        let added: [PageJSON] = (record["add"]?.array ?? []).compactMap { entry in
            // The parent's tag is in an earlier record: a tag only SVG has (`path`, `linearGradient`) says where it is.
            let tag = entry["n"]?["t"]?.string ?? ""
            let svg = PageAllowlist.svgElements.contains(tag) && !PageAllowlist.htmlElements.contains(tag.lowercased())
            guard let parent = entry["p"]?.id, let node = entry["n"].flatMap({ nodes.node($0, depth: 1, svg: svg) }) else { return nil }
            return .object(["p": .number(Double(parent)), "b": entry["b"]?.id.map { .number(Double($0)) } ?? .null, "n": node])
        }
        if !added.isEmpty { out["add"] = .array(added) }
        let attributes: [PageJSON] = (record["attr"]?.array ?? []).compactMap { entry in
            guard let parts = entry.array, parts.count == 3, let id = parts[0].id, let name = parts[1].string,
                  PageAllowlist.isAttributeName(name), !PageAllowlist.isDropped(name) else { return nil }
            // A value the allowlist refuses removes the attribute: what the replay had before may not stay either.
            let value = parts[2].string.flatMap { PageAllowlist.attribute(name, $0, link: true) }
            return .array([.number(Double(id)), .string(name), value.map(PageJSON.string) ?? .null])
        }
        if !attributes.isEmpty { out["attr"] = .array(attributes) }
        let texts: [PageJSON] = (record["text"]?.array ?? []).compactMap { entry in
            guard let parts = entry.array, parts.count == 2, let id = parts[0].id, case .string = parts[1] else { return nil }
            return .array([.number(Double(id)), parts[1]])
        }
        if !texts.isEmpty { out["text"] = .array(texts) }
        let sheets: [PageJSON] = (record["css"]?.array ?? []).compactMap { entry in
            guard let parts = entry.array, parts.count == 2, let id = parts[0].id, let sheet = css(parts[1]) else { return nil }
            return .array([.number(Double(id)), sheet])
        }
        if !sheets.isEmpty { out["css"] = .array(sheets) }
        return out
    }

    private static func scroll(_ value: PageJSON) -> PageJSON? {
        guard let entries = value.array else { return nil }
        return .array(entries.prefix(10_000).compactMap { entry in
            guard let parts = entry.array, parts.count == 3, let id = parts[0].id,
                  let x = parts[1].number(), let y = parts[2].number() else { return nil }
            return .array([.number(Double(id)), .number(x), .number(y)])
        })
    }

    /// `{w, h, o, z, zx, zy}`: a size a screen can have, an orientation of the two.
    private static func viewport(_ value: PageJSON) -> PageJSON? {
        guard let w = value["w"]?.number(limit: 1e5), let h = value["h"]?.number(limit: 1e5), w >= 0, h >= 0 else { return nil }
        var out: [String: PageJSON] = ["w": .number(w), "h": .number(h)]
        if let orientation = value["o"]?.string, orientation == "portrait" || orientation == "landscape" { out["o"] = .string(orientation) }
        if let zoom = value["z"]?.number(limit: 100), zoom > 0 { out["z"] = .number(zoom) }
        if let x = value["zx"]?.number() { out["zx"] = .number(x) }
        if let y = value["zy"]?.number() { out["zy"] = .number(y) }
        return .object(out)
    }

    private struct Assets {
        var kept: [(sha256: String, css: String)]
        var unread: [(sha256: String, size: Int64)]
    }

    /// A stylesheet's rules, sanitised; kept apart as an asset when long and storing; a stored asset's reference as it
    /// is when serving, or when storing one the event carries.
    private static func css(_ value: PageJSON, mode: Mode, assets: inout Assets) -> PageJSON? {
        switch (value, mode) {
        case (.string(let text), .storing(let assetBytes, _)):
            return stored(rules: PageStyles.sanitise(text), assetBytes: assetBytes, assets: &assets)
        case (.string(let text), .serving):
            return .string(PageStyles.sanitise(text))
        case (.object, .serving):
            guard let sha = value["$asset"]?.string, BlobName(sha) != nil else { return nil }
            return .object(["$asset": .string(sha)])
        case (.object, .storing(let assetBytes, let carried)):
            guard let sha = value["$asset"]?.string, let rules = carried[sha] else { return nil }
            switch rules {
            case .rules(let text):
                return stored(rules: PageStyles.sanitise(text), assetBytes: assetBytes, assets: &assets)
            case .unread(let size):
                if !assets.unread.contains(where: { $0.sha256 == sha }) { assets.unread.append((sha, size)) }
                return .object(["$asset": .string(sha)])
            }
        default:
            return nil
        }
    }

    private static func stored(rules: String, assetBytes: Int, assets: inout Assets) -> PageJSON {
        guard rules.utf8.count >= assetBytes else { return .string(rules) }
        let sha = BlobName(of: Array(rules.utf8)).hex
        if !assets.kept.contains(where: { $0.sha256 == sha }) { assets.kept.append((sha, rules)) }
        return .object(["$asset": .string(sha)])
    }
}
