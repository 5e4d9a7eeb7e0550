import Foundation
@testable import PageRecording
import Testing

/// The allowlist on a hostile page: what runs, fetches by itself or navigates never survives; what draws the page does.
@Suite struct PageSanitizerTests {
    /// Sanitises `record` (a Swift value written as JSON) as a device's record on its way into the file.
    func stored(_ record: Any, as pageClass: PageRecordClass = .snapshot) -> [String: Any]? {
        var sanitizer = PageRecordSanitizer(mode: .storing(assetBytes: 1 << 20))
        let json = try! JSONSerialization.data(withJSONObject: record)
        guard let out = sanitizer.sanitise(Array(json), as: pageClass) else { return nil }
        return try! JSONSerialization.jsonObject(with: Data(out)) as? [String: Any]
    }

    func snapshot(_ children: [Any]) -> [String: Any] {
        ["s": 1, "n": 0, "doctype": "html", "root": ["i": 1, "c": [["i": 2, "t": "html", "c": [["i": 3, "t": "body", "c": children]]]]]]
    }

    /// The body's children of a sanitised snapshot.
    func body(_ out: [String: Any]?) -> [[String: Any]] {
        let root = out?["root"] as? [String: Any]
        let html = (root?["c"] as? [[String: Any]])?.first
        let body = (html?["c"] as? [[String: Any]])?.first
        return body?["c"] as? [[String: Any]] ?? []
    }

    @Test func keepsWhatDrawsThePage() {
        let out = stored(snapshot([
            ["i": 4, "t": "h1", "a": ["class": "title", "style": "color: red; background: url(https://app.example.org/a.png)"],
             "c": [["i": 5, "x": "Bar app"]]],
            ["i": 6, "t": "svg", "a": ["viewBox": "0 0 10 10"], "c": [["i": 7, "t": "linearGradient", "a": ["id": "g"]]]],
            ["i": 8, "t": "img", "a": ["src": "data:image/png;base64,iVBORw0KGgo=", "srcset": "https://app.example.org/b.png 2x"]],
            ["i": 9, "t": "my-card", "c": [["i": 10, "x": "custom"]]],
        ]))
        let children = body(out)
        #expect(children.count == 4)
        #expect(children[0]["t"] as? String == "h1")
        #expect((children[0]["a"] as? [String: String])?["style"] == "color: red; background: url(https://app.example.org/a.png)")
        #expect(((children[0]["c"] as? [[String: Any]])?.first?["x"]) as? String == "Bar app")
        #expect((children[1]["a"] as? [String: String])?["viewBox"] == "0 0 10 10")
        #expect(((children[1]["c"] as? [[String: Any]])?.first?["t"]) as? String == "linearGradient")
        #expect((children[2]["a"] as? [String: String])?["srcset"] == "https://app.example.org/b.png 2x")
        #expect(children[3]["t"] as? String == "my-card")
        #expect(out?["doctype"] as? String == "html")
    }

    @Test func dropsScriptsHandlersAndWhatNavigates() throws {
        let out = stored(snapshot([
            ["i": 4, "t": "script", "c": [["i": 5, "x": "alert(1)"]]],
            ["i": 6, "t": "SCRIPT"],
            ["i": 7, "t": "a", "a": ["href": "javascript:alert(1)", "onclick": "alert(1)", "OnMouseOver": "x", "title": "ok"]],
            ["i": 8, "t": "a", "a": ["href": " java\tscript:alert(1)"]],
            ["i": 9, "t": "iframe", "a": ["srcdoc": "<script>alert(1)</script>", "src": "https://evil.example"], "w": 300, "h": 150],
            ["i": 10, "t": "meta", "a": ["http-equiv": "refresh", "content": "0;url=https://evil.example"]],
            ["i": 11, "t": "base", "a": ["href": "https://evil.example/"]],
            ["i": 12, "t": "object", "a": ["data": "https://evil.example/x.swf"]],
            ["i": 13, "t": "form", "a": ["action": "https://evil.example/steal", "class": "f"], "c": [
                ["i": 14, "t": "button", "a": ["formaction": "javascript:alert(1)"]]]],
            ["i": 15, "t": "svg", "c": [["i": 16, "t": "script"], ["i": 17, "t": "animate", "a": ["attributeName": "href", "to": "javascript:alert(1)"]],
                                        ["i": 18, "t": "use", "a": ["href": "data:image/svg+xml,<svg onload=alert(1)>"]]]],
            ["i": 19, "t": "img", "a": ["src": "data:text/html,<script>alert(1)</script>", "onerror": "alert(1)"]],
            ["i": 20, "t": "link", "a": ["rel": "import", "href": "https://evil.example/x.html"]],
            ["i": 21, "t": "noscript", "c": [["i": 22, "x": "hidden"]]],
            ["i": 23, "t": "style", "c": [["i": 24, "x": "body { background: url(javascript:alert(1)) }"]], "css": "p{}"],
        ]))
        let json = String(decoding: try JSONSerialization.data(withJSONObject: out as Any), as: UTF8.self).lowercased()
        for forbidden in ["script", "alert", "onclick", "onmouseover", "onerror", "srcdoc", "refresh", "evil.example", "formaction", "animate", "hidden"] {
            #expect(!json.contains(forbidden), "\(forbidden) survived: \(json)")
        }
        let children = body(out)
        // The link's title stays; the iframe is a box of its size; the form keeps its class; the style its rules only.
        #expect((children.first { $0["i"] as? Int == 7 }?["a"] as? [String: String]) == ["title": "ok"])
        let frame = children.first { $0["i"] as? Int == 9 }
        #expect(frame?["t"] as? String == "iframe" && frame?["w"] as? Int == 300 && frame?["a"] == nil)
        #expect((children.first { $0["i"] as? Int == 13 }?["a"] as? [String: String]) == ["class": "f"])
        let style = children.first { $0["i"] as? Int == 23 }
        #expect(style?["css"] as? String == "p{}" && style?["c"] == nil)
    }

    @Test func cssKeepsOnlyURLsThatMayBeFetched() {
        let cases: [(String, String)] = [
            // An unquoted URL ends at the first `)`, as a browser reads it: what follows stays, inert.
            ("a { background: url(javascript:alert(1)) }", "a { background: none) }"),
            ("a { background: u\\72l(javascript:alert(1)) }", "a { background: none) }"),
            ("a { background: url( 'java\\73 cript:alert(1)' ) }", "a { background: none }"),
            ("a { background: URL(\"https://app.example.org/a.png\") }", "a { background: URL(\"https://app.example.org/a.png\") }"),
            ("a { background: url(data:image/png;base64,AAAA) }", "a { background: url(data:image/png;base64,AAAA) }"),
            ("a { background: url(data:image/svg+xml;utf8,<svg onload=alert(1)>) }", "a { background: none>) }"),
            ("a { width: expression(alert(1)); behavior: url(x.htc); -moz-binding: url(x.xml#b) }", "a { width: none; x-removed: none; x-removed: none }"),
            ("@import \"javascript:alert(1)\"; p { color: red }", " p { color: red }"),
            ("@import url(https://app.example.org/x.css); p{}", "@import url(https://app.example.org/x.css); p{}"),
            ("a { background: image-set(\"javascript:x\" 1x, \"https://app.example.org/a.png\" 2x) }",
             "a { background: image-set(\"\" 1x, \"https://app.example.org/a.png\" 2x) }"),
            ("a { content: \"url(javascript:alert(1))\" }", "a { content: \"url(javascript:alert(1))\" }"),
            ("/* url(javascript:x) */ a{}", "/* url(javascript:x) */ a{}"),
            ("a { background: url(javascript:alert(1)", "a { background: none"),
        ]
        for (css, expected) in cases {
            #expect(PageStyles.sanitise(css) == expected, "\(css)")
            #expect(PageStyles.sanitise(expected) == expected, "not idempotent: \(expected)")
        }
    }

    @Test func urlsByTheirScheme() {
        #expect(PageURLs.allows("https://app.example.org/x", as: .resource))
        #expect(PageURLs.allows("#icon", as: .resource))
        #expect(PageURLs.allows("mailto:a@b.c", as: .link))
        // Every URL of a srcset is checked, however its commas are spaced; a data: URL keeps its own commas.
        #expect(PageURLs.srcset("https://a.test/a.png 1x,javascript:alert(1) 2x") == "https://a.test/a.png 1x")
        #expect(PageURLs.srcset("javascript:x,, https://a.test/b.png  2x") == "https://a.test/b.png 2x")
        #expect(PageURLs.srcset("data:image/png;base64,AA,BB 1x, https://a.test/c.png 480w") == "data:image/png;base64,AA,BB 1x, https://a.test/c.png 480w")
        #expect(PageURLs.srcset("javascript:x 1x") == nil)
        #expect(!PageURLs.allows("mailto:a@b.c", as: .resource))
        for url in ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "\u{1}javascript:x", "java\nscript:x", "vbscript:x",
                    "data:text/html,x", "blob:https://a/b", "file:///etc/passwd", "/relative", "https:evil", "data:image/svg+xml,x"] {
            #expect(!PageURLs.allows(url, as: .link), "\(url)")
        }
    }

    @Test func mutationsAreSanitisedToo() {
        let out = stored(["s": 1, "n": 3,
                          "rm": [5, -1, 2.5, "x"],
                          "add": [["p": 3, "b": NSNull(), "n": ["i": 40, "t": "script"]],
                                  ["p": 3, "b": 7, "n": ["i": 41, "t": "p", "a": ["onclick": "x"], "c": [["i": 42, "x": "hi"]]]]],
                          "attr": [[7, "onclick", "alert(1)"], [7, "href", "javascript:x"], [7, "class", "b"], [7, "title", NSNull()]],
                          "text": [[42, "hello"], [43, 5]],
                          "css": [[9, "a{background:url(javascript:x)}"]]] as [String: Any], as: .mutations)
        #expect(out?["rm"] as? [Int] == [5])
        let added = out?["add"] as? [[String: Any]]
        #expect(added?.count == 1)
        #expect((added?.first?["n"] as? [String: Any])?["a"] == nil)
        let attributes = out?["attr"] as? [[Any]]
        #expect(attributes?.count == 3)
        #expect(attributes?[0][1] as? String == "href" && attributes?[0][2] is NSNull)
        #expect(attributes?[1][2] as? String == "b")
        #expect((out?["text"] as? [[Any]])?.count == 1)
        let svgChange = stored(["s": 1, "n": 4, "add": [["p": 30, "b": NSNull(), "n": ["i": 50, "t": "linearGradient", "c": [["i": 51, "t": "stop"]]]]]],
                               as: .mutations)
        let gradient = (svgChange?["add"] as? [[String: Any]])?.first?["n"] as? [String: Any]
        #expect(gradient?["t"] as? String == "linearGradient", "an SVG element added by a change keeps its case")
        #expect(((out?["css"] as? [[Any]])?.first?[1]) as? String == "a{background:none}")
    }

    @Test func absurdNumbersAndShapes() {
        let viewport = stored(["s": 1, "n": 2, "w": 1e300, "h": 800, "o": "sideways", "z": -1], as: .viewport)
        #expect(viewport?["w"] as? Int == 100_000 && viewport?["o"] == nil && viewport?["z"] == nil)
        #expect(stored(["s": 1], as: .viewport) == nil)
        #expect(stored(["n": 0, "root": ["i": 1]]) == nil)
        var sanitizer = PageRecordSanitizer(mode: .serving)
        let notJSON = sanitizer.sanitise(Array("not json".utf8), as: .snapshot)
        #expect(notJSON == nil)
        // Nesting beyond what anything reads: refused or cut, never a crash.
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let tooDeep = sanitizer.sanitise(Array("{\"s\":1,\"n\":0,\"scroll\":\(deep)}".utf8), as: .scroll)
        #expect(tooDeep == nil)
        var node: [String: Any] = ["i": 1000, "x": "deep"]
        for depth in (4..<999).reversed() { node = ["i": depth, "t": "div", "c": [node]] }
        let out = stored(snapshot([node]))
        var level = body(out).first
        var levels = 0
        while let next = (level?["c"] as? [[String: Any]])?.first { level = next; levels += 1 }
        #expect(levels < PageNodeSanitizer.maxDepth)
    }

    @Test func longStylesheetsBecomeAssetsOnceAndServingKeepsThem() throws {
        let rules = String(repeating: "p { color: red } ", count: 100)
        var storing = PageRecordSanitizer(mode: .storing(assetBytes: 512))
        let record = try JSONSerialization.data(withJSONObject: snapshot([
            ["i": 4, "t": "style", "css": rules], ["i": 5, "t": "style", "css": rules], ["i": 6, "t": "style", "css": "a{}"]]))
        let storedRecord = storing.sanitise(Array(record), as: .snapshot)
        let stored = try #require(storedRecord)
        #expect(storing.assets.count == 1 && storing.assets.first?.css == rules)
        let sha = try #require(storing.assets.first?.sha256)
        #expect(String(decoding: stored, as: UTF8.self).contains(#"{"$asset":"\#(sha)"}"#))
        var serving = PageRecordSanitizer(mode: .serving)
        let served = serving.sanitise(stored, as: .snapshot)
        #expect(served == stored)
        // A device may not name assets itself: its reference is dropped, not served.
        var again = PageRecordSanitizer(mode: .storing(assetBytes: 512))
        let namedRecord = again.sanitise(stored, as: .snapshot)
        let named = try #require(namedRecord)
        #expect(!String(decoding: named, as: UTF8.self).contains("$asset"))
    }
}
