// The builder's own wall (page-safety.js, page-nodes.js): a hostile record, one the server's allowlist should have
// cleaned, is built without anything that runs, embeds, redirects or fetches by itself; images from origins the lab
// does not allow (`replay.remote_assets`) are empty boxes, with no request made.

import assert from "node:assert/strict";
import { test } from "node:test";
import { RemoteAssets, attributeValue, fetchable, tagAllowed, urlKind } from "../../Sources/ConsoleServer/Resources/page-safety.js";
import { SVG_NS, bodyOf, markup } from "./frame-dom.js";
import { frame, mutations, play, snapshot } from "./fixtures.js";

const FORBIDDEN = ["script", "iframe", "frame", "object", "embed", "base", "meta", "noscript", "template", "svg:script",
  "svg:animate", "svg:set", "math", "frameset", "applet"];

test("a record full of script is built without any of it", () => {
  const { doc, builder } = frame();
  play(builder, snapshot([
    { i: 10, t: "script", c: [{ i: 11, x: "alert(1)" }] },
    { i: 12, t: "SCRIPT", a: { src: "https://evil.example/x.js" } },
    { i: 13, t: "img", a: { src: "https://app.example.org/a.png", onerror: "alert(2)", ONLOAD: "alert(3)" } },
    { i: 14, t: "a", a: { href: "javascript:alert(4)", onclick: "alert(5)" }, c: [{ i: 15, x: "link" }] },
    { i: 16, t: "a", a: { href: " java\nscript:alert(6)" } },
    { i: 17, t: "iframe", a: { srcdoc: "<script>alert(7)</script>", src: "https://evil.example/" } },
    { i: 18, t: "object", a: { data: "https://evil.example/x.swf" } },
    { i: 19, t: "embed", a: { src: "https://evil.example/x.swf" } },
    { i: 20, t: "form", a: { action: "https://evil.example/", method: "post" }, c: [
      { i: 21, t: "button", a: { formaction: "javascript:alert(8)", autofocus: "" }, c: [{ i: 22, x: "Send" }] },
      { i: 23, t: "input", a: { autofocus: "", accesskey: "s", onfocus: "alert(9)" } }] },
    { i: 24, t: "svg", c: [
      { i: 25, t: "script", c: [{ i: 26, x: "alert(10)" }] },
      { i: 27, t: "a", a: { "xlink:href": "javascript:alert(11)" }, c: [{ i: 28, t: "set", a: { attributeName: "href", to: "javascript:alert(12)" } }] },
      { i: 29, t: "animate", a: { attributeName: "href", values: "javascript:alert(13)" } },
      { i: 30, t: "image", a: { href: "data:image/svg+xml,<svg onload=alert(14)>" } },
      { i: 31, t: "use", a: { href: "data:text/html,<script>alert(15)</script>" } }] },
    { i: 32, t: "img", a: { src: "data:text/html;base64,PHNjcmlwdD4=" } },
    { i: 33, t: "img", a: { src: "/api/sessions/1/stop" } },
    { i: 34, t: "div", a: { style: "color: red", "on-purpose": "kept? no: starts with on" } },
    { i: 35, t: "math", c: [{ i: 36, t: "mi", c: [{ i: 37, x: "x" }] }] },
  ], { head: [
    { i: 5, t: "base", a: { href: "https://evil.example/" } },
    { i: 6, t: "meta", a: { "http-equiv": "refresh", content: "0;url=javascript:alert(16)" } },
    { i: 7, t: "style", c: [{ i: 8, x: "body { background: url(javascript:alert(17)) }" }] },
    { i: 9, t: "link", a: { rel: "import", href: "https://evil.example/x.html" } },
  ] }));
  for (const tag of FORBIDDEN) assert.ok(!doc.created.includes(tag), `no ${tag} element was made`);
  const all = markup(doc.documentElement);
  assert.doesNotMatch(all, /\son[a-z-]*=/i, "no event handler attribute");
  assert.doesNotMatch(all, /javascript|alert|srcdoc|formaction|action=|autofocus|accesskey|evil\.example|svg\+xml|text\/html/i, all);
  assert.match(all, /<a>link<\/a>/, "the link's text stays");
  assert.match(all, /<button>Send<\/button>/);
  assert.match(all, /<style><\/style>/, "a style's text children are never its rules");
  assert.equal(builder.nodes.get(10).nodeType, 8, "a forbidden element keeps its place and id as an empty comment");
  assert.equal(builder.nodes.get(11), undefined, "nothing in it is made");
});

test("changes cannot bring script back: added script elements, handlers, script URLs, text into a stylesheet", () => {
  const { doc, builder } = frame();
  play(builder, snapshot([{ i: 10, t: "p", c: [{ i: 11, x: "text" }] }, { i: 12, t: "a", a: { href: "https://app.example.org/" } }],
    { head: [{ i: 5, t: "style", css: "p {}" }] }));
  play(builder, mutations(1, {
    add: [
      { p: 4, b: null, n: { i: 20, t: "script", c: [{ i: 21, x: "alert(1)" }] } },
      { p: 4, b: null, n: { i: 22, t: "iframe", a: { srcdoc: "<script>alert(2)</script>" } } },
      { p: 5, b: null, n: { i: 23, x: "body { display: none }" } },
      { p: 10, b: null, n: { i: 24, t: "svg", c: [{ i: 25, t: "script", c: [{ i: 26, x: "alert(3)" }] }] } },
    ],
    attr: [[10, "onclick", "alert(4)"], [12, "href", "javascript:alert(5)"], [10, "srcdoc", "<b>x</b>"], [10, "formaction", "x"]],
  }));
  for (const tag of FORBIDDEN) assert.ok(!doc.created.includes(tag), `no ${tag} element was made`);
  assert.equal(markup(doc.documentElement.childNodes[0]), "<head><style>p {}</style></head>", "nothing goes into a stylesheet but css");
  assert.equal(bodyOf(doc), "<p>text<svg><!----></svg></p><a></a><!----><!---->",
    "a refused href removes the one before (the server's rule too)");
});

test("URLs: http(s), fragments, pixel data: images and, for links, mailto: and tel:; nothing else", () => {
  assert.equal(urlKind("https://a.example/x"), "http");
  assert.equal(urlKind("HTTP://a.example/x"), "http");
  assert.equal(urlKind("https:a.example"), null, "no authority: not what the server keeps");
  assert.equal(urlKind("#icon"), "fragment");
  assert.equal(urlKind("data:image/png;base64,AAAA"), "image");
  assert.equal(urlKind("data:image/svg+xml,<svg/>"), null);
  assert.equal(urlKind("\u0001 jav\tascript:alert(1)"), null);
  assert.equal(urlKind("/relative"), null);
  assert.equal(urlKind("//host/x"), null);
  assert.equal(urlKind("blob:https://a/x"), null);
  const all = new RemoteAssets("all");
  assert.equal(attributeValue("http://www.w3.org/1999/xhtml", "a", "href", "mailto:jane@example.org", all), "mailto:jane@example.org");
  assert.equal(attributeValue("http://www.w3.org/1999/xhtml", "img", "src", "mailto:jane@example.org", all), null);
  assert.equal(attributeValue("http://www.w3.org/1999/xhtml", "img", "srcset", "https://a/1.png 1x, javascript:x 2x", all), null);
  assert.equal(attributeValue("http://www.w3.org/1999/xhtml", "img", "srcset", "https://a/1.png 1x, https://a/2.png 2x", all), "https://a/1.png 1x, https://a/2.png 2x");
  assert.equal(attributeValue("http://www.w3.org/1999/xhtml", "div", "1bad", "x", all), null, "a name setAttribute would refuse");
  assert.equal(tagAllowed("Script"), false);
  assert.equal(tagAllowed("my-card"), true);
});

test("remoteAssets: images from allowed origins load, others are empty grey boxes (no request); data: images always", () => {
  const images = [
    { i: 10, t: "img", a: { src: "https://app.example.org/logo.png", width: "40" } },
    { i: 11, t: "img", a: { src: "https://tracker.example/pixel.gif", alt: "x" } },
    { i: 12, t: "img", a: { src: "data:image/png;base64,iVBORw0KGgo=" } },
    { i: 13, t: "picture", c: [{ i: 14, t: "source", a: { srcset: "https://cdn.example/a.webp 1x" } },
      { i: 15, t: "img", a: { src: "https://app.example.org/a.png" } }] },
    { i: 16, t: "svg", c: [{ i: 17, t: "image", a: { href: "https://cdn.example/i.png", width: "10" } }, { i: 18, t: "use", a: { href: "#icon" } }] },
    { i: 19, t: "div", a: { background: "https://cdn.example/bg.png" } },
  ];
  const urls = (doc) => markup(doc.documentElement).match(/https?:\/\/[^" ]+/g) ?? [];

  const listed = frame({ remoteAssets: ["https://app.example.org"] });
  play(listed.builder, snapshot(images));
  assert.deepEqual(urls(listed.doc), ["https://app.example.org/logo.png", "https://app.example.org/a.png"]);
  const blocked = listed.builder.nodes.get(11);
  assert.equal(blocked.getAttribute("data-mueval-box"), "img");
  assert.match(blocked.getAttribute("src"), /^data:image\/gif;base64,/, "a transparent pixel: no request");
  assert.ok(blocked.style.background, "filled grey");
  assert.equal(blocked.getAttribute("alt"), "x", "its other attributes (its size) stay");
  assert.equal(listed.builder.nodes.get(12).getAttribute("src"), "data:image/png;base64,iVBORw0KGgo=");
  assert.equal(listed.builder.nodes.get(17).getAttribute("data-mueval-box"), "image");
  assert.equal(listed.builder.nodes.get(18).getAttribute("href"), "#icon");
  assert.equal(listed.builder.nodes.get(17).namespaceURI, SVG_NS);

  const none = frame({ remoteAssets: [] });
  play(none.builder, snapshot(images));
  assert.deepEqual(urls(none.doc), []);

  const all = frame({ remoteAssets: "all" });
  play(all.builder, snapshot(images));
  assert.equal(urls(all.doc).length, 6);

  // A change to an allowed source shows the image; back to a refused one, the box again.
  play(listed.builder, mutations(1, { attr: [[11, "src", "https://app.example.org/now.png"]] }));
  assert.equal(blocked.getAttribute("src"), "https://app.example.org/now.png");
  assert.equal(blocked.hasAttribute("data-mueval-box"), false);
  play(listed.builder, mutations(2, { attr: [[11, "src", "https://tracker.example/again.gif"]] }));
  assert.equal(blocked.getAttribute("data-mueval-box"), "img");
  assert.doesNotMatch(markup(blocked), /tracker/);
  assert.equal(fetchable("https://app.example.org:443/x", new RemoteAssets(["https://app.example.org/"])), true, "origins compared as origins");
});

test("a stylesheet the phone could not read is linked only from an allowed origin, and becomes a <style> once its rules come", () => {
  const { doc, builder } = frame({ remoteAssets: ["https://fonts.example"] });
  play(builder, snapshot([], { head: [
    { i: 5, t: "link", a: { rel: "stylesheet", href: "https://fonts.example/css", media: "screen" } },
    { i: 6, t: "link", a: { rel: "stylesheet", href: "https://other.example/css" } },
  ] }));
  assert.equal(markup(doc.documentElement.childNodes[0]),
    '<head><link rel="stylesheet" href="https://fonts.example/css" media="screen"></link><style></style></head>');
  play(builder, mutations(1, { attr: [[5, "href", "https://fonts.example/other"], [6, "href", "https://other.example/b.css"], [6, "media", "print"]] }));
  assert.equal(markup(builder.nodes.get(5)), '<link rel="stylesheet" href="https://fonts.example/other" media="screen"></link>');
  assert.equal(markup(builder.nodes.get(6)), '<style media="print"></style>', "a stylesheet takes its media, nothing else");
  play(builder, mutations(2, { css: [[5, "body { font-family: X }"]], attr: [[5, "href", "https://other.example/c.css"]] }));
  assert.equal(markup(doc.documentElement.childNodes[0]), '<head><style media="screen">body { font-family: X }</style><style media="print"></style></head>');
  assert.equal(builder.nodes.get(5).localName, "style");
});
