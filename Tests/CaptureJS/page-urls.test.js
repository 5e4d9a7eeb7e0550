// capture/page/urls.js and attributes.js on their own: URLs absolute and script URLs dropped wherever they hide,
// attributes as the recording sends them.

import assert from "node:assert/strict";
import { test } from "node:test";
import { attributeValue } from "../../CaptureLibrary/Web/capture/page/attributes.js";
import { absoluteCSS, absoluteSrcset, absoluteURL } from "../../CaptureLibrary/Web/capture/page/urls.js";
import { h, install } from "./fake-dom.js";

const base = "https://app.example.org/notes/";

test("absoluteURL: relative made absolute, fragments kept, script and broken URLs dropped", () => {
  assert.equal(absoluteURL("a.png", base), "https://app.example.org/notes/a.png");
  assert.equal(absoluteURL("  //cdn.example/x.png ", base), "https://cdn.example/x.png");
  assert.equal(absoluteURL("#icon", base), "#icon");
  assert.equal(absoluteURL("data:image/png;base64,AAAA", base), "data:image/png;base64,AAAA");
  for (const bad of ["javascript:alert(1)", " JavaScript:alert(1)", "java\tscript:alert(1)", "vbscript:msgbox", "http://[bad"]) {
    assert.equal(absoluteURL(bad, base), undefined, bad);
  }
});

test("absoluteSrcset: each candidate, a data: URL's comma inside it", () => {
  assert.equal(absoluteSrcset("a.png 1x,b.png 2x", base), "https://app.example.org/notes/a.png 1x,https://app.example.org/notes/b.png 2x");
  assert.equal(absoluteSrcset("data:image/png;base64,AA 1x, big.png 640w", base), "data:image/png;base64,AA 1x, https://app.example.org/notes/big.png 640w");
  assert.equal(absoluteSrcset("javascript:x 1x", base), " 1x");
});

test("absoluteCSS: every url(), quoted or not; text without one untouched", () => {
  assert.equal(absoluteCSS("a { b: url(x.png) url('y.png') url( \"z.png\" ) }", base),
    'a { b: url("https://app.example.org/notes/x.png") url("https://app.example.org/notes/y.png") url("https://app.example.org/notes/z.png") }');
  assert.equal(absoluteCSS('mask: url("#m"); background: URL("javascript:alert(1)")', base), 'mask: url("#m"); background: url("")');
  assert.equal(absoluteCSS("color: red", base), "color: red");
});

test("attributeValue: handlers and form state never, text attributes masked, a link's target under the mask", () => {
  const { doc } = install();
  const field = h(doc, "input", { type: "text" }), submit = h(doc, "input", { type: "SUBMIT" }), link = h(doc, "a");
  assert.equal(attributeValue(field, "onInput", "x()", "none", base), undefined);
  assert.equal(attributeValue(field, "value", "typed", "none", base), undefined);
  assert.equal(attributeValue(h(doc, "option"), "selected", "", "none", base), undefined);
  assert.equal(attributeValue(submit, "value", "Send 2", "inputs", base), "Send 2");
  assert.equal(attributeValue(submit, "value", "Send 2", "all", base), "Xxxx 9");
  assert.equal(attributeValue(field, "placeholder", "Name", "all", base), "Xxxx");
  assert.equal(attributeValue(field, "aria-label", "", "all", base), "");
  assert.equal(attributeValue(h(doc, "li"), "value", "3", "all", base), "3", "value outside forms is the page's");
  assert.equal(attributeValue(link, "href", "/users/jane", "inputs", base), "#");
  assert.equal(attributeValue(link, "href", "/users/jane", "none", base), "https://app.example.org/users/jane");
  assert.equal(attributeValue(link, "href", "#top", "all", base), "#top");
  assert.equal(attributeValue(h(doc, "img"), "src", "javascript:x", "none", base), undefined);
  assert.equal(attributeValue(h(doc, "div"), "data-user", "jane", "all", base), "jane", "data-* as it is (documented)");
});
