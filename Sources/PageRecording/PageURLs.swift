/// Which URLs a page record may keep (docs/SECURITY.md, "Page recordings"): what a replay may fetch or link to,
/// never what runs. The replay's frame then decides by its own policy which of the kept origins it really fetches
/// from (`replay.remote_assets`).
enum PageURLs {
    /// The kinds of URL an attribute or a CSS `url()` holds.
    enum Use {
        /// Something fetched and shown: an image, a font, a stylesheet (`src`, `srcset`, `poster`, CSS `url()`).
        case resource
        /// Where a link goes (`href` of `a`, `area`): followed never (the frame's sandbox), kept for what it shows.
        case link
    }

    /// Image types a `data:` URL may carry: pixels only. SVG is left out: as a document it can hold script.
    private static let dataImages: Set<String> = ["image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp",
                                                  "image/avif", "image/bmp", "image/x-icon", "image/vnd.microsoft.icon"]

    /// Whether `value` may stay: http(s), a fragment (an SVG reference into the page), a pixel `data:` image;
    /// for a link also mailto: and tel:. Anything else (javascript:, vbscript:, data:text/html, blob:, file:,
    /// relative URLs, which the phone made absolute) goes.
    static func allows(_ value: String, as use: Use) -> Bool {
        let text = trimmed(value)
        if text.hasPrefix("#") { return true }
        guard let colon = text.firstIndex(of: ":") else { return false }
        let scheme = text[..<colon].lowercased()
        switch scheme {
        case "http", "https": return text.dropFirst(scheme.count + 1).hasPrefix("//")
        case "data":
            let type = text[text.index(after: colon)...].prefix { $0 != ";" && $0 != "," }.lowercased()
            return dataImages.contains(type)
        case "mailto", "tel": return use == .link
        default: return false
        }
    }

    /// Browsers ignore leading and trailing white space and control characters in a URL, and tabs and newlines
    /// anywhere in it (`java\nscript:`): so does this check, before it reads the scheme.
    private static func trimmed(_ value: String) -> String {
        String(String.UnicodeScalarView(value.unicodeScalars.filter { $0 != "\t" && $0 != "\n" && $0 != "\r" }))
            .trimmingControlsAndSpaces()
    }

    /// A `srcset`: the candidates whose URL may stay, with their descriptors; nil when none may. Read as HTML reads it:
    /// a URL runs to white space (a `data:` URL's commas are its own; commas that end it end the candidate), its
    /// descriptors to the next comma, so that every URL of the list is checked, `a.png 1x,javascript:x 2x` too.
    static func srcset(_ value: String) -> String? {
        var kept: [String] = []
        var rest = Substring(value)
        let space: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{0C}" }
        while true {
            rest = rest.drop { space($0) || $0 == "," }
            guard !rest.isEmpty else { break }
            var url = rest.prefix { !space($0) }
            rest = rest.dropFirst(url.count)
            var descriptors = Substring("")
            if url.last == "," {
                while url.last == "," { url = url.dropLast() }
            } else {
                descriptors = rest.prefix { $0 != "," }
                rest = rest.dropFirst(descriptors.count)
            }
            let words = descriptors.split(whereSeparator: space)
            if !url.isEmpty, allows(String(url), as: .resource) { kept.append(([url] + words).joined(separator: " ")) }
        }
        return kept.isEmpty ? nil : kept.joined(separator: ", ")
    }
}

extension String {
    /// Without the leading and trailing characters up to U+0020 that URL parsers strip.
    func trimmingControlsAndSpaces() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0.value > 0x20 }),
              let last = scalars.lastIndex(where: { $0.value > 0x20 }) else { return "" }
        return String(scalars[first...last])
    }
}
