// page-builder.js and page-nodes.js: a snapshot built in the frame's document, every kind of change in the
// documented order, a node moved or recorded again, a gap in `n`, scroll, viewport and focus.

import assert from "node:assert/strict";
import { test } from "node:test";
import { FOCUS_OUTLINE } from "../../Sources/ConsoleServer/Resources/page-builder.js";
import { SVG_NS, bodyOf, markup } from "./frame-dom.js";
import { frame, mutations, play, record, snapshot } from "./fixtures.js";

const text = (i, x) => ({ i, x });
const el = (i, t, a, ...c) => ({ i, t, ...(a ? { a } : {}), ...(c.length ? { c } : {}) });

test("a snapshot is built through the DOM: elements, attributes, text, SVG in its namespace, HTML again in a foreignObject", () => {
  const { doc, builder } = frame();
  play(builder, snapshot([
    el(10, "h1", { class: "title" }, text(11, "Bar app")),
    el(12, "p", null, text(13, "Open "), el(14, "b", null, text(15, "details"))),
    el(16, "svg", { viewBox: "0 0 10 10" }, el(17, "linearGradient", { id: "g" }), el(18, "path", { d: "M0 0" }),
      el(19, "foreignObject", null, el(20, "div", null, text(21, "inside")))),
  ], { head: [el(5, "title", null, text(6, "Notes"))] }));
  assert.equal(bodyOf(doc), '<h1 class="title">Bar app</h1><p>Open <b>details</b></p>' +
    '<svg viewBox="0 0 10 10"><svg:linearGradient id="g"></svg:linearGradient><svg:path d="M0 0"></svg:path>' +
    "<svg:foreignObject><div>inside</div></svg:foreignObject></svg>");
  assert.equal(doc.body.childNodes[2].namespaceURI, SVG_NS);
  assert.equal(doc.body.childNodes[2].childNodes[0].localName, "linearGradient", "SVG keeps its case");
  assert.equal(doc.body.childNodes[2].childNodes[2].childNodes[0].namespaceURI, "http://www.w3.org/1999/xhtml");
  assert.equal(markup(doc.documentElement.childNodes[0]), "<head><title>Notes</title></head>");
  assert.equal(doc.childNodes[0].nodeType, 10, "the frame's doctype stays (standards mode)");
  assert.deepEqual(builder.applied, { id: builder.applied.id, t: 0 });
});

test("boxes are grey blocks of their size with their tag; stylesheets are <style> text from `css` only", () => {
  const { doc, builder } = frame();
  play(builder, snapshot([
    { i: 10, t: "canvas", w: 300, h: 150.5 },
    { i: 11, t: "div", w: 390, h: 40 },
    el(12, "svg", null, { i: 13, t: "video", w: 20, h: 10 }),
  ], { head: [
    { i: 5, t: "style", css: "h1 { color: red }" },
    { i: 6, t: "link", a: { rel: "stylesheet", href: "https://app.example.org/a.css" }, css: ".a { color: blue }" },
    { i: 7, t: "style", c: [text(8, "body { display: none }")] },
  ] }));
  const [canvas, block] = doc.body.childNodes;
  assert.equal(canvas.localName, "div");
  assert.equal(canvas.getAttribute("data-mueval-box"), "canvas");
  assert.equal(canvas.style.width, "300px");
  assert.equal(canvas.style.height, "150.5px");
  assert.equal(canvas.style.display, "inline-block");
  assert.equal(block.style.display, "block");
  assert.ok(canvas.style.background, "a fill");
  const rect = doc.body.childNodes[2].childNodes[0];
  assert.equal(markup(rect), '<svg:rect width="20" height="10" fill="#e3e6ea" data-mueval-box="video"></svg:rect>');
  const head = doc.documentElement.childNodes[0];
  assert.equal(markup(head), "<head><style>h1 { color: red }</style><style>.a { color: blue }</style><style></style></head>",
    "a link with rules is a <style>; a style's text children are never its text");
});

test("open shadow roots are attached with their css as a <style> last in them; a host that cannot have one shows without it", () => {
  const { doc, builder } = frame();
  play(builder, snapshot([
    { i: 10, t: "my-card", r: { i: 11, c: [el(12, "span", null, text(13, "in the shadow"))], css: ":host { display: block }" } },
    { i: 14, t: "input", a: { type: "text" }, r: { i: 15, c: [text(16, "never")] } },
  ]));
  assert.equal(bodyOf(doc), '<my-card>#shadow(<span>in the shadow</span><style>:host { display: block }</style>)</my-card><input type="text"></input>');
  // A change into the shadow root goes before its own <style>.
  play(builder, mutations(1, { add: [{ p: 11, b: null, n: el(17, "i", null, text(18, "added")) }] }));
  assert.equal(markup(doc.body.childNodes[0].shadowRoot), "<span>in the shadow</span><i>added</i><style>:host { display: block }</style>");
});

test("the document's constructed sheets are a <style> last in its root element, kept there through changes", () => {
  const { doc, builder } = frame();
  play(builder, snapshot([el(10, "p", null, text(11, "a"))], { css: "p { margin: 0 }" }));
  const html = doc.documentElement;
  assert.equal(html.childNodes.at(-1).textContent, "p { margin: 0 }");
  play(builder, mutations(1, { add: [{ p: 2, b: null, n: el(12, "footer") }] }));
  assert.equal(html.childNodes.at(-1).localName, "style");
  assert.equal(html.childNodes.at(-2).localName, "footer");
});

test("a mutation applies rm, add, attr, text and css in that order", () => {
  const { doc, builder } = frame();
  play(builder, snapshot([
    el(10, "ul", null, el(11, "li", null, text(12, "one")), el(13, "li", null, text(14, "two"))),
    el(15, "p", { class: "old", title: "t" }, text(16, "before")),
  ], { head: [{ i: 5, t: "style", css: "a {}" }] }));
  play(builder, mutations(1, {
    rm: [11],
    add: [
      { p: 10, b: 13, n: el(20, "li", null, text(21, "zero")) },
      { p: 10, b: null, n: el(22, "li", null, text(23, "three")) },
      { p: 999, b: null, n: el(24, "li", null, text(25, "nowhere")) },
      { p: 20, b: null, n: el(26, "em", null, text(27, "!")) },
    ],
    attr: [[15, "class", "new"], [15, "title", null], [20, "data-x", "1"]],
    text: [[16, "after"], [21, "zero, changed"]],
    css: [[5, "a { color: green }"]],
  }));
  assert.equal(bodyOf(doc), '<ul><li data-x="1">zero, changed<em>!</em></li><li>two</li><li>three</li></ul><p class="new">after</p>');
  assert.equal(markup(doc.documentElement.childNodes[0]), "<head><style>a { color: green }</style></head>");
  assert.equal(builder.nodes.get(11), undefined, "a removed node's id is forgotten");
  assert.equal(builder.nodes.get(12), undefined, "and those of everything in it");
  assert.equal(builder.nodes.get(24), undefined, "an entry whose parent is unknown is skipped");
});

test("an added node whose id is known is taken from where it was and replaced (moved, or recorded again)", () => {
  const { doc, builder } = frame();
  play(builder, snapshot([
    el(10, "div", { id: "a" }, el(11, "span", { class: "x" }, text(12, "moving"))),
    el(13, "div", { id: "b" }),
    el(14, "section", { "data-mueval-mask": "" }, text(15, "Xxxx")),
  ]));
  play(builder, mutations(1, { add: [
    { p: 13, b: null, n: el(11, "span", { class: "x" }, text(12, "moving")) },
    { p: 4, b: null, n: { i: 14, t: "section", w: 100, h: 20 } },
  ] }));
  assert.equal(bodyOf(doc), '<div id="a"></div><div id="b"><span class="x">moving</span></div>' +
    '<div style="display: block; box-sizing: border-box; width: 100px; height: 20px; background: #e3e6ea;" data-mueval-box="section"></div>');
  assert.equal(builder.nodes.get(11).parentNode, builder.nodes.get(13));
  assert.equal(builder.nodes.get(12).data, "moving");
  assert.equal(builder.nodes.get(15), undefined, "what the replaced node held is forgotten");
  // Moved before a sibling, within the same parent.
  play(builder, mutations(2, { add: [{ p: 13, b: 11, n: el(16, "i") }, { p: 13, b: 16, n: el(11, "span", null, text(12, "first")) }] }));
  assert.equal(markup(builder.nodes.get(13)), '<div id="b"><span>first</span><i></i></div>');
});

test("a gap in n: the page stays as before it, changes are ignored until the next snapshot; scroll, focus and viewport still apply", () => {
  const { doc, builder } = frame();
  play(builder, snapshot([el(10, "p", null, text(11, "v0"))]));
  play(builder, mutations(1, { text: [[11, "v1"]] }));
  play(builder, mutations(1, { text: [[11, "duplicate"]] }));
  assert.equal(bodyOf(doc), "<p>v1</p>", "a record seen already changes nothing");
  assert.equal(builder.frozen, false);
  play(builder, mutations(3, { text: [[11, "after the gap"]] }));
  play(builder, mutations(4, { add: [{ p: 4, b: null, n: el(12, "p") }] }));
  assert.equal(bodyOf(doc), "<p>v1</p>");
  assert.equal(builder.frozen, true);
  play(builder, record("DOMScroll", { s: 1, n: 5, scroll: [[1, 0, 120]] }));
  assert.deepEqual(doc.window.scrolls.at(-1), [0, 120]);
  play(builder, record("DOMMutations", { s: 2, n: 1, text: [[11, "of a snapshot not seen"]] }));
  assert.equal(bodyOf(doc), "<p>v1</p>");
  play(builder, snapshot([el(10, "p", null, text(11, "healed"))], { s: 2 }));
  assert.equal(builder.frozen, false);
  play(builder, mutations(1, { s: 2, text: [[11, "live again"]] }));
  assert.equal(bodyOf(doc), "<p>live again</p>");
});

test("a new page load starts again at s 1 with its snapshot", () => {
  const { doc, builder } = frame();
  play(builder, snapshot([el(10, "p", null, text(11, "first load"))], { s: 4 }), mutations(1, { s: 4, text: [[11, "x"]] }));
  play(builder, snapshot([el(10, "h2", null, text(11, "reloaded"))], { s: 1 }), mutations(1, { s: 1, text: [[11, "reloaded, then changed"]] }));
  assert.equal(bodyOf(doc), "<h2>reloaded, then changed</h2>");
});

test("records before any snapshot are not applied", () => {
  const { doc, builder } = frame();
  assert.equal(builder.apply(mutations(1, { add: [{ p: 4, b: null, n: el(10, "p") }] })), false);
  assert.equal(doc.documentElement, null, "an empty page until the first snapshot");
});

test("scroll positions, the viewport and the focus are written once, after the batch's DOM changes", () => {
  const { doc, builder } = frame();
  const sizes = [];
  builder.onViewport = (viewport) => sizes.push([viewport.w, viewport.h]);
  builder.apply(snapshot([el(10, "div", { class: "list", style: "color: red;" }, text(11, "x")), el(12, "input")], { scroll: [[1, 0, 300], [10, 5, 40]], focus: 12 }));
  assert.deepEqual(doc.window.scrolls, [], "nothing before settle()");
  assert.deepEqual(sizes, []);
  builder.apply(record("DOMScroll", { s: 1, n: 1, scroll: [[10, 0, 80]] }));
  builder.apply(record("DOMViewport", { s: 1, n: 2, w: 844, h: 390, o: "landscape" }));
  builder.settle();
  assert.deepEqual(doc.window.scrolls, [[0, 300]]);
  assert.deepEqual(builder.nodes.get(10).scrollAt, [0, 80], "the latest position wins");
  assert.deepEqual(sizes, [[844, 390]], "the viewport once, the latest");
  const input = builder.nodes.get(12);
  assert.equal(input.style.outline, FOCUS_OUTLINE);
  assert.equal(input.getAttribute("data-mueval-focus"), "");

  play(builder, record("DOMFocus", { s: 1, n: 3, focus: 10 }));
  assert.equal(input.getAttribute("style"), null, "the outline goes with the focus, the element's own style back");
  const list = builder.nodes.get(10);
  assert.equal(list.style.outline, FOCUS_OUTLINE);
  play(builder, mutations(4, { attr: [[10, "style", "color: blue;"]] }));
  assert.equal(list.style.color, "blue");
  assert.equal(list.style.outline, FOCUS_OUTLINE, "a style change keeps the outline");
  play(builder, record("DOMFocus", { s: 1, n: 5, focus: null }));
  assert.equal(list.getAttribute("style"), "color: blue;");
  assert.equal(list.hasAttribute("data-mueval-focus"), false);
});

test("a page with many changes is applied in one pass without reading layout (the fake DOM's layout members throw)", () => {
  const { doc, builder } = frame();
  const items = Array.from({ length: 500 }, (_, k) => el(1000 + 2 * k, "li", null, text(1001 + 2 * k, `item ${k}`)));
  const started = performance.now();
  play(builder, snapshot([el(10, "ul", null, ...items)]));
  for (let n = 1; n <= 200; n++) builder.apply(mutations(n, { text: [[1001 + 2 * (n % 500), `changed ${n}`]], attr: [[10, "data-n", String(n)]] }));
  builder.settle();
  assert.equal(builder.nodes.get(10).childNodes.length, 500);
  assert.ok(performance.now() - started < 1000, "fast enough on a fake DOM");
  assert.equal(doc.created.length, 504, "html, head, body, ul and the items, each made once");
});

test("a checkpoint is the page and its state: restored, it is built again as it was, and changes go on from there", () => {
  const { doc, builder } = frame({ remoteAssets: ["https://app.example.org"] });
  play(builder, snapshot([
    el(10, "p", { style: "color: red;" }, text(11, "one")),
    { i: 12, t: "my-card", r: { i: 13, c: [el(14, "span", null, text(15, "shadow"))], css: "span { color: blue }" } },
    { i: 16, t: "canvas", w: 10, h: 10 },
    el(17, "img", { src: "https://tracker.example/x.gif" }),
  ], { head: [{ i: 5, t: "style", css: "p {}" }], css: "html {}", focus: 10, scroll: [[1, 0, 50]] }));
  play(builder, mutations(1, { text: [[11, "two"]] }));
  const saved = builder.checkpoint();
  const before = markup(doc.documentElement);
  play(builder, mutations(2, { text: [[11, "three"]], rm: [12] }), record("DOMFocus", { s: 1, n: 3, focus: null }),
    record("DOMScroll", { s: 1, n: 4, scroll: [[1, 0, 900]] }));
  assert.notEqual(markup(doc.documentElement), before);

  builder.restore(saved);
  builder.settle();
  assert.equal(markup(doc.documentElement), before, "the same page, the focus outline drawn again");
  assert.deepEqual(doc.window.scrolls.at(-1), [0, 50]);
  assert.equal(builder.n, 1);
  play(builder, mutations(2, {
    text: [[11, "after the restore"]], css: [[5, "p { margin: 0 }"]], attr: [[16, "class", "x"], [17, "src", "https://app.example.org/ok.png"]],
    add: [{ p: 13, b: null, n: el(18, "i") }],
  }));
  assert.equal(builder.nodes.get(11).data, "after the restore");
  assert.equal(builder.nodes.get(5).textContent, "p { margin: 0 }", "a stylesheet is still one");
  assert.equal(builder.nodes.get(16).hasAttribute("class"), false, "a box still takes no attributes");
  assert.equal(builder.nodes.get(17).getAttribute("src"), "https://app.example.org/ok.png", "an image decides again");
  assert.equal(markup(builder.nodes.get(13)), "<span>shadow</span><i></i><style>span { color: blue }</style>", "the shadow root's own style stays last");
  play(builder, record("DOMFocus", { s: 1, n: 3, focus: null }));
  play(builder, record("DOMFocus", { s: 1, n: 4, focus: null }));
  assert.equal(builder.nodes.get(10).getAttribute("style"), "color: red;", "the outline went, the page's style is back");
  assert.equal(builder.checkpoint().html === null, false);
  // The checkpoint stays usable.
  builder.restore(saved);
  builder.settle();
  assert.equal(markup(doc.documentElement), before);
});
