// Records for the page replay's tests, in the shape GET /api/sessions/ID/page gives them. Not a test file.

import { PageBuilder } from "../../Sources/ConsoleServer/Resources/page-builder.js";
import { FrameDocument } from "./frame-dom.js";

let nextID = 100;

/** A record of `cls` with `dom`, at time `t` (an event id is given unless `id` is). */
export const record = (cls, dom, t = 0, id = nextID++) => ({ id, t, class: cls, dom });

/** A snapshot (s, n 0) of a document whose body holds `body` (nodes), head `head`; ids 1 (document), 2 (html),
 *  3 (head), 4 (body). */
export function snapshot(body = [], { s = 1, t = 0, id, head = [], css, viewport = { w: 390, h: 844, o: "portrait" }, scroll, focus } = {}) {
  const root = { i: 1, c: [{ i: 2, t: "html", c: [{ i: 3, t: "head", c: head }, { i: 4, t: "body", c: body }] }] };
  if (css !== undefined) root.css = css;
  const dom = { s, n: 0, doctype: "html", root, viewport };
  if (scroll) dom.scroll = scroll;
  if (focus !== undefined) dom.focus = focus;
  return record("DOMSnapshot", dom, t, id);
}

export const mutations = (n, changes, { s = 1, t = 0, id } = {}) => record("DOMMutations", { s, n, ...changes }, t, id);

/** A builder on a fresh frame document; `options` as PageBuilder's. */
export function frame(options = {}) {
  const doc = new FrameDocument();
  const builder = new PageBuilder(doc, { remoteAssets: "all", ...options });
  return { doc, builder };
}

/** Applies records and settles, as the timeline does for one moment. */
export function play(builder, ...records) {
  for (const r of records) builder.apply(r);
  builder.settle();
}
