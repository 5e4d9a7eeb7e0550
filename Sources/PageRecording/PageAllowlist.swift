/// The elements and attributes a page record may keep (docs/SECURITY.md, "Page recordings"): what draws a page, never
/// what runs, fetches by itself, navigates or submits. An element not listed becomes a `span` with its children (a
/// page's own tags still show their text); one listed in `dropped` goes with everything in it; one in `boxes` becomes a
/// box of its size.
enum PageAllowlist {
    static let htmlElements: Set<String> = [
        "html", "head", "body", "title", "style", "link",
        "div", "span", "p", "a", "img", "picture", "source", "br", "hr", "wbr",
        "h1", "h2", "h3", "h4", "h5", "h6", "header", "footer", "main", "nav", "section", "article", "aside",
        "address", "hgroup", "search", "ul", "ol", "li", "dl", "dt", "dd", "menu", "figure", "figcaption",
        "blockquote", "pre", "code", "kbd", "samp", "var", "em", "strong", "b", "i", "u", "s", "small", "big",
        "mark", "q", "cite", "abbr", "dfn", "time", "data", "sub", "sup", "bdi", "bdo", "ruby", "rt", "rp",
        "ins", "del", "label", "button", "input", "textarea", "select", "option", "optgroup", "fieldset",
        "legend", "form", "output", "progress", "meter", "datalist", "details", "summary", "dialog",
        "table", "caption", "colgroup", "col", "thead", "tbody", "tfoot", "tr", "th", "td",
        "map", "area", "slot", "center", "font", "strike", "tt", "nobr",
    ]
    /// SVG's drawing elements, in SVG's case. Animation elements are left out: they can set `href` to a script URL.
    static let svgElements: Set<String> = [
        "svg", "g", "defs", "symbol", "use", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
        "text", "tspan", "textPath", "title", "desc", "image", "clipPath", "mask", "pattern", "marker",
        "linearGradient", "radialGradient", "stop", "filter", "feBlend", "feColorMatrix", "feComponentTransfer",
        "feComposite", "feFlood", "feGaussianBlur", "feMerge", "feMergeNode", "feMorphology", "feOffset",
        "feDropShadow", "feFuncA", "feFuncB", "feFuncG", "feFuncR", "feTurbulence", "feDisplacementMap",
        "feTile", "switch", "view", "metadata", "style", "a", "foreignObject",
    ]
    /// Gone with everything in them: script, markup that is not shown, what redirects, frames or plays content.
    static let dropped: Set<String> = [
        "script", "noscript", "template", "base", "meta", "frameset", "param", "math", "xmp", "plaintext",
        "animate", "animateMotion", "animateTransform", "set", "discard", "handler", "listener",
    ]
    /// Drawn as boxes: other documents and plug-ins (the phone sends them as boxes already).
    static let boxes: Set<String> = ["iframe", "frame", "object", "embed", "applet", "portal", "fencedframe",
                                     "canvas", "video", "audio"]

    /// A custom element's name (`my-card`): no behaviour without its script, its children shown.
    static func isCustomElement(_ tag: String) -> Bool {
        guard let first = tag.unicodeScalars.first, ("a"..."z").contains(first), tag.contains("-"), tag.utf8.count <= 64 else { return false }
        return tag.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "." || $0 == "_" }
    }

    /// Attributes that go whatever their value: markup as text, form targets, fetches the page did not ask for, a
    /// nonce, what moves focus or names a meta refresh.
    static let droppedAttributes: Set<String> = [
        "srcdoc", "action", "formaction", "formtarget", "formmethod", "http-equiv", "ping", "nonce", "integrity",
        "autofocus", "attributename", "is", "popovertarget", "popovertargetaction", "xlink:actuate", "xlink:show",
    ]
    /// Attributes whose value is a URL.
    static let urlAttributes: Set<String> = [
        "href", "src", "xlink:href", "poster", "background", "cite", "longdesc", "data", "lowsrc", "dynsrc",
        "codebase", "manifest", "usemap", "profile", "itemtype", "icon",
    ]
    static let srcsetAttributes: Set<String> = ["srcset", "imagesrcset"]
    /// The only `rel` a `link` may keep: a stylesheet, whose rules the record carries.
    static let linkRel = "stylesheet"

    /// Whether `name` is an attribute name a browser's setAttribute takes (XML's Name, ASCII), at most 128 bytes.
    static func isAttributeName(_ name: String) -> Bool {
        let scalars = name.unicodeScalars
        guard let first = scalars.first, scalars.count <= 128,
              ("a"..."z").contains(first) || ("A"..."Z").contains(first) || first == "_" || first == ":" else { return false }
        return scalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
            || $0 == "-" || $0 == "_" || $0 == ":" || $0 == "." }
    }

    /// Whether the attribute goes whatever its value: an event handler (`on…`) or one of `droppedAttributes`.
    static func isDropped(_ name: String) -> Bool {
        let key = name.lowercased()
        return key.hasPrefix("on") || droppedAttributes.contains(key)
    }

    /// The value `name` may keep (`value` sanitised), or nil: the attribute goes. `link` tells whether an `href` is
    /// where a link goes (an `a`, an `area`, or unknown in a mutation) rather than something fetched.
    static func attribute(_ name: String, _ value: String, link: Bool) -> String? {
        guard isAttributeName(name), !isDropped(name) else { return nil }
        let key = name.lowercased()
        if key == "style" { return PageStyles.sanitise(value) }
        if srcsetAttributes.contains(key) { return PageURLs.srcset(value) }
        if urlAttributes.contains(key) {
            let use: PageURLs.Use = link && key.hasSuffix("href") ? .link : .resource
            return PageURLs.allows(value, as: use) ? value : nil
        }
        return value
    }
}
