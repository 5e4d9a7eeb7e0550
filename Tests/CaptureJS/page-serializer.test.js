// capture/page/serializer.js (with attributes.js, styles.js, urls.js): what one node becomes in a page recording.
// What is at stake: nothing typed and no masked text leaves the phone; scripts and handlers never do; what cannot be
// recorded is a box of its size; ids are numbers that stay the node's.

import assert from "node:assert/strict";
import { test } from "node:test";
import { Serializer } from "../../CaptureLibrary/Web/capture/page/serializer.js";
import { h, install, sheet } from "./fake-dom.js";

/** Runs a serialiser's generator to its end. */
function run(generator) {
  for (let r = generator.next(); ; r = generator.next()) if (r.done) return r.value;
}

/** The snapshot of `doc` under `mask`; `find(tag)` the first node with that tag in it. */
function snapshot(doc, mask = "inputs", options = {}) {
  const serializer = new Serializer({ mask, ...options });
  const root = run(serializer.document(doc));
  const all = [];
  const visit = (n) => { all.push(n); for (const c of n.c || []) visit(c); if (n.r) visit(n.r); };
  visit(root);
  return { serializer, root, json: JSON.stringify(root), find: (tag) => all.find((n) => n.t === tag), all };
}

const textOf = (node) => (node.c || []).map((c) => c.x ?? textOf(c)).join("");

test("a document: numbered nodes, tags, attributes, text; doctype and comments are no nodes", () => {
  const { doc } = install();
  doc.body.append(h(doc, "main", { class: "app", id: "root" }, h(doc, "h1", {}, "Bar app"), h(doc, "p", {}, "Hello")));
  const { root, find, all } = snapshot(doc, "none");
  assert.equal(root.i, 1);
  assert.equal(root.c[0].t, "html");
  assert.deepEqual(find("main").a, { class: "app", id: "root" });
  assert.equal(textOf(find("h1")), "Bar app");
  const ids = all.map((n) => n.i);
  assert.ok(ids.every(Number.isInteger));
  assert.equal(new Set(ids).size, ids.length, "ids are unique");
});

test("ids stay the node's across snapshots", () => {
  const { doc } = install();
  const p = h(doc, "p", {}, "one");
  doc.body.append(p);
  const serializer = new Serializer({ mask: "none" });
  const first = run(serializer.document(doc));
  doc.body.insertBefore(h(doc, "div"), p);
  run(serializer.document(doc));
  assert.equal(serializer.known(p), first.c[0].c[1].c[0].i);
});

test("scripts, noscript, template, base, other meta and link elements are never recorded, nor their contents", () => {
  const { doc } = install();
  doc.head.append(h(doc, "script", { src: "/app.js" }, "steal()"), h(doc, "base", { href: "https://evil.example/" }),
    h(doc, "meta", { "http-equiv": "refresh", content: "0;url=javascript:x" }), h(doc, "meta", { name: "viewport", content: "width=device-width" }),
    h(doc, "link", { rel: "preload", href: "/x.js" }));
  doc.body.append(h(doc, "noscript", {}, "no js here"), h(doc, "template", {}, "later"), h(doc, "svg", {}, h(doc, "script", {}, "svgSteal()")));
  const { json, find } = snapshot(doc, "none");
  for (const word of ["steal", "app.js", "evil", "refresh", "no js", "later", "preload", "script", "noscript", "template"]) assert.ok(!json.includes(word), word);
  assert.deepEqual(find("meta").a, { name: "viewport", content: "width=device-width" });
});

test("event handler attributes and script URLs are dropped, other URLs made absolute", () => {
  const { doc } = install();
  doc.body.append(
    h(doc, "img", { src: "pic.png", onerror: "steal()", ONLOAD: "x()", srcset: "a.png 1x, /b.png 2x" }),
    h(doc, "a", { href: "javascript:steal()", onclick: "steal()" }, "go"),
    h(doc, "div", { style: "background: url('bg.png'); color: red", "data-state": "open" }),
    h(doc, "img", { src: " JavaScript:steal()" }),
    h(doc, "form", { action: "/send" }, h(doc, "button", { formaction: "/other" }, "Send")),
    h(doc, "svg", {}, h(doc, "use", { href: "#icon" })));
  const { json, all } = snapshot(doc, "none");
  assert.ok(!/steal|onerror|onload|onclick|action/i.test(json), json);
  const [img, bad] = all.filter((n) => n.t === "img");
  assert.equal(img.a.src, "https://app.example.org/notes/pic.png");
  assert.equal(img.a.srcset, "https://app.example.org/notes/a.png 1x, https://app.example.org/b.png 2x");
  assert.equal(all.find((n) => n.t === "div").a.style, 'background: url("https://app.example.org/notes/bg.png"); color: red');
  assert.equal(all.find((n) => n.t === "div").a["data-state"], "open");
  assert.equal(bad.a, undefined, "an image whose only attribute was a script URL has none");
  assert.equal(all.find((n) => n.t === "use").a.href, "#icon", "a reference into the page stays one");
});

test("inputs: no value, checked or selected state leaves, not even a length; a button's value is its label", () => {
  const { doc } = install();
  const typed = "hunter2 secret typed";
  const field = h(doc, "input", { type: "text", value: typed, placeholder: "Your name" });
  field.value = typed;
  doc.body.append(field, h(doc, "input", { type: "password", value: typed }), h(doc, "input", { type: "hidden", value: typed }),
    h(doc, "textarea", { rows: 3 }, typed), h(doc, "input", { type: "checkbox", checked: "" }),
    h(doc, "select", {}, h(doc, "option", { value: typed }, "Red"), h(doc, "option", { value: "b", selected: "" }, "Blue")),
    h(doc, "input", { type: "submit", value: "Send now" }), h(doc, "button", { value: typed }, "Go"));
  for (const mode of ["none", "inputs", "all"]) {
    const { json, all } = snapshot(doc, mode);
    assert.ok(!/hunter|secret|typed|x{7} x{6}/.test(json), `${mode}: ${json}`);
    assert.ok(!/"checked"|"selected"/.test(json), mode);
    assert.equal(all.find((n) => n.t === "textarea").c, undefined, "a textarea's text is its value");
    assert.deepEqual(all.find((n) => n.t === "textarea").a, { rows: "3" });
    const submit = all.find((n) => n.t === "input" && n.a.type === "submit");
    assert.equal(submit.a.value, mode === "all" ? "Xxxx xxx" : "Send now");
  }
  assert.equal(snapshot(doc, "inputs").find("input").a.placeholder, "Your name", "a placeholder labels: kept under inputs");
  assert.equal(snapshot(doc, "all").find("input").a.placeholder, "Xxxx xxxx");
});

test("text by the UI tree's rules: labels kept and other text shaped under inputs, all shaped under all, none kept", () => {
  const { doc } = install();
  doc.head.append(h(doc, "title", {}, "Notes of Jane"));
  doc.body.append(h(doc, "h1", {}, "Bar app"), h(doc, "p", {}, "Call me at 555-1234"), h(doc, "button", {}, h(doc, "span", {}, "Open details")),
    h(doc, "label", {}, "E-mail"), h(doc, "a", { href: "mailto:jane@example.org" }, "Write"));
  const inputs = snapshot(doc, "inputs");
  assert.equal(textOf(inputs.find("h1")), "Bar app");
  assert.equal(textOf(inputs.find("p")), "Xxxx xx xx 999-9999");
  assert.equal(textOf(inputs.find("button")), "Open details", "text inside a control labels it");
  assert.equal(textOf(inputs.find("label")), "E-mail");
  assert.equal(textOf(inputs.find("title")), "Notes of Jane", "the title, as the UI tree's");
  assert.equal(inputs.find("a").a.href, "#", "where a link goes is masked with the text");
  assert.ok(!inputs.json.includes("jane@"));
  const all = snapshot(doc, "all");
  assert.equal(textOf(all.find("h1")), "Xxx xxx");
  assert.equal(textOf(all.find("button")), "Xxxx xxxxxxx");
  const none = snapshot(doc, "none");
  assert.equal(textOf(none.find("p")), "Call me at 555-1234");
  assert.equal(none.find("a").a.href, "mailto:jane@example.org");
});

test("data-mueval-mask shapes everything in it, data-mueval-unmask keeps it; the nearest wins; text attributes too", () => {
  const { doc } = install();
  doc.body.append(
    h(doc, "section", { "data-mueval-mask": "" }, h(doc, "h2", {}, "Balance 1200"), h(doc, "img", { alt: "Jane Doe" }),
      h(doc, "div", { "data-mueval-unmask": "" }, h(doc, "p", {}, "Public note"))),
    h(doc, "article", { "data-mueval-unmask": "" }, h(doc, "p", { title: "Kept title" }, "Kept 42")));
  const { find, all } = snapshot(doc, "all");
  assert.equal(textOf(find("h2")), "Xxxxxxx 9999");
  assert.equal(find("img").a.alt, "Xxxx Xxx");
  assert.equal(textOf(all.filter((n) => n.t === "p")[0]), "Public note");
  assert.equal(textOf(all.filter((n) => n.t === "p")[1]), "Kept 42");
  assert.equal(all.filter((n) => n.t === "p")[1].a.title, "Kept title");
});

test("canvas, video, iframes, data-mueval-block, contenteditable and text box roles are boxes of their size: tag, w, h, nothing else", () => {
  const { doc } = install();
  const blocked = h(doc, "div", { "data-mueval-block": "", class: "card", title: "Jane's card" }, h(doc, "p", {}, "blocked secret"));
  blocked.rect = { width: 320.26, height: 180 };
  const editor = h(doc, "div", { contenteditable: "" }, h(doc, "p", {}, "typed secret"));
  const textbox = h(doc, "span", { role: "textbox" }, "typed secret too");
  doc.body.append(h(doc, "canvas", { width: 300 }), h(doc, "video", { src: "/movie.mp4", poster: "p.png" }, h(doc, "track", {})),
    h(doc, "iframe", { src: "https://other.example/", srcdoc: "<script>x</script>" }), blocked, editor, textbox);
  const { json, all } = snapshot(doc, "none");
  assert.ok(!/secret|Jane|card|movie|other\.example|srcdoc|track/.test(json), json);
  const boxes = all.filter((n) => n.w !== undefined);
  assert.deepEqual(boxes.map((n) => n.t), ["canvas", "video", "iframe", "div", "div", "span"]);
  for (const box of boxes) assert.deepEqual(Object.keys(box).sort(), ["h", "i", "t", "w"]);
  assert.deepEqual(boxes[3], { i: boxes[3].i, t: "div", w: 320.5, h: 180 });
});

test("open shadow roots are recorded (and observed), closed ones cannot be; masking goes on inside", () => {
  const { doc } = install();
  const host = h(doc, "note-card", { "data-mueval-mask": "" });
  const root = host.attachShadow({ mode: "open" });
  root.append(h(doc, "h3", {}, "Inside 7"));
  root.adoptedStyleSheets = [sheet([":host { display: block }"])];
  const closed = h(doc, "secret-card");
  closed.attachShadow({ mode: "closed" }).append(h(doc, "p", {}, "closed text"));
  doc.body.append(host, closed);
  const observed = [];
  const { find, json } = snapshot(doc, "none", { shadow: (r) => observed.push(r) });
  assert.deepEqual(observed, [root]);
  assert.equal(textOf(find("note-card").r), "Xxxxxx 9", "the host's mask reaches into its shadow root");
  assert.equal(find("note-card").r.css, ":host { display: block }");
  assert.ok(!json.includes("closed text"));
});

test("stylesheets: readable rules as text with absolute URLs, @import inlined, another origin's sheet as its URL", () => {
  const { doc } = install();
  const style = h(doc, "style", {}, "ignored source text");
  const imported = sheet(["b { color: red }"], { href: "https://app.example.org/css/base.css" });
  style.sheet = sheet([{ cssText: '@import url("css/base.css");', styleSheet: imported, media: { mediaText: "print" } },
    "@font-face { font-family: A; src: url(fonts/a.woff2) }", '.x { background: url("javascript:alert(1)") }']);
  const own = h(doc, "link", { rel: "stylesheet", href: "/own.css" });
  own.sheet = sheet(["i { background: url('../img/i.png') }"], { href: "https://app.example.org/css/own.css" });
  const foreign = h(doc, "link", { rel: "stylesheet", href: "https://cdn.example/x.css" });
  foreign.sheet = sheet(["never"], { href: "https://cdn.example/x.css", readable: false });
  doc.head.append(style, own, foreign);
  doc.adoptedStyleSheets = [sheet(["html { margin: 0 }"])];
  const { all, root } = snapshot(doc, "all");
  const [s, o, f] = all.filter((n) => n.t === "style" || n.t === "link");
  assert.equal(s.css, '@media print{b { color: red }}@font-face { font-family: A; src: url("https://app.example.org/notes/fonts/a.woff2") }' +
    '.x { background: url("") }');
  assert.equal(s.c, undefined, "a style element's text is not sent: its rules are");
  assert.equal(o.css, 'i { background: url("https://app.example.org/img/i.png") }');
  assert.equal(f.css, undefined);
  assert.equal(f.a.href, "https://cdn.example/x.css");
  assert.equal(root.css, "html { margin: 0 }");
});

test("the study overlay (skip) is never recorded", () => {
  const { doc } = install();
  const overlay = h(doc, "div", {}, "Task 1: add a note");
  doc.body.append(h(doc, "p", {}, "app"), overlay);
  const { json } = snapshot(doc, "none", { skip: (el) => el === overlay });
  assert.ok(!json.includes("Task"));
});
