/// One record's nodes made safe by `PageAllowlist` (docs/WEB-CAPTURE.md, "Records", for their JSON). A node that cannot
/// be read (no id, children that are no array) is left out with what is in it; the rest of the record stays.
struct PageNodeSanitizer {
    /// Deeper elements go: a page's tree is rarely 100 deep, and the replay builds it without recursion limits of its own.
    static let maxDepth = 256

    /// What becomes of a `css` value (a stylesheet's rules): sanitised, and perhaps kept apart as an asset.
    let css: (PageJSON) -> PageJSON?

    /// The document node (`root` of a snapshot): `{i, c, css}`.
    func document(_ node: PageJSON) -> PageJSON? {
        guard let id = node["i"]?.id else { return nil }
        var out: [String: PageJSON] = ["i": .number(Double(id))]
        if let children = children(node["c"], depth: 1, svg: false) { out["c"] = children }
        if let value = node["css"], let sheet = css(value) { out["css"] = sheet }
        return .object(out)
    }

    /// Any node: an element, a box or text; nil when it goes.
    func node(_ node: PageJSON, depth: Int, svg: Bool) -> PageJSON? {
        guard depth <= Self.maxDepth, let id = node["i"]?.id else { return nil }
        let number = PageJSON.number(Double(id))
        if let text = node["x"] {
            guard case .string = text else { return nil }
            return .object(["i": number, "x": text])
        }
        guard let rawTag = node["t"]?.string else { return nil }
        if node["w"] != nil || node["h"] != nil { return box(id: number, tag: rawTag, node: node) }
        let inSVG = svg || rawTag == "svg"
        let tag = inSVG ? rawTag : rawTag.lowercased()
        if PageAllowlist.dropped.contains(tag) { return nil }
        if PageAllowlist.boxes.contains(tag) { return box(id: number, tag: tag, node: node) }
        let known = inSVG ? PageAllowlist.svgElements.contains(tag) : PageAllowlist.htmlElements.contains(tag) || PageAllowlist.isCustomElement(tag)
        let kept = known ? tag : (inSVG ? "g" : "span")
        var out: [String: PageJSON] = ["i": number, "t": .string(kept)]
        let attributes = self.attributes(node["a"], tag: kept)
        if kept == "link", attributes["rel"]?.string?.lowercased() != PageAllowlist.linkRel { return nil }
        if !attributes.isEmpty { out["a"] = .object(attributes) }
        // A style or link element's rules are its `css`, never text children (which no sanitiser would read as CSS).
        if kept == "style" || kept == "link" {
            if let value = node["css"], let sheet = css(value) { out["css"] = sheet }
        } else if let children = children(node["c"], depth: depth + 1, svg: inSVG && kept != "foreignObject") {
            out["c"] = children
        }
        if let root = node["r"], let rootID = root["i"]?.id {
            var shadow: [String: PageJSON] = ["i": .number(Double(rootID))]
            if let children = children(root["c"], depth: depth + 1, svg: false) { shadow["c"] = children }
            if let value = root["css"], let sheet = css(value) { shadow["css"] = sheet }
            out["r"] = .object(shadow)
        }
        return .object(out)
    }

    /// A box: its tag (a name only: letters, digits and dashes) and its size, nothing else.
    private func box(id: PageJSON, tag: String, node: PageJSON) -> PageJSON {
        let name = String(tag.lowercased().unicodeScalars.filter { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }.prefix(32))
        return .object(["i": id, "t": .string(name.isEmpty ? "div" : name),
                        "w": .number(max(node["w"]?.number(limit: 1e5) ?? 0, 0)),
                        "h": .number(max(node["h"]?.number(limit: 1e5) ?? 0, 0))])
    }

    private func children(_ value: PageJSON?, depth: Int, svg: Bool) -> PageJSON? {
        guard let list = value?.array else { return nil }
        let kept = list.compactMap { node($0, depth: depth, svg: svg) }
        return kept.isEmpty ? nil : .array(kept)
    }

    private func attributes(_ value: PageJSON?, tag: String) -> [String: PageJSON] {
        guard case .object(let members) = value else { return [:] }
        var out: [String: PageJSON] = [:]
        let link = tag == "a" || tag == "area"
        for (name, value) in members {
            guard let text = value.string, let kept = PageAllowlist.attribute(name, text, link: link) else { continue }
            out[name] = .string(kept)
        }
        return out
    }
}
