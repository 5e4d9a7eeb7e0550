internal import WireProtocol

/// A page's state (`PageTree`) as one static HTML document, for a sandboxed frame's `srcdoc` (the reports' page under
/// their heatmaps; docs/REPORTS.md). What it writes is what `PageAllowlist` allows, checked again here whatever the
/// tree holds: elements of its lists (any other tag a `span`, in SVG a `g`; dropped ones with everything in them),
/// attributes it keeps (never `on…`), text escaped, stylesheets as `<style>` whose text cannot end the element, boxes as
/// grey blocks of their size, open shadow roots as declarative ones. Never a script, in any form.
///
/// Written without recursion: a page's changes can nest deeper than any one record.
public struct PageHTML {
    /// Markup put first in the document's head, as it is: the caller's own (a policy, a style), never a record's.
    public var head: String
    /// Whether images may be fetched from where the page had them (http(s)); false: only `data:` images are shown,
    /// the others are empty grey boxes, and no element of the document fetches anything by itself.
    public var remoteImages: Bool
    /// A stylesheet kept apart (`{"$asset": SHA}`) by its SHA-256: its rules, or nil (the page is shown without them).
    public var asset: (String) -> String?

    public init(head: String = "", remoteImages: Bool = false, asset: @escaping (String) -> String? = { _ in nil }) {
        self.head = head
        self.remoteImages = remoteImages
        self.asset = asset
    }

    /// Deeper elements are left out (browsers' parsers flatten them anyway: Chromium's from 512).
    static let maxDepth = 512
    static let boxFill = "#ddd"
    static let blankImage = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"
    /// HTML's elements without content or end tag.
    static let voidElements: Set<String> = ["area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"]
    /// Boxes of these tags stand in a line of text, as the elements did; the others are blocks.
    static let inlineBoxes: Set<String> = ["canvas", "video", "audio", "iframe", "frame", "object", "embed", "img", "input",
                                           "select", "textarea", "button", "span", "a", "label"]
    /// Attributes whose URL a browser fetches as it renders.
    static let fetchedAttributes: Set<String> = ["src", "srcset", "imagesrcset", "poster", "background", "lowsrc", "dynsrc"]

    private enum Step {
        case node(Int64, depth: Int)
        case markup(String)
    }

    /// The page as a document: empty (but for `head`) before its first snapshot.
    public func document(_ page: PageTree) -> String {
        var out = page.standardsMode ? "<!DOCTYPE html>" : ""
        guard let documentID = page.documentID, let document = page.nodes[documentID],
              let rootID = document.children.first, let root = page.nodes[rootID] else { return out + head }
        var headPending = true
        if root.kind != .element("html", svg: false) {
            out += head
            headPending = false
        }
        var stack: [Step] = [.node(rootID, depth: 1)]
        while let step = stack.popLast() {
            switch step {
            case .markup(let text):
                out += text
            case .node(let id, let depth):
                guard depth <= Self.maxDepth, let node = page.nodes[id] else { continue }
                // The document's constructed sheets, last in its element: the cascade puts them after the page's own.
                let tail = id == rootID ? document.css.map(constructedSheets) ?? "" : ""
                write(node, depth: depth, page: page, tail: tail, to: &out, stack: &stack, headPending: &headPending)
            }
        }
        return out
    }

    private func write(_ node: PageTree.Node, depth: Int, page: PageTree, tail: String, to out: inout String, stack: inout [Step],
                       headPending: inout Bool) {
        switch node.kind {
        case .document, .shadowRoot:
            return
        case .text(let text):
            out += Self.text(text)
        case .box(let tag, let width, let height, let svg):
            out += Self.box(tag, width: width, height: height, svg: svg)
        case .sheet(_, let svg):
            out += node.css.map { sheet($0, svg: svg, media: node.attributes["media"]) } ?? ""
        case .element(let recorded, let svg):
            guard let tag = Self.allowedTag(recorded, svg: svg) else { return }
            let scroll = depth == 1 ? page.documentScroll : nil
            out += "<" + tag + attributes(node.attributes, tag: tag, svg: svg, scroll: scroll) + ">"
            if headPending, tag == "html" {
                // The caller's head first in the page's head, or in one of its own when the page has none first.
                if node.children.first.flatMap({ page.nodes[$0]?.kind }) != .element("head", svg: false) {
                    out += "<head>" + head + "</head>"
                    headPending = false
                }
            } else if headPending, tag == "head" {
                out += head
                headPending = false
            }
            if !svg && Self.voidElements.contains(tag) { return }
            var inner: [Step] = []
            if !svg, let shadowID = node.shadow, let shadow = page.nodes[shadowID] {
                inner.append(.markup(#"<template shadowrootmode="open">"#))
                inner += shadow.children.map { .node($0, depth: depth + 1) }
                inner.append(.markup((shadow.css.map(constructedSheets) ?? "") + "</template>"))
            }
            // A textarea's text is what was typed: never sent, never shown.
            if svg || tag != "textarea" { inner += node.children.map { .node($0, depth: depth + 1) } }
            inner.append(.markup(tail + "</" + tag + ">"))
            stack.append(contentsOf: inner.reversed())
        }
    }

    /// The tag written for an element recorded as `tag`: nil when it goes with everything in it.
    static func allowedTag(_ tag: String, svg: Bool) -> String? {
        if PageAllowlist.dropped.contains(tag) || PageAllowlist.boxes.contains(tag.lowercased()) { return nil }
        if svg { return PageAllowlist.svgElements.contains(tag) ? tag : "g" }
        return PageAllowlist.htmlElements.contains(tag) || PageAllowlist.isCustomElement(tag) ? tag : "span"
    }

    private func attributes(_ recorded: [String: String], tag: String, svg: Bool, scroll: PageTree.Offset?) -> String {
        var out = ""
        var style: [String] = []
        let image = (!svg && tag == "img") || (svg && tag == "image")
        var (source, sourceDropped) = (false, false)
        let link = tag == "a" || tag == "area"
        for (name, value) in recorded.sorted(by: { $0.key < $1.key }) {
            let key = name.lowercased()
            guard !key.hasPrefix("on"), let kept = PageAllowlist.attribute(name, value, link: link) else { continue }
            let isSource = key == "src" || (svg && key.hasSuffix("href"))
            if !remoteImages, fetches(key, tag: tag, svg: svg), !Self.isLocal(kept, list: PageAllowlist.srcsetAttributes.contains(key)) {
                sourceDropped = sourceDropped || isSource
                continue
            }
            source = source || isSource
            if key == "style" {
                style.insert(kept, at: 0)
            } else {
                out += " " + name + "=\"" + Self.attribute(kept) + "\""
            }
        }
        // An image not fetched: an empty grey box where it was, no request made.
        if image, sourceDropped, !source {
            out += (svg ? " href=\"" : " src=\"") + Self.blankImage + "\" data-mueval-box=\"\(tag)\""
            if !svg { style.append("background:\(Self.boxFill)") }
        }
        // The document scrolled: the page moved up under a window that stays (fixed elements stay where they were).
        if let scroll, scroll.x != 0 || scroll.y != 0 {
            style.append("position:relative!important;left:\(Self.number(-scroll.x))px!important;top:\(Self.number(-scroll.y))px!important")
        }
        if !style.isEmpty { out += " style=\"" + Self.attribute(style.joined(separator: ";")) + "\"" }
        return out
    }

    private func fetches(_ key: String, tag: String, svg: Bool) -> Bool {
        Self.fetchedAttributes.contains(key) || (svg && (tag == "image" || tag == "use" || tag == "feImage") && key.hasSuffix("href"))
    }

    /// Whether a URL (or each URL of a srcset, `list`) is a fragment or `data:`: nothing fetched.
    static func isLocal(_ value: String, list: Bool) -> Bool {
        let urls = list ? value.split(separator: ", ").map { $0.split(separator: " ").first.map(String.init) ?? "" } : [value]
        return urls.allSatisfy { url in
            let text = url.trimmingControlsAndSpaces().lowercased()
            return text.hasPrefix("#") || text.hasPrefix("data:")
        }
    }

    /// A document's or shadow root's constructed sheets.
    private func constructedSheets(_ css: PageTree.CSS) -> String {
        sheet(css, svg: false, media: nil)
    }

    /// A `<style>` with the rules of `css`: in HTML its text is raw (no `</` in it, so that nothing ends it early);
    /// in SVG it is parsed as text, so it is escaped.
    private func sheet(_ css: PageTree.CSS, svg: Bool, media: String?) -> String {
        let rules: String
        switch css {
        case .text(let text): rules = text
        case .asset(let sha): rules = asset(sha).map(PageStyles.sanitise) ?? ""
        }
        let attribute = media.map { " media=\"\(Self.attribute($0))\"" } ?? ""
        return "<style\(attribute)>" + (svg ? Self.text(rules) : rules.replacing("</", with: "<\\/")) + "</style>"
    }

    static func box(_ tag: String, width: Double, height: Double, svg: Bool) -> String {
        let name = String(tag.lowercased().unicodeScalars.filter { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }.prefix(32))
        let (w, h) = (number(max(width, 0)), number(max(height, 0)))
        if svg { return #"<rect data-mueval-box="\#(name)" width="\#(w)" height="\#(h)" fill="\#(boxFill)"></rect>"# }
        let display = inlineBoxes.contains(name) ? "inline-block" : "block"
        return #"<div data-mueval-box="\#(name)" style="display:\#(display);box-sizing:border-box;width:\#(w)px;height:\#(h)px;background:\#(boxFill)"></div>"#
    }

    /// A length as CSS writes it: at most two decimals, none when whole.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let rounded = (value * 100).rounded() / 100
        if rounded == rounded.rounded(), let whole = Int64(checked: rounded), abs(whole) < 1_000_000_000_000_000 { return String(whole) }
        return String(rounded)
    }

    /// Text content: `&`, `<` and `>` escaped.
    static func text(_ text: String) -> String {
        escaped(text, quotes: false)
    }

    /// An attribute value between double quotes: `"` escaped too.
    static func attribute(_ text: String) -> String {
        escaped(text, quotes: true)
    }

    private static func escaped(_ text: String, quotes: Bool) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") || (quotes && $0 == UInt8(ascii: "\"")) }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where quotes: out += "&quot;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }
}
