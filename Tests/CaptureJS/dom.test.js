// dom.js on plain objects: a tiny fake element with what dom.js reads (localName, attributes, childNodes,
// parentElement, isContentEditable, textContent, labels, type, value, closest, getBoundingClientRect, id). What is
// at stake is the masking policy: a text field's value must never come out, masked text must keep its shape.

import assert from "node:assert/strict";
import { test } from "node:test";
import { classify, controlTitle, describe, masked, maskOf, shape } from "../../CaptureLibrary/Web/capture/dom.js";

const text = (data) => ({ nodeType: 3, data, get textContent() { return data; } });

/** An element; `children` are elements or strings (text nodes); `props` override anything (type, value, labels…). */
function el(localName, attrs = {}, children = [], props = {}) {
  const e = {
    nodeType: 1, localName, parentElement: null, childNodes: [], isContentEditable: false, id: attrs.id ?? "",
    type: localName === "input" ? (attrs.type || "text").toLowerCase() : undefined, value: "", labels: undefined,
    getAttribute: (name) => (name in attrs ? String(attrs[name]) : null),
    hasAttribute: (name) => name in attrs,
    get textContent() { return this.childNodes.map((n) => n.textContent).join(""); },
    // Enough of Element.closest for the selectors dom.js passes: attribute selectors joined by commas.
    closest(selector) {
      const names = selector.split(",").map((s) => /^\[([\w-]+)\]$/.exec(s.trim())[1]);
      for (let at = this; at; at = at.parentElement) if (names.some((n) => at.hasAttribute(n))) return at;
      return null;
    },
    getBoundingClientRect: () => ({ left: 10.26, top: 20.74, width: 100.1, height: 44.3 }),
    ...props,
  };
  for (const child of children) {
    const node = typeof child === "string" ? text(child) : child;
    if (node.nodeType === 1) node.parentElement = e;
    e.childNodes.push(node);
  }
  return e;
}

const className = (e) => classify(e)?.className;

test("classify: buttons and a role overriding the tag", () => {
  assert.deepEqual(classify(el("button")), { className: "UIButton", tag: "button", role: undefined });
  assert.equal(className(el("summary")), "UIButton");
  assert.equal(className(el("select")), "UIButton");
  assert.deepEqual(classify(el("div", { role: "button" })), { className: "UIButton", tag: "div", role: "button" });
  assert.equal(className(el("span", { role: "tab" })), "UITabBarButton");
});

test("classify: a link alone is a button, a link in running text a label, an anchor without href nothing special", () => {
  const alone = el("a", { href: "/next" }, ["Next"]);
  el("nav", {}, ["\n  ", alone, "\n"]);
  assert.equal(className(alone), "UIButton");
  const inline = el("a", { href: "/terms" }, ["terms"]);
  el("p", {}, ["I accept the ", inline, "."]);
  assert.equal(className(inline), "UILabel");
  assert.equal(className(el("a", { name: "top" })), null);
});

test("classify: each input type", () => {
  const cases = { text: "UITextField", email: "UITextField", password: "UITextField", number: "UITextField", tel: "UITextField",
    button: "UIButton", submit: "UIButton", reset: "UIButton", image: "UIButton", file: "UIButton", color: "UIButton",
    checkbox: "UISwitch", radio: "UISwitch", range: "UISlider", search: "UISearchBar", CHECKBOX: "UISwitch" };
  for (const [type, expected] of Object.entries(cases)) assert.equal(className(el("input", { type })), expected, type);
  assert.equal(className(el("input")), "UITextField", "no type: a text field");
  assert.equal(classify(el("input", { type: "hidden" })), null, "a hidden input is never shown");
  assert.equal(className(el("textarea")), "UITextView");
});

test("classify: roles", () => {
  const cases = { link: "UIButton", menuitem: "UIButton", option: "UIButton", checkbox: "UISwitch", switch: "UISwitch", radio: "UISwitch",
    slider: "UISlider", searchbox: "UISearchBar", textbox: "UITextField", img: "UIImageView" };
  for (const [role, expected] of Object.entries(cases)) assert.equal(className(el("div", { role })), expected, role);
  assert.equal(className(el("div", { role: "textbox", "aria-multiline": "true" })), "UITextView");
  assert.equal(className(el("div", { role: "heading" })), null, "a role UIKit has no class for: a plain container");
});

test("classify: contenteditable is one text view at its root", () => {
  const inner = el("p", {}, ["text"], { isContentEditable: true });
  const root = el("div", { contenteditable: "" }, [inner], { isContentEditable: true });
  el("body", {}, [root]);
  assert.equal(className(root), "UITextView");
  assert.equal(className(inner), null, "inside the editor: not a text view of its own");
});

test("classify: lists, images, iframe, plain containers", () => {
  for (const tag of ["ul", "ol", "table"]) assert.equal(className(el(tag)), "UITableView", tag);
  for (const tag of ["li", "tr"]) assert.equal(className(el(tag)), "UITableViewCell", tag);
  for (const tag of ["img", "svg", "canvas", "video", "picture"]) assert.equal(className(el(tag)), "UIImageView", tag);
  assert.equal(className(el("iframe")), "UIWebView");
  assert.deepEqual(classify(el("div")), { className: null, tag: "div", role: undefined });
});

test("maskOf: unmask wins over mask, else the inherited mode", () => {
  assert.equal(maskOf(el("div", { "data-mueval-unmask": "" }), "all"), "none");
  assert.equal(maskOf(el("div", { "data-mueval-mask": "" }), "none"), "all");
  assert.equal(maskOf(el("div", { "data-mueval-mask": "", "data-mueval-unmask": "" }), "inputs"), "none");
  assert.equal(maskOf(el("div"), "inputs"), "inputs");
});

test("shape: letters to x, digits to 9, spaces and punctuation kept", () => {
  assert.equal(shape("call me at 555-1234, ok?"), "xxxx xx xx 999-9999, xx?");
  assert.equal(shape("привет мир 日本 ١٢"), "xxxxxx xxx xx 99", "non-Latin letters and digits too");
  assert.equal(shape("  \t(…) € @ #"), "  \t(…) € @ #");
  assert.equal(shape(""), "");
});

test("shape: capitals become X", () => {
  assert.equal(shape("Call me at 555-1234"), "Xxxx xx xx 999-9999", "docs/WEB-CAPTURE.md's own example");
  assert.equal(shape("Привет Ünïcode"), "Xxxxxx Xxxxxxx");
});

test("masked in the three modes", () => {
  assert.equal(masked("pin 1234", "none", false), "pin 1234");
  assert.equal(masked("pin 1234", "inputs", true), "pin 1234", "a label is kept under inputs");
  assert.equal(masked("pin 1234", "inputs", false), "xxx 9999");
  assert.equal(masked("pin 1234", "all", true), "xxx 9999", "all: labels shaped too");
  assert.equal(masked("", "none", true), undefined);
  assert.equal(masked(undefined, "all", false), undefined);
});

test("controlTitle: aria-label, title, alt first, white space collapsed", () => {
  assert.equal(controlTitle(el("button", { "aria-label": "  close \n dialog " }, ["×"])), "close dialog");
  assert.equal(controlTitle(el("button", { title: "more" }, ["…"])), "more");
  assert.equal(controlTitle(el("input", { type: "image", alt: "search" })), "search");
  assert.equal(controlTitle(el("button", {}, ["  save\n  ", el("span", {}, ["note"])])), "save note");
});

test("controlTitle never reads a text field's value; a button input's value is its title", () => {
  const label = el("label", {}, [" e-mail\n address "]);
  for (const type of ["text", "email", "password", "search", "number"]) {
    assert.equal(controlTitle(el("input", { type }, [], { value: "secret 42", labels: [label] })), "e-mail address", type);
    assert.equal(controlTitle(el("input", { type }, [], { value: "secret 42", labels: [] })), "", `${type} without a label`);
  }
  const area = el("textarea", {}, ["secret draft"], { value: "secret draft" });
  assert.equal(controlTitle(area), "", "a textarea's text is its value");
  assert.equal(controlTitle(el("select", {}, [el("option", {}, ["secret choice"])], { labels: [label] })), "e-mail address");
  assert.equal(controlTitle(el("input", { type: "submit" }, [], { value: " send  now " })), "send now");
  assert.equal(controlTitle(el("input", { type: "reset" })), "reset", "no value: the type");
});

test("describe: class, tag, id, title under the mode, frame rounded to half pixels", () => {
  const button = el("button", { id: "save" }, ["save 2 notes"]);
  assert.deepEqual(describe(button, "inputs"),
    { className: "UIButton", tag: "button", id: "save", title: "save 2 notes", frame: { height: 44.5, width: 100, x: 10.5, y: 20.5 } });
  assert.equal(describe(button, "all").title, "xxxx 9 xxxxx");
  assert.equal(describe(button, "none", false).frame, undefined);
  assert.equal(describe(el("div", {}, ["plain"]), "inputs").id, undefined, "no id: none");
});

test("describe: text that is no control's label is shaped under inputs, headings and cells by their own text", () => {
  assert.equal(describe(el("div", {}, ["my diary"]), "inputs").className, "UIView");
  assert.equal(describe(el("div", {}, ["my diary"]), "inputs").title, "xx xxxxx");
  assert.equal(describe(el("h2", {}, ["settings"]), "inputs").title, "settings", "a heading labels");
  assert.equal(describe(el("li", {}, ["row one ", el("b", {}, ["bold"])]), "none").title, "row one", "a cell's own text only");
  const inline = el("a", { href: "/terms" }, ["terms"], { getAttribute: (n) => (n === "href" ? "/terms" : n === "aria-label" ? "never" : null) });
  el("p", {}, ["see ", inline]);
  assert.equal(describe(inline, "none").title, "terms", "a link in text is a label: its text, not a control's title");
});

test("controlTitle and describe never read what was typed into a contenteditable or a textbox role", () => {
  const editor = el("div", { contenteditable: "" }, ["my secret diary"], { isContentEditable: true });
  const box = el("div", { role: "textbox" }, ["typed secret"]);
  for (const mode of ["none", "inputs", "all"]) {
    for (const e of [editor, box]) assert.ok(!JSON.stringify(describe(e, mode)).includes("secret"), mode);
  }
  assert.equal(controlTitle(el("div", { role: "searchbox", "aria-label": "Search notes" }, ["query"])), "Search notes");
});

test("describe: a text field's value never comes out, whatever the mode", () => {
  const field = el("input", { type: "email" }, [], { value: "me@example.org", labels: [el("label", {}, ["e-mail"])] });
  for (const mode of ["none", "inputs", "all"]) assert.ok(!JSON.stringify(describe(field, mode)).includes("example"), mode);
  assert.equal(describe(field, "inputs").title, "e-mail");
});

test("describe under data-mueval-mask and data-mueval-unmask ancestors", () => {
  const masked = el("button", {}, ["pay now"]);
  const secret = el("section", { "data-mueval-mask": "" }, [el("div", {}, [masked])]);
  const plain = el("div", {}, ["my notes"]);
  const open = el("section", { "data-mueval-unmask": "" }, [plain]);
  el("body", {}, [secret, open]);
  assert.equal(describe(masked, "none").title, "xxx xxx", "a masked ancestor shapes a button's title");
  assert.equal(describe(plain, "all").title, "my notes", "an unmasked ancestor keeps text");
  // The nearest marked ancestor decides.
  const inner = el("span", {}, ["kept 7"]);
  const outer = el("div", { "data-mueval-mask": "" }, [el("div", { "data-mueval-unmask": "" }, [inner])]);
  assert.equal(inner.parentElement.parentElement, outer);
  assert.equal(describe(inner, "all").title, "kept 7");
  assert.equal(describe(el("span", { "data-mueval-mask": "" }, ["own 7"]), "none").title, "xxx 9", "the element's own attribute counts");
});
