/// A page rebuilt from its records (docs/WEB-CAPTURE.md, "Records"), as values: a `DOMSnapshot` makes it anew, then
/// `DOMMutations` change it in the documented order (`rm`, `add`, `attr`, `text`, `css`), and `DOMScroll`,
/// `DOMViewport` and `DOMFocus` move it. The same rules as the console's replay (page-builder.js): a gap in `n` is a
/// record the phone dropped, and from there the page's changes wait for the next snapshot (scroll positions, the
/// viewport and the focus are whole states, still taken); a record already applied (its `n` not past the last) changes
/// nothing. A record is sanitised again on its way in unless this sanitiser stored it, as the console does.
///
/// No layout: `PageHTML` writes the state as a document for a browser to lay out.
public struct PageTree {
    /// The window, in CSS pixels.
    public struct Viewport: Equatable, Sendable {
        public var width: Double
        public var height: Double
    }

    /// A scroll position in CSS pixels.
    public struct Offset: Equatable, Sendable {
        public var x: Double
        public var y: Double
    }

    /// A stylesheet's rules: text, or a stored asset by SHA-256.
    enum CSS: Equatable {
        case text(String)
        case asset(String)
    }

    enum Kind: Equatable {
        case document
        case shadowRoot
        /// `svg`: in SVG's namespace (from `svg` down, HTML again inside a `foreignObject`).
        case element(String, svg: Bool)
        /// A style element, or a link to a stylesheet: its rules are `css`, never children.
        case sheet(String, svg: Bool)
        case box(String, width: Double, height: Double, svg: Bool)
        case text(String)
    }

    struct Node: Equatable {
        var kind: Kind
        var parent: Int64?
        var children: [Int64] = []
        var attributes: [String: String] = [:]
        /// A sheet's rules; the document's or a shadow root's constructed sheets.
        var css: CSS?
        /// An element's open shadow root.
        var shadow: Int64?
    }

    /// Trees deeper than this are left out below it (the sanitiser's limit for one record).
    static let maxDepth = PageNodeSanitizer.maxDepth

    private(set) var nodes: [Int64: Node] = [:]
    private(set) var documentID: Int64?
    /// Whether the page had `<!DOCTYPE html>` (else it was laid out in quirks mode).
    public private(set) var standardsMode = false
    public private(set) var viewport: Viewport?
    /// Scroll positions by node id: the document's and scrolled elements'.
    public private(set) var scroll: [Int64: Offset] = [:]
    /// The focused element's id.
    public private(set) var focus: Int64?
    /// The snapshot the page follows (`s`; 0: none yet) and the last record's number since it (`n`).
    public private(set) var snapshotNumber: Int64 = 0
    public private(set) var recordNumber: Int64 = 0
    /// A record was lost since the snapshot: changes wait for the next one.
    public private(set) var frozen = false

    public init() {}

    /// Whether a snapshot made the page: before it there is nothing to show.
    public var hasPage: Bool { documentID != nil }

    /// The document's own scroll position.
    public var documentScroll: Offset? { documentID.flatMap { scroll[$0] } }

    /// Applies one stored record (the JSON of its `dom` field) of class `pageClass`, sanitised again unless `isCurrent`
    /// (`PageRecordEvent.record(in:)`); returns whether the page took it.
    @discardableResult
    public mutating func apply(_ pageClass: PageRecordClass, dom: some Collection<UInt8>, isCurrent: Bool = false) -> Bool {
        var sanitizer = PageRecordSanitizer(mode: .serving)
        let clean = isCurrent ? Array(dom) : sanitizer.sanitise(dom, as: pageClass)
        guard let record = clean.flatMap(PageJSON.parse) else { return false }
        return apply(pageClass, record: record)
    }

    mutating func apply(_ pageClass: PageRecordClass, record: PageJSON) -> Bool {
        guard let s = record["s"]?.id, let n = record["n"]?.id else { return false }
        if pageClass == .snapshot {
            snapshot(record, number: s)
            return true
        }
        guard hasPage else { return false }
        let next = s == snapshotNumber
        if next && n <= recordNumber { return false }
        if !next || n > recordNumber + 1 { frozen = true }
        recordNumber = max(recordNumber, n)
        switch pageClass {
        case .mutations:
            guard !frozen else { return false }
            mutate(record)
        case .scroll: takeScroll(record["scroll"])
        case .viewport: viewport = Self.viewport(record) ?? viewport
        case .focus: focus = record["focus"]?.id
        case .snapshot: break
        }
        return true
    }

    // MARK: Records

    private mutating func snapshot(_ record: PageJSON, number: Int64) {
        self = PageTree()
        snapshotNumber = number
        standardsMode = record["doctype"]?.string == "html"
        viewport = record["viewport"].flatMap(Self.viewport)
        focus = record["focus"]?.id
        takeScroll(record["scroll"])
        guard let root = record["root"], let id = root["i"]?.id else { return }
        documentID = id
        nodes[id] = Node(kind: .document, css: Self.css(root["css"]))
        // A document holds one element: text or a second element at its top is not shown by browsers either.
        guard let first = root["c"]?.array?.first(where: { $0["t"]?.string != nil && $0["w"] == nil && $0["h"] == nil }) else { return }
        if let child = build(first, parent: id, svg: false, depth: 1) { nodes[id]?.children = [child] }
    }

    private mutating func mutate(_ record: PageJSON) {
        for id in record["rm"]?.array?.compactMap(\.id) ?? [] {
            guard let node = nodes[id], node.kind != .document, node.kind != .shadowRoot else { continue }
            remove(id)
        }
        for entry in record["add"]?.array ?? [] { add(entry) }
        for entry in record["attr"]?.array ?? [] {
            guard let parts = entry.array, parts.count == 3, let id = parts[0].id, let name = parts[1].string,
                  case .element? = nodes[id]?.kind else { continue }
            nodes[id]?.attributes[name] = parts[2].string
        }
        for entry in record["text"]?.array ?? [] {
            guard let parts = entry.array, parts.count == 2, let id = parts[0].id, let text = parts[1].string,
                  case .text? = nodes[id]?.kind else { continue }
            nodes[id]?.kind = .text(text)
        }
        for entry in record["css"]?.array ?? [] {
            guard let parts = entry.array, parts.count == 2, let id = parts[0].id, case .sheet? = nodes[id]?.kind else { continue }
            nodes[id]?.css = Self.css(parts[1])
        }
    }

    /// `{p, b, n}`: node `n` into `p` before its child `b` (null or not a child of `p`: last). A node whose id is known
    /// is taken from where it was and replaced by `n`; an unknown `p`, or one that holds no children, skips the entry.
    private mutating func add(_ entry: PageJSON) {
        guard let parentID = entry["p"]?.id, let json = entry["n"], let id = json["i"]?.id, id != parentID,
              let parent = nodes[parentID], holdsChildren(parent) else { return }
        if let existing = nodes[id] {
            guard existing.kind != .document, existing.kind != .shadowRoot else { return }
            remove(id)
            // It held the parent: the parent went with it.
            guard nodes[parentID] != nil else { return }
        }
        if parent.kind == .document {
            // A document's one element: a second one, or text, is not shown.
            guard nodes[parentID]?.children.isEmpty == true, json["t"]?.string != nil, json["w"] == nil, json["h"] == nil else { return }
        }
        guard let child = build(json, parent: parentID, svg: childrenAreSVG(parent), depth: 1) else { return }
        var children = nodes[parentID]?.children ?? []
        let before = entry["b"]?.id.flatMap { before in children.firstIndex(of: before) }
        children.insert(child, at: before ?? children.endIndex)
        nodes[parentID]?.children = children
    }

    private mutating func takeScroll(_ value: PageJSON?) {
        for entry in value?.array ?? [] {
            guard let parts = entry.array, parts.count == 3, let id = parts[0].id,
                  let x = parts[1].number(), let y = parts[2].number() else { continue }
            scroll[id] = Offset(x: x, y: y)
        }
    }

    // MARK: Nodes

    private func holdsChildren(_ node: Node) -> Bool {
        switch node.kind {
        case .document, .shadowRoot: true
        case .element(let tag, let svg): svg || tag != "textarea"
        case .sheet, .box, .text: false
        }
    }

    private func childrenAreSVG(_ node: Node) -> Bool {
        if case .element(let tag, svg: true) = node.kind { return tag != "foreignObject" }
        return false
    }

    /// Makes `json` and everything in it, as a child of `parentID` (the caller links it); returns its id, or nil when
    /// it is no node. An id already in the page elsewhere is taken from there (ids are unique in a page).
    private mutating func build(_ json: PageJSON, parent parentID: Int64, svg: Bool, depth: Int) -> Int64? {
        guard depth <= Self.maxDepth, let id = json["i"]?.id, !isSelfOrAncestor(id, of: parentID) else { return nil }
        if let existing = nodes[id] {
            guard existing.kind != .document, existing.kind != .shadowRoot else { return nil }
            remove(id)
        }
        var node: Node
        if let text = json["x"]?.string {
            node = Node(kind: .text(text), parent: parentID)
        } else if let rawTag = json["t"]?.string {
            let inSVG = svg || rawTag == "svg"
            let tag = inSVG ? rawTag : rawTag.lowercased()
            if json["w"] != nil || json["h"] != nil {
                node = Node(kind: .box(tag, width: json["w"]?.number(limit: 1e5) ?? 0, height: json["h"]?.number(limit: 1e5) ?? 0,
                                       svg: inSVG && tag != "svg"), parent: parentID)
            } else if tag == "style" || (tag == "link" && !inSVG) {
                node = Node(kind: .sheet(tag, svg: inSVG), parent: parentID, css: Self.css(json["css"]))
                if let media = json["a"]?["media"]?.string { node.attributes["media"] = media }
            } else {
                node = Node(kind: .element(tag, svg: inSVG), parent: parentID)
                if case .object(let attributes)? = json["a"] {
                    for (name, value) in attributes { if let text = value.string { node.attributes[name] = text } }
                }
            }
        } else {
            return nil
        }
        nodes[id] = node
        guard case .element(let tag, let inSVG) = node.kind else { return id }
        var children: [Int64] = []
        if inSVG || tag != "textarea" {
            for child in json["c"]?.array ?? [] {
                if let built = build(child, parent: id, svg: inSVG && tag != "foreignObject", depth: depth + 1) { children.append(built) }
            }
        }
        let kept = own(children, of: id)
        nodes[id]?.children = kept
        if !inSVG, let root = json["r"], let rootID = root["i"]?.id, nodes[rootID] == nil {
            nodes[rootID] = Node(kind: .shadowRoot, parent: id, css: Self.css(root["css"]))
            var shadowChildren: [Int64] = []
            for child in root["c"]?.array ?? [] {
                if let built = build(child, parent: rootID, svg: false, depth: depth + 1) { shadowChildren.append(built) }
            }
            let keptShadow = own(shadowChildren, of: rootID)
            nodes[rootID]?.children = keptShadow
            nodes[id]?.shadow = rootID
        }
        return id
    }

    /// The children built for `parent` that are still its own, each once: a record naming an id twice moves it.
    private func own(_ children: [Int64], of parent: Int64) -> [Int64] {
        var seen: Set<Int64> = []
        return children.filter { nodes[$0]?.parent == parent && seen.insert($0).inserted }
    }

    private func isSelfOrAncestor(_ id: Int64, of start: Int64) -> Bool {
        var at: Int64? = start
        var steps = 0
        while let current = at, steps <= nodes.count {
            if current == id { return true }
            at = nodes[current]?.parent
            steps += 1
        }
        return false
    }

    /// Takes `id` from its parent and forgets it with everything in it (without recursion: a page's changes can nest
    /// deeper than any one record).
    private mutating func remove(_ id: Int64) {
        if let parent = nodes[id]?.parent {
            nodes[parent]?.children.removeAll { $0 == id }
            if nodes[parent]?.shadow == id { nodes[parent]?.shadow = nil }
        }
        var stack = [id]
        while let at = stack.popLast() {
            guard let node = nodes.removeValue(forKey: at) else { continue }
            stack.append(contentsOf: node.children)
            if let shadow = node.shadow { stack.append(shadow) }
        }
    }

    private static func css(_ value: PageJSON?) -> CSS? {
        switch value {
        case .string(let text)?: .text(text)
        case .object?: value?["$asset"]?.string.map(CSS.asset)
        default: nil
        }
    }

    private static func viewport(_ value: PageJSON) -> Viewport? {
        guard let width = value["w"]?.number(limit: 1e5), let height = value["h"]?.number(limit: 1e5), width > 0, height > 0 else { return nil }
        return Viewport(width: width, height: height)
    }
}
