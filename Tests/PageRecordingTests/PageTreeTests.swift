import Foundation
@testable import PageRecording
import Testing

/// Records as JSON bytes, from Swift values.
func pageJSON(_ value: Any) -> [UInt8] {
    Array(try! JSONSerialization.data(withJSONObject: value))
}

/// A snapshot (number `s`) of a document whose body (id 3) holds `children`; the head is id 4.
func pageSnapshot(s: Int = 1, _ children: [Any], extra: [String: Any] = [:]) -> [UInt8] {
    var record: [String: Any] = ["s": s, "n": 0, "doctype": "html", "viewport": ["w": 390, "h": 844, "o": "portrait"],
                                 "root": ["i": 1, "c": [["i": 2, "t": "html", "c": [["i": 4, "t": "head"], ["i": 3, "t": "body", "c": children]]]]]]
    record.merge(extra) { $1 }
    return pageJSON(record)
}

func pageMutations(s: Int = 1, n: Int, _ changes: [String: Any]) -> [UInt8] {
    pageJSON(changes.merging(["s": s, "n": n]) { $1 })
}

extension PageTree {
    /// The body's children as tags and text, for short expectations: `h1(Bar app)`, `"text"`.
    var bodyOutline: String { outline(of: 3) }

    func outline(of id: Int64) -> String {
        (nodes[id]?.children ?? []).map { child -> String in
            guard let node = nodes[child] else { return "?" }
            switch node.kind {
            case .text(let text): return "\"\(text)\""
            case .element(let tag, _): return node.children.isEmpty ? tag : "\(tag)(\(outline(of: child)))"
            case .sheet(let tag, _): return tag
            case .box(let tag, _, _, _): return "[\(tag)]"
            case .document, .shadowRoot: return "#"
            }
        }.joined(separator: " ")
    }
}

/// The page model: snapshot, then changes in the documented order, the gap rule, and the page at a time.
@Suite struct PageTreeTests {
    @Test func aSnapshotMakesThePage() {
        var page = PageTree()
        #expect(!page.hasPage)
        let took1 = page.apply(.snapshot, dom: pageSnapshot([["i": 5, "t": "h1", "c": [["i": 6, "x": "Bar app"]]], ["i": 7, "x": "hello"]],
                                                        extra: ["scroll": [[1, 0, 120]], "focus": 5]))
        #expect(took1)
        #expect(page.hasPage && page.standardsMode)
        #expect(page.bodyOutline == #"h1("Bar app") "hello""#)
        #expect(page.viewport == PageTree.Viewport(width: 390, height: 844))
        #expect(page.documentScroll == PageTree.Offset(x: 0, y: 120))
        #expect(page.focus == 5)
        let took2 = page.apply(.mutations, dom: pageJSON(["n": 1]))
        #expect(!took2, "no s: no record")
        let took3 = page.apply(.snapshot, dom: Array("not json".utf8))
        #expect(!took3)
    }

    /// rm, then add, then attr, then text, then css: an id removed can come back in the same record, and the record's
    /// attributes, texts and rules reach nodes it added.
    @Test func mutationsApplyInTheDocumentedOrder() {
        var page = PageTree()
        page.apply(.snapshot, dom: pageSnapshot([["i": 5, "t": "h1", "c": [["i": 6, "x": "Bar app"]]], ["i": 7, "t": "div"]]))
        let took4 = page.apply(.mutations, dom: pageMutations(n: 1, [
            "css": [[8, "p { color: red }"]],
            "text": [[10, "new text"]],
            "attr": [[9, "class", "added"], [7, "id", "box"]],
            "add": [["p": 7, "b": NSNull(), "n": ["i": 5, "t": "h2", "c": [["i": 10, "x": "old text"]]]],
                    ["p": 4, "b": NSNull(), "n": ["i": 8, "t": "style"]],
                    ["p": 3, "b": 7, "n": ["i": 9, "t": "p"]]],
            "rm": [5],
        ]))
        #expect(took4)
        #expect(page.bodyOutline == #"p div(h2("new text"))"#)
        #expect(page.nodes[9]?.attributes == ["class": "added"])
        #expect(page.nodes[7]?.attributes == ["id": "box"])
        #expect(page.nodes[8]?.css == .text("p { color: red }"))
        #expect(page.nodes[6] == nil, "the removed heading's text went with it")
        #expect(page.nodes[5]?.parent == 7)
    }

    /// A node whose id the page has is taken from where it was and replaced; an unknown parent skips the entry; a node
    /// cannot be put into itself.
    @Test func aKnownIdIsMovedAndReplaced() {
        var page = PageTree()
        page.apply(.snapshot, dom: pageSnapshot([["i": 5, "t": "ul", "c": [["i": 6, "t": "li", "c": [["i": 7, "x": "one"]]],
                                                                         ["i": 8, "t": "li", "c": [["i": 9, "x": "two"]]]]],
                                                 ["i": 10, "t": "div"]]))
        page.apply(.mutations, dom: pageMutations(n: 1, ["add": [
            ["p": 5, "b": 6, "n": ["i": 8, "t": "li", "a": ["class": "moved"], "c": [["i": 9, "x": "two"]]]],
            ["p": 99, "b": NSNull(), "n": ["i": 11, "t": "p"]],
            ["p": 6, "b": NSNull(), "n": ["i": 6, "t": "li"]],
            ["p": 10, "b": NSNull(), "n": ["i": 7, "x": "one, again"]],
        ]]))
        #expect(page.bodyOutline == #"ul(li("two") li) div("one, again")"#)
        #expect(page.nodes[8]?.attributes == ["class": "moved"])
        #expect(page.nodes[11] == nil)
        #expect(page.nodes[6]?.children.isEmpty == true, "its text was moved out")
    }

    /// A gap in `n` is a lost record: changes wait for the next snapshot; scroll, viewport and focus are whole states.
    @Test func aGapStopsChangesUntilTheNextSnapshot() {
        var page = PageTree()
        page.apply(.snapshot, dom: pageSnapshot([["i": 5, "t": "p", "c": [["i": 6, "x": "zero"]]]]))
        let took5 = page.apply(.mutations, dom: pageMutations(n: 1, ["text": [[6, "one"]]]))
        #expect(took5)
        let took6 = page.apply(.mutations, dom: pageMutations(n: 1, ["text": [[6, "one again"]]]))
        #expect(!took6, "applied already")
        let took7 = page.apply(.mutations, dom: pageMutations(n: 3, ["text": [[6, "three"]]]))
        #expect(!took7)
        #expect(page.frozen)
        let took8 = page.apply(.mutations, dom: pageMutations(n: 4, ["text": [[6, "four"]]]))
        #expect(!took8)
        let took9 = page.apply(.scroll, dom: pageMutations(n: 5, ["scroll": [[1, 0, 40]]]))
        #expect(took9)
        let took10 = page.apply(.viewport, dom: pageMutations(n: 6, ["w": 844, "h": 390, "o": "landscape"]))
        #expect(took10)
        #expect(page.bodyOutline == #"p("one")"#)
        #expect(page.documentScroll == PageTree.Offset(x: 0, y: 40))
        #expect(page.viewport == PageTree.Viewport(width: 844, height: 390))
        let took11 = page.apply(.mutations, dom: pageMutations(s: 2, n: 1, ["text": [[6, "another snapshot's"]]]))
        #expect(!took11, "its snapshot is not here")

        let took12 = page.apply(.snapshot, dom: pageSnapshot(s: 2, [["i": 5, "t": "p", "c": [["i": 6, "x": "healed"]]]]))
        #expect(took12)
        #expect(!page.frozen)
        let took13 = page.apply(.mutations, dom: pageMutations(s: 2, n: 1, ["text": [[6, "changed again"]]]))
        #expect(took13)
        #expect(page.bodyOutline == #"p("changed again")"#)
    }

    @Test func changesBeforeTheFirstSnapshotAreNotApplied() {
        var page = PageTree()
        let took14 = page.apply(.mutations, dom: pageMutations(n: 1, ["rm": [3]]))
        #expect(!took14)
        let took15 = page.apply(.scroll, dom: pageMutations(n: 2, ["scroll": [[1, 0, 40]]]))
        #expect(!took15)
        #expect(!page.hasPage)
    }

    /// The page at a time: every record stored up to the first one after it, whatever order the times are asked in.
    @Test func thePageAtATime() {
        let records: [(PageRecordClass, Double, [UInt8])] = [
            (.snapshot, 10, pageSnapshot([["i": 5, "t": "h1", "c": [["i": 6, "x": "Bar app"]]]])),
            (.mutations, 11, pageMutations(n: 1, ["text": [[6, "Bar app, details"]]])),
            (.scroll, 12, pageMutations(n: 2, ["scroll": [[1, 0, 300]]])),
            (.snapshot, 20, pageSnapshot(s: 2, [["i": 5, "t": "h1", "c": [["i": 6, "x": "Details"]]]])),
        ]
        var sampler = PageSampler(times: [11.5, 5, 30, 11, .nan, 12])
        for (pageClass, time, dom) in records { sampler.add(pageClass, time: time, dom: dom) }
        let pages = sampler.finish()
        #expect(pages.map { $0?.bodyOutline } == [#"h1("Bar app, details")"#, nil, #"h1("Details")"#, #"h1("Bar app, details")"#, nil,
                                                  #"h1("Bar app, details")"#])
        #expect(pages[0]?.documentScroll == nil && pages[5]?.documentScroll == PageTree.Offset(x: 0, y: 300))
        #expect(PageTree.at(10.5, records: records)?.bodyOutline == #"h1("Bar app")"#)
        #expect(PageTree.at(9, records: records) == nil)
    }

    /// Shadow roots, SVG's namespace from `svg` down (HTML again in a foreignObject), boxes and stylesheets.
    @Test func namespacesShadowRootsBoxesAndSheets() {
        var page = PageTree()
        page.apply(.snapshot, dom: pageSnapshot([
            ["i": 5, "t": "my-card", "r": ["i": 6, "c": [["i": 7, "t": "b", "c": [["i": 8, "x": "inside"]]]], "css": "b { color: blue }"]],
            ["i": 9, "t": "svg", "c": [["i": 10, "t": "foreignObject", "c": [["i": 11, "t": "div"]]], ["i": 12, "t": "clipPath"]]],
            ["i": 13, "t": "canvas", "w": 300, "h": 150.5],
            ["i": 14, "t": "link", "a": ["rel": "stylesheet", "href": "https://cdn.example.org/x.css", "media": "print"]],
        ]))
        #expect(page.nodes[5]?.shadow == 6)
        #expect(page.nodes[6]?.css == .text("b { color: blue }"))
        #expect(page.outline(of: 6) == #"b("inside")"#)
        #expect(page.nodes[10]?.kind == .element("foreignObject", svg: true))
        #expect(page.nodes[11]?.kind == .element("div", svg: false))
        #expect(page.nodes[12]?.kind == .element("clipPath", svg: true))
        #expect(page.nodes[13]?.kind == .box("canvas", width: 300, height: 150.5, svg: false))
        #expect(page.nodes[14]?.kind == .sheet("link", svg: false) && page.nodes[14]?.css == nil)
        #expect(page.nodes[14]?.attributes == ["media": "print"])
        page.apply(.mutations, dom: pageMutations(n: 1, ["rm": [5]]))
        #expect(page.nodes[6] == nil && page.nodes[8] == nil, "the shadow root went with its host")
    }
}
