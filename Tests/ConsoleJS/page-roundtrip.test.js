// The phone and the console together: records made by capture.js's own page recorder (Tests/CaptureJS's harness, its
// fake DOM) rebuilt by the console's builder in the frame's document must be the page as a fresh snapshot of it sees
// it: the same nodes, ids, tags, attributes, text, shadow roots, stylesheets and boxes.

import assert from "node:assert/strict";
import { test } from "node:test";
import { h, sheet } from "../CaptureJS/fake-dom.js";
import { recording, recordingChangedWhileWalked } from "../CaptureJS/page-harness.js";
import { frame } from "./fixtures.js";

/** The frame's document read back in the records' shape, by the builder's ids: what the replay shows. */
function shown(builder) {
  const nodes = builder.nodes;
  const id = (node) => nodes.ids.get(node);
  const tail = (parent) => nodes.tails.get(parent);
  const children = (parent) => parent.childNodes.filter((child) => child !== tail(parent) && child.nodeType !== 10).map(read);
  const read = (node) => {
    if (node.nodeType === 3) return { i: id(node), x: node.data };
    if (node.nodeType === 11) return withCSS({ i: id(node), c: children(node) }, node);
    const box = node.getAttribute("data-mueval-box");
    if (box !== null) return { i: id(node), t: box, w: parseFloat(node.style.width), h: parseFloat(node.style.height) };
    if (nodes.sheets.has(node)) return { i: id(node), t: "sheet", css: node.textContent };
    const out = { i: id(node), t: node.localName };
    const a = Object.fromEntries([...node.attrs].map(([name, { value }]) => [name, value]));
    if (Object.keys(a).length) out.a = a;
    const c = children(node);
    if (c.length) out.c = c;
    if (node.shadowRoot) out.r = read(node.shadowRoot);
    return out;
  };
  const withCSS = (out, parent) => {
    if (!out.c.length) delete out.c;
    if (tail(parent)) out.css = tail(parent).textContent;
    return out;
  };
  const doc = builder.doc;
  const root = { i: id(doc), c: children(doc) };
  if (builder.documentCSS !== undefined) root.css = builder.documentCSS;
  if (!root.c.length) delete root.c;
  return root;
}

/** A snapshot tree with its stylesheets (style and link elements) named as the builder shows them. */
function normalised(tree) {
  const walk = (node) => {
    if (!node || typeof node !== "object") return node;
    if (node.t === "style" || node.t === "link") return { i: node.i, t: "sheet", css: node.css ?? "" };
    const out = { ...node };
    if (out.c) out.c = out.c.map(walk);
    if (out.r) out.r = walk(out.r);
    return out;
  };
  return walk(tree);
}

/** The console's builder fed the recording's records as the server serves them (JSON, ids and times added). */
function rebuild(page) {
  const { builder } = frame();
  page.records.forEach(({ cls, json }, k) => builder.apply({ id: k + 1, t: k, class: cls, dom: JSON.parse(json) }));
  builder.settle();
  return builder;
}

const same = (page) => {
  const builder = rebuild(page);
  assert.deepEqual(shown(builder), normalised(page.compare().live));
  return builder;
};

test("a page with text, links, SVG, a shadow root, stylesheets and boxes, then changes of every kind, rebuilt as it is", async () => {
  let list, card, style, title;
  const page = await recording((doc) => {
    style = h(doc, "style");
    style.sheet = sheet(["h1 { color: red }"]);
    doc.head.append(style, title = h(doc, "title", {}, "Notes"));
    card = h(doc, "my-card", { class: "card" });
    const root = card.attachShadow({ mode: "open" });
    root.append(h(doc, "span", { part: "label" }, "in the shadow"));
    const svg = h(doc, "svg", { viewBox: "0 0 10 10" }, h(doc, "path", { d: "M0 0L10 10" }));
    const canvas = h(doc, "canvas");
    canvas.rect = { width: 300, height: 150 };
    doc.body.append(h(doc, "h1", {}, "Bar app"), list = h(doc, "ul", {}, h(doc, "li", {}, "one"), h(doc, "li", {}, "two")),
      h(doc, "a", { href: "#top" }, "Open details"), svg, card, canvas, h(doc, "div", { "data-mueval-block": "" }, "secret"));
  }, { mask: "none" });
  same(page);

  list.appendChild(h(page.doc, "li", { class: "new" }, "three"));
  list.insertBefore(list.childNodes[2], list.childNodes[0]);
  list.childNodes[1].childNodes[0].data = "one, changed";
  list.childNodes[2].remove();
  title.childNodes[0].data = "Notes (2)";
  card.setAttribute("class", "card open");
  card.shadowRoot.append(h(page.doc, "b", {}, "added in the shadow"));
  await page.settle();
  style.sheet.insertRule("p { margin: 0 }");
  page.doc.body.append(h(page.doc, "p", {}, "after a rule was inserted"));
  await page.settle();
  list.setAttribute("data-mueval-block", "");
  await page.settle();
  const builder = same(page);
  assert.ok(page.of("DOMMutations").some((r) => r.css), "a stylesheet's rules changed in place");
  assert.equal(builder.nodes.get(page.recorder.serializer.known(list)).getAttribute("data-mueval-box"), "ul");
});

test("changes made while the snapshot was walked in slices, sent after it, rebuild the page", async () => {
  const { page } = await recordingChangedWhileWalked();
  same(page);
});

test("a masked page: what the console shows is the masked text, never what was typed", async () => {
  let field;
  const page = await recording((doc) => doc.body.append(h(doc, "p", {}, "Call me at 555-1234"), field = h(doc, "input", { type: "text" })));
  field.value = "my secret";
  field.setAttribute("value", "my secret");
  await page.settle();
  const builder = same(page);
  const text = JSON.stringify(shown(builder));
  assert.doesNotMatch(text, /555-1234|my secret/);
});
