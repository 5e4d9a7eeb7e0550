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

    /// A `srcset`: the candidates whose URL may stay, with their descriptors; nil when none may.
    static func srcset(_ value: String) -> String? {
        var kept: [String] = []
        // A candidate ends at a comma followed by white space or at the end; a data: URL's own commas are followed by
        // base64, not white space.
        for candidate in value.split(separator: ", ") {
            let parts = candidate.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
            guard let url = parts.first, allows(String(url), as: .resource) else { continue }
            kept.append(parts.joined(separator: " "))
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
