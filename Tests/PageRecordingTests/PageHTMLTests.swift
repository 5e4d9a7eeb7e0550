import Foundation
@testable import PageRecording
import Testing

/// The page as a static document: what the allowlist keeps, escaped so that nothing in a record becomes markup.
@Suite struct PageHTMLTests {
    func page(_ children: [Any], extra: [String: Any] = [:]) -> PageTree {
        var page = PageTree()
        page.apply(.snapshot, dom: pageSnapshot(children, extra: extra))
        return page
    }

    /// A tree as a device might send it, not sanitised: what the renderer itself lets through.
    func unsanitised(_ children: [Any]) -> PageTree {
        var page = PageTree()
        let record = PageJSON.parse(pageSnapshot(children))!
        _ = page.apply(.snapshot, record: record)
        return page
    }

    @Test func writesTheDocumentWithItsTextAndAttributes() {
        let html = PageHTML(head: "<meta name=x>").document(page([
            ["i": 5, "t": "h1", "a": ["class": "title", "style": "color: red"], "c": [["i": 6, "x": "Bar app"]]],
            ["i": 7, "t": "button", "c": [["i": 8, "x": "Open details"]]],
            ["i": 9, "t": "img", "a": ["src": "data:image/png;base64,iVBORw0KGgo=", "alt": "logo"]],
            ["i": 10, "t": "br"],
        ]))
        #expect(html == #"<!DOCTYPE html><html><head><meta name=x></head><body><h1 class="title" style="color: red">Bar app</h1>"#
            + #"<button>Open details</button><img alt="logo" src="data:image/png;base64,iVBORw0KGgo="><br></body></html>"#)
    }

    /// A text `</style><script>` and an attribute with quotes stay text; rules cannot end their style element.
    @Test func recordTextNeverBecomesMarkup() {
        let html = PageHTML().document(page([
            ["i": 5, "t": "p", "a": ["title": #"a" onmouseover="alert(1)"#, "data-x": "<b>&amp;"],
             "c": [["i": 6, "x": "</style><script>alert(1)</script> & more"]]],
            ["i": 7, "t": "style", "css": "p::after { content: \"</style><script>alert(2)</script>\" }"],
            ["i": 8, "t": "title", "c": [["i": 9, "x": "</title><script>alert(3)</script>"]]],
            ["i": 10, "t": "svg", "c": [["i": 11, "t": "style", "css": "</style><script>alert(4)</script>"]]],
        ]))
        #expect(html.contains(#"<p data-x="&lt;b&gt;&amp;amp;" title="a&quot; onmouseover=&quot;alert(1)">"#))
        #expect(html.contains("&lt;/style&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; more</p>"))
        #expect(html.contains(#"<style>p::after { content: "<\/style><script>alert(2)<\/script>" }</style>"#))
        #expect(html.contains("<title>&lt;/title&gt;&lt;script&gt;alert(3)&lt;/script&gt;</title>"))
        #expect(html.contains("<svg><style>&lt;/style&gt;&lt;script&gt;alert(4)&lt;/script&gt;</style></svg>"))
        // Only the one real end of the HTML style element, and no script element outside its rules.
        #expect(html.components(separatedBy: "</style>").count == 3)
        let outsideRules = html.replacingOccurrences(of: #"content: "<\/style><script>alert(2)<\/script>""#, with: "")
        #expect(!outsideRules.contains("<script"))
    }

    /// The renderer's own check, on a tree that did not pass the sanitiser: no script, handler, frame or plug-in.
    @Test func rendersOnlyWhatTheAllowlistAllowsWhateverTheTreeHolds() {
        let html = PageHTML().document(unsanitised([
            ["i": 5, "t": "script", "c": [["i": 6, "x": "alert(1)"]]],
            ["i": 7, "t": "a", "a": ["href": "javascript:alert(1)", "onclick": "alert(1)", "ONLOAD": "x", "title": "ok"], "c": [["i": 8, "x": "link"]]],
            ["i": 9, "t": "iframe", "a": ["srcdoc": "<script>alert(1)</script>"]],
            ["i": 10, "t": "object", "a": ["data": "https://evil.example/x.swf"]],
            ["i": 11, "t": "marquee", "c": [["i": 12, "x": "shown as a span"]]],
            ["i": 13, "t": "svg", "c": [["i": 14, "t": "script"], ["i": 15, "t": "animate", "a": ["attributeName": "href"]],
                                        ["i": 16, "t": "foo", "c": [["i": 17, "t": "circle", "a": ["r": "2", "onload": "x"]]]]]],
            ["i": 18, "t": "noscript", "c": [["i": 19, "x": "gone"]]],
            ["i": 20, "t": "div", "a": ["style": "background: url(javascript:alert(1))", "bad name": "x", "srcdoc": "<p>"]],
        ]))
        #expect(html.contains(#"<a title="ok">link</a>"#))
        #expect(html.contains("<span>shown as a span</span>"))
        #expect(html.contains(#"<svg><g><circle r="2"></circle></g></svg>"#))
        #expect(html.contains(#"<div style="background: none)"></div>"#), "the sanitiser's CSS: the URL token ends at its first )")
        for banned in ["<script", "alert", "onclick", "onload", "<iframe", "<object", "<animate", "<noscript", "gone", "srcdoc", "bad name"] {
            #expect(!html.lowercased().contains(banned.lowercased()), "\(banned)")
        }
    }

    /// Boxes are grey blocks of their size; images the document may not fetch are too, without a request.
    @Test func boxesAndImagesNotFetched() {
        let tree = page([
            ["i": 5, "t": "canvas", "w": 300, "h": 150.5],
            ["i": 6, "t": "img", "a": ["src": "https://app.example.org/a.png", "srcset": "https://app.example.org/b.png 2x", "width": "40"]],
            ["i": 7, "t": "svg", "c": [["i": 8, "t": "video", "w": 10, "h": 20], ["i": 9, "t": "use", "a": ["href": "#icon"]],
                                       ["i": 10, "t": "image", "a": ["href": "https://app.example.org/c.png"]]]],
            ["i": 11, "t": "div", "a": ["style": "background: url(https://app.example.org/d.png)"]],
        ])
        let html = PageHTML().document(tree)
        #expect(html.contains(##"<div data-mueval-box="canvas" style="display:inline-block;box-sizing:border-box;width:300px;height:150.5px;background:#ddd"></div>"##))
        #expect(html.contains(##"<img width="40" src="\##(PageHTML.blankImage)" data-mueval-box="img" style="background:#ddd">"##))
        #expect(html.contains(##"<rect data-mueval-box="video" width="10" height="20" fill="#ddd"></rect><use href="#icon"></use>"##))
        #expect(html.contains(#"<image href="\#(PageHTML.blankImage)" data-mueval-box="image"></image>"#))
        #expect(!html.contains("a.png") && !html.contains("b.png") && !html.contains("c.png"))
        #expect(html.contains("url(https://app.example.org/d.png)"), "CSS is left to the frame's policy")
        let remote = PageHTML(remoteImages: true).document(tree)
        #expect(remote.contains(#"<img src="https://app.example.org/a.png" srcset="https://app.example.org/b.png 2x" width="40">"#))
    }

    /// Stylesheets kept apart are resolved (and sanitised); the document's and a shadow root's constructed sheets come
    /// last; a shadow root is declarative; the caller's head goes first in the page's head.
    @Test func stylesheetsShadowRootsAndHead() {
        var page = PageTree()
        let sha = String(repeating: "ab", count: 32)
        page.apply(.snapshot, dom: pageJSON(["s": 1, "n": 0, "root": ["i": 1, "css": "body { margin: 0 }", "c": [
            ["i": 2, "t": "html", "a": ["lang": "en"], "c": [
                ["i": 4, "t": "head", "c": [["i": 5, "t": "style", "css": ["$asset": sha]], ["i": 6, "t": "link", "a": ["rel": "stylesheet", "href": "https://x.example/a.css"]]]],
                ["i": 3, "t": "body", "c": [["i": 7, "t": "my-card", "r": ["i": 8, "css": "b { color: blue }", "c": [["i": 9, "t": "b", "c": [["i": 10, "x": "in"]]]]]]]],
            ]],
        ]]]))
        let html = PageHTML(head: "<meta charset=utf-8>", asset: { $0 == sha ? "h1 { background: url(javascript:x) }" : nil }).document(page)
        #expect(html == #"<html lang="en"><head><meta charset=utf-8><style>h1 { background: none }</style></head><body>"#
            + #"<my-card><template shadowrootmode="open"><b>in</b><style>b { color: blue }</style></template></my-card></body>"#
            + "<style>body { margin: 0 }</style></html>")

        var headless = PageTree()
        headless.apply(.snapshot, dom: pageJSON(["s": 1, "n": 0, "root": ["i": 1, "c": [["i": 2, "t": "html", "c": [["i": 3, "t": "body"]]]]]]))
        #expect(PageHTML(head: "<meta charset=utf-8>").document(headless) == "<html><head><meta charset=utf-8></head><body></body></html>")
        #expect(PageHTML(head: "<meta charset=utf-8>").document(PageTree()) == "<meta charset=utf-8>")
    }

    /// The document scrolled: its root element is moved up by as much, so that the frame shows what the window did.
    @Test func theDocumentsScrollMovesThePageUp() {
        let html = PageHTML().document(page([["i": 5, "t": "p"]], extra: ["scroll": [[1, 0, 120.5], [5, 0, 30]]]))
        #expect(html.hasPrefix(#"<!DOCTYPE html><html style="position:relative!important;left:0px!important;top:-120.5px!important"><head>"#))
        #expect(PageHTML().document(page([], extra: ["scroll": [[1, 0, 0]]])).hasPrefix("<!DOCTYPE html><html><head>"))
    }

    @Test func deepPagesAreWrittenWithoutRecursion() {
        var page = PageTree()
        page.apply(.snapshot, dom: pageSnapshot([["i": 5, "t": "div"]]))
        // Each change nests one deeper than any one record could.
        for depth in 0..<2_000 {
            page.apply(.mutations, dom: pageMutations(n: depth + 1, ["add": [["p": 5 + depth, "b": NSNull(), "n": ["i": 6 + depth, "t": "div"]]]]))
        }
        let html = PageHTML().document(page)
        #expect(html.components(separatedBy: "<div>").count - 1 == PageHTML.maxDepth - 2)
        #expect(html.components(separatedBy: "<div>").count == html.components(separatedBy: "</div>").count)
    }
}
