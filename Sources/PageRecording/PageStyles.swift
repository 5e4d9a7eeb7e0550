/// CSS from a page record (a stylesheet's rules, a `style` attribute) made safe to apply in the lab's browser: every
/// URL it fetches must be one `PageURLs` keeps, and what once ran code in CSS (`expression()`, `behavior`,
/// `-moz-binding`) is gone. Everything else is kept as written, so that the page looks as it did.
///
/// Written by hand: no CSS parser is among the packages here, and only URLs matter, so this reads CSS's tokens as
/// far as they decide what is a URL (strings, comments, escapes, function names, `@import`), as browsers read them
/// (CSS Syntax Level 3): `u\72l(`, an escaped `url`, is still a URL.
struct PageStyles {
    private let scalars: [Unicode.Scalar]
    private var i = 0
    private var out = String.UnicodeScalarView()
    /// The parenthesis depth inside which strings are image URLs (`image-set("a.png" 1x)`), if in one.
    private var imageSetDepth: Int?
    private var depth = 0

    private static let urlFunctions: Set<String> = ["url", "src"]
    private static let imageSetFunctions: Set<String> = ["image-set", "-webkit-image-set", "image", "cross-fade", "-webkit-cross-fade"]
    private static let scriptFunctions: Set<String> = ["expression", "-moz-binding", "javascript"]
    private static let scriptProperties: Set<String> = ["behavior", "-moz-binding", "-ms-behavior"]

    /// `css` with what may not stay replaced (`url(javascript:…)` → `none`, an `@import` of one dropped).
    static func sanitise(_ css: String) -> String {
        var reader = PageStyles(scalars: Array(css.unicodeScalars))
        reader.run()
        return String(reader.out)
    }

    private init(scalars: [Unicode.Scalar]) {
        self.scalars = scalars
        out.reserveCapacity(scalars.count)
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        i + offset < scalars.count ? scalars[i + offset] : nil
    }

    private mutating func emit(_ range: Range<Int>) {
        out.append(contentsOf: scalars[range])
    }

    private mutating func emit(_ text: String) {
        out.append(contentsOf: text.unicodeScalars)
    }

    private mutating func run() {
        while let c = peek() {
            if c == "/", peek(1) == "*" {
                let start = i
                skipComment()
                emit(start..<i)
            } else if c == "\"" || c == "'" {
                let start = i
                let text = readString()
                if imageSetDepth != nil, !PageURLs.allows(text, as: .resource) { emit("\"\"") } else { emit(start..<i) }
            } else if c == "@" {
                atRule()
            } else if startsIdentifier(at: i) {
                identifier()
            } else if c == "(" {
                depth += 1
                i += 1
                out.append(c)
            } else if c == ")" {
                if depth == imageSetDepth { imageSetDepth = nil }
                depth = max(depth - 1, 0)
                i += 1
                out.append(c)
            } else {
                i += 1
                out.append(c)
            }
        }
    }

    // MARK: Tokens

    private mutating func skipComment() {
        i += 2
        while i < scalars.count, !(scalars[i] == "*" && peek(1) == "/") { i += 1 }
        i = min(i + 2, scalars.count)
    }

    private func isNameScalar(_ c: Unicode.Scalar) -> Bool {
        c.value >= 0x80 || c == "-" || c == "_" || (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9")
    }

    private func startsIdentifier(at index: Int) -> Bool {
        guard index < scalars.count else { return false }
        let c = scalars[index]
        if c == "\\" { return index + 1 < scalars.count && scalars[index + 1] != "\n" }
        if c == "-" { return index + 1 < scalars.count && (isNameScalar(scalars[index + 1]) || scalars[index + 1] == "\\") }
        return isNameScalar(c) && !(c >= "0" && c <= "9")
    }

    /// Reads an escape after its backslash: 1 to 6 hex digits and one white space after them, or any one character.
    private mutating func readEscape() -> Unicode.Scalar {
        var hex: UInt32 = 0
        var digits = 0
        while digits < 6, let c = peek(), let value = Self.hexValue(c) {
            hex = hex * 16 + value
            digits += 1
            i += 1
        }
        if digits > 0 {
            if let c = peek(), c == " " || c == "\t" || c == "\n" { i += 1 }
            return Unicode.Scalar(hex).flatMap { $0.value == 0 ? nil : $0 } ?? "\u{FFFD}"
        }
        guard let c = peek() else { return "\u{FFFD}" }
        i += 1
        return c
    }

    private static func hexValue(_ c: Unicode.Scalar) -> UInt32? {
        switch c {
        case "0"..."9": c.value - 0x30
        case "a"..."f": c.value - 0x61 + 10
        case "A"..."F": c.value - 0x41 + 10
        default: nil
        }
    }

    /// A name with its escapes decoded, read from `i`.
    private mutating func readName() -> String {
        var name = String.UnicodeScalarView()
        while let c = peek() {
            if c == "\\", peek(1) != nil, peek(1) != "\n" {
                i += 1
                name.append(readEscape())
            } else if isNameScalar(c) {
                name.append(c)
                i += 1
            } else {
                break
            }
        }
        return String(name)
    }

    /// A quoted string's value, escapes decoded; `i` ends after its closing quote (or at a newline or the end).
    private mutating func readString() -> String {
        let quote = scalars[i]
        i += 1
        var value = String.UnicodeScalarView()
        while let c = peek(), c != quote, c != "\n" {
            if c == "\\" {
                i += 1
                if peek() == "\n" { i += 1 } else if peek() != nil { value.append(readEscape()) }
            } else {
                value.append(c)
                i += 1
            }
        }
        if peek() == quote { i += 1 }
        return String(value)
    }

    private mutating func skipWhitespace() {
        while let c = peek(), c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\u{0C}" { i += 1 }
    }

    // MARK: What decides a URL

    private mutating func identifier() {
        let start = i
        let name = readName().lowercased()
        if peek() == "(" {
            if Self.urlFunctions.contains(name) { return urlFunction(from: start) }
            if Self.scriptFunctions.contains(name) {
                skipArguments()
                return emit("none")
            }
            if Self.imageSetFunctions.contains(name), imageSetDepth == nil { imageSetDepth = depth + 1 }
            emit(start..<i)
            return
        }
        if Self.scriptProperties.contains(name) { return emit("x-removed") }
        emit(start..<i)
    }

    /// `url(…)` or `src(…)` from `start`, with `i` at its `(`: kept when its URL may stay, else `none`.
    private mutating func urlFunction(from start: Int) {
        if PageURLs.allows(readURLArgument(), as: .resource) { emit(start..<i) } else { emit("none") }
    }

    /// The URL of a `url(…)` or `src(…)` whose `(` is at `i`; `i` ends after its `)`.
    private mutating func readURLArgument() -> String {
        i += 1
        skipWhitespace()
        let url: String
        if let c = peek(), c == "\"" || c == "'" {
            url = readString()
            skipArguments(opened: true)
        } else {
            var value = String.UnicodeScalarView()
            while let c = peek(), c != ")" {
                if c == "\\" {
                    i += 1
                    if peek() != nil { value.append(readEscape()) }
                } else {
                    value.append(c)
                    i += 1
                }
            }
            if peek() == ")" { i += 1 }
            url = String(value).trimmingControlsAndSpaces()
        }
        return url
    }

    /// Skips a function's arguments to its closing parenthesis (nested ones, strings and comments included).
    private mutating func skipArguments(opened: Bool = false) {
        var level = opened ? 1 : 0
        while let c = peek() {
            if c == "\"" || c == "'" {
                _ = readString()
                continue
            }
            if c == "/", peek(1) == "*" {
                skipComment()
                continue
            }
            if c == "\\" {
                i += 1
                if peek() != nil { _ = readEscape() }
                continue
            }
            i += 1
            if c == "(" { level += 1 }
            if c == ")" {
                level -= 1
                if level <= 0 { return }
            }
        }
    }

    /// An at-rule's keyword; `@import` of a URL that may not stay is dropped with its whole rule.
    private mutating func atRule() {
        let start = i
        i += 1
        let name = readName().lowercased()
        guard name == "import" else { return emit(start..<i) }
        var allowed = false
        skipWhitespace()
        if let c = peek(), c == "\"" || c == "'" {
            allowed = PageURLs.allows(readString(), as: .resource)
        } else if startsIdentifier(at: i), Self.urlFunctions.contains(readName().lowercased()), peek() == "(" {
            allowed = PageURLs.allows(readURLArgument(), as: .resource)
        }
        while let c = peek(), c != ";" {
            if c == "\"" || c == "'" { _ = readString() } else { i += 1 }
        }
        if peek() == ";" { i += 1 }
        if allowed { emit(start..<i) }
    }
}
