// page-view.js: the frame is sandboxed with allow-same-origin only (set before its source), inert, the size of the
// tester's viewport and scaled into the console's box; its hooks say what is shown. Tested on the fake DOM standing
// for the console's page.

import "./console-globals.js";
import assert from "node:assert/strict";
import { test } from "node:test";
import { PageView } from "../../Sources/ConsoleServer/Resources/page-view.js";
import { FrameDocument } from "./frame-dom.js";

/** A console page whose boxes are `height` pixels high (console.css), with a container for the view. */
function consolePage(height = 560) {
  const doc = new FrameDocument();
  const make = doc.createElement.bind(doc);
  doc.createElement = (tag) => Object.defineProperty(make(tag), "clientHeight", { get: () => height });
  const container = doc.createElement("div");
  const canvas = container.appendChild(doc.createElement("canvas"));
  doc.body.appendChild(container);
  return { doc, container, canvas };
}

test("the frame: sandboxed with allow-same-origin only, set before its source; inert, no scrollbars, no referrer", () => {
  const { container, canvas } = consolePage();
  const view = new PageView(container, "7", { before: canvas });
  const frame = view.frame;
  assert.equal(frame.localName, "iframe");
  assert.equal(frame.getAttribute("sandbox"), "allow-same-origin");
  const names = [...frame.attrs.keys()];
  assert.ok(names.indexOf("sandbox") < names.indexOf("src"), "the sandbox is there before the frame navigates");
  assert.equal(frame.getAttribute("src"), "/sessions/7/page-frame");
  assert.equal(frame.getAttribute("id"), "page-frame");
  assert.equal(frame.getAttribute("inert"), "");
  assert.equal(frame.getAttribute("scrolling"), "no", "no scrollbar takes width the phone's page did not lose");
  assert.equal(frame.getAttribute("referrerpolicy"), "no-referrer");
  assert.equal(container.childNodes[0], view.box, "in place of the wireframe, before it");
  assert.equal(view.canvas.getAttribute("id"), "page-touches");
  assert.equal(view.overlay.transparent, true);
});

test("ready: the frame's document once muevald's page frame loaded; an error page (an older muevald) is refused", async () => {
  const { container } = consolePage();
  const view = new PageView(container, "7");
  const frameDocument = { location: { pathname: "/sessions/7/page-frame" } };
  view.frame.contentDocument = frameDocument;
  view.frame.dispatch("load");
  assert.equal(await view.ready, frameDocument);

  const other = new PageView(container, "7");
  other.frame.contentDocument = null;   // a page of another origin, or an error page
  other.frame.dispatch("load");
  await assert.rejects(other.ready, /did not load/);
});

test("the viewport sizes the frame in CSS pixels and scales it to the box; a pinch zooms into the part the tester saw", () => {
  const { container } = consolePage(422);
  const view = new PageView(container, "7");
  view.setViewport({ w: 390, h: 844, o: "portrait" });
  assert.equal(view.frame.style.width, "390px");
  assert.equal(view.frame.style.height, "844px");
  assert.equal(view.scale, 0.5);
  assert.equal(view.box.style.width, "195px");
  assert.equal(view.stage.style.transform, "scale(0.5) translate(0px, 0px)");
  assert.equal(view.canvas.width, 780, "the touches canvas: two pixels per CSS pixel, as the wireframe's per point");
  assert.equal(view.canvas.height, 1688);
  view.setViewport({ w: 390, h: 844, z: 2, zx: 100, zy: 300 });
  assert.equal(view.stage.style.transform, "scale(1) translate(-100px, -300px)");
  view.setViewport({ w: 844, h: 390, o: "landscape" });
  assert.equal(view.frame.style.width, "844px");
  assert.equal(view.box.style.width, `${Math.round(844 * 422 / 390)}px`);
});

test("the hooks: the last record applied, the time shown, whether a lost record froze the page", () => {
  const { container } = consolePage();
  const view = new PageView(container, "7");
  view.mark({ id: 42, t: 1767225600.5 }, 1767225601.25, false);
  assert.equal(view.frame.getAttribute("data-applied"), "42");
  assert.equal(view.frame.getAttribute("data-at"), "1767225601.250");
  assert.equal(view.frame.getAttribute("data-frozen"), "false");
  assert.equal(view.box.hasAttribute("title"), false);
  view.mark(null, NaN, true);
  assert.equal(view.frame.getAttribute("data-applied"), "");
  assert.equal(view.frame.getAttribute("data-frozen"), "true");
  assert.equal(view.box.getAttribute("data-frozen"), "true", "the box says it too (console.css outlines it)");
  assert.match(view.box.getAttribute("title"), /not recorded/);
  view.mark({ id: 43, t: 0 }, 1, false);
  assert.equal(view.box.hasAttribute("title"), false);
  view.remove();
  assert.equal(container.childNodes.includes(view.box), false);
});
