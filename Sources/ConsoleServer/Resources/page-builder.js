// The page rebuilt from its records (docs/WEB-CAPTURE.md, "Records"; docs/CONSOLE.md, "The page replayed"): a
// DOMSnapshot makes the frame's document anew, then DOMMutations change it in the documented order (rm, add, attr,
// text, css), and DOMScroll, DOMViewport and DOMFocus move it. Records carry `s` (the snapshot they follow) and `n`
// (their number since it): a gap in `n` is a record the phone dropped, and from there the page stays as it was before
// the gap (changes are ignored) until the next snapshot; scroll, viewport and focus are whole states, still applied.
//
// One pass per batch and no layout read: DOM writes happen as records are applied; scroll positions, the focus and
// the viewport are written once, in settle(), after the batch's DOM changes (a scroll write lays the page out).

import { checkpoint, restore } from "./page-checkpoint.js";
import { PageNodes } from "./page-nodes.js";
import { RemoteAssets } from "./page-safety.js";

export const FOCUS_OUTLINE = "3px solid rgb(230, 0, 122)";

const list = (value) => (Array.isArray(value) ? value : []);

/** Whether a node may take children from a record: not text, a stylesheet, a box or a textarea. */
function holdsChildren(node, nodes) {
  if (node.nodeType === 9 || node.nodeType === 11) return true;
  return node.nodeType === 1 && !nodes.sheets.has(node) && !nodes.boxes.has(node) && node.localName !== "textarea";
}

export class PageBuilder {
  /** `doc`: the frame's document; `remoteAssets`: the page answer's (what may be fetched); `css(value)`: a css value
   *  as text, `{$asset}` resolved (page-assets.js). */
  constructor(doc, { remoteAssets = [], css = (value) => (typeof value === "string" ? value : "") } = {}) {
    this.doc = doc;
    this.nodes = new PageNodes(doc, { remote: new RemoteAssets(remoteAssets), css });
    this.onViewport = () => {};   // the view sizes the frame
    this.clear();
  }

  /** What the lab's browser may fetch, as the latest page answer says (from the next node made on). */
  setRemoteAssets(setting) { this.nodes.remote = new RemoteAssets(setting); }

  /** An empty page: before the first snapshot. */
  clear() {
    this.dropFocus();
    for (const child of [...this.doc.childNodes]) if (child.nodeType !== 10) this.doc.removeChild(child);
    this.nodes.reset();
    this.s = 0;
    this.n = 0;
    this.built = false;         // a snapshot is shown
    this.frozen = false;        // a record was lost since it: changes wait for the next snapshot
    this.applied = null;        // the last record applied: {id, t}
    this.documentCSS = undefined;
    this.viewport = null;
    this.positions = new Map();  // id → [x, y] written last: a checkpoint keeps them
    this.pending = { scroll: new Map(), focus: undefined, viewport: null };
  }

  /** A copy of the page and its state now, to start from again (page-checkpoint.js); null before a snapshot. */
  checkpoint() { return checkpoint(this); }

  /** The page as it was at a checkpoint; scroll, focus and viewport follow at settle(). */
  restore(saved) { restore(this, saved); }

  /** Applies one record `{id, t, class, dom}` (dom parsed); returns whether the page took it. Scroll, focus and
   *  viewport wait for settle(). */
  apply(record) {
    const dom = record?.dom;
    if (!dom || typeof dom !== "object") return false;
    if (record.class === "DOMSnapshot") {
      this.snapshot(dom);
    } else {
      if (!this.built) return false;
      const next = dom.s === this.s && Number.isInteger(dom.n);
      if (next && dom.n <= this.n) return false;       // applied already (a record says what is, so this is safe)
      if (!next || dom.n > this.n + 1) this.frozen = true;
      if (Number.isInteger(dom.n)) this.n = Math.max(this.n, dom.n);
      if (record.class === "DOMMutations") {
        if (this.frozen) return false;
        this.mutations(dom);
      } else if (record.class === "DOMScroll") {
        this.scroll(dom.scroll);
      } else if (record.class === "DOMViewport") {
        this.pending.viewport = dom;
      } else if (record.class === "DOMFocus") {
        this.pending.focus = dom.focus ?? null;
      } else {
        return false;
      }
    }
    this.applied = { id: record.id, t: record.t };
    return true;
  }

  snapshot(dom) {
    this.clear();
    const root = dom.root && typeof dom.root === "object" ? dom.root : {};
    const nodes = this.nodes;
    nodes.register(root.i, this.doc);
    for (const json of list(root.c)) {
      const node = nodes.build(json, null);
      // A document holds one element; text or a second element at its top is not shown by browsers either.
      if (node?.nodeType === 1 && !this.doc.documentElement) this.doc.appendChild(node);
    }
    this.documentCSS = root.css;
    this.placeDocumentCSS();
    this.s = dom.s;
    this.n = 0;
    this.built = true;
    this.pending = { scroll: new Map(), focus: dom.focus ?? null, viewport: dom.viewport ?? null };
    this.scroll(dom.scroll);
  }

  /** The document's constructed sheets, last in its root element (the cascade puts them after the page's own). */
  placeDocumentCSS() {
    const html = this.doc.documentElement;
    if (this.documentCSS === undefined || !html || this.nodes.tails.get(html)?.parentNode === html) return;
    this.nodes.tail(html, this.documentCSS);
  }

  mutations(dom) {
    const nodes = this.nodes;
    for (const id of list(dom.rm)) {
      const node = nodes.get(id);
      if (!node || node.nodeType === 9 || node.nodeType === 11) continue;
      nodes.forget(node);
      node.parentNode?.removeChild(node);
    }
    for (const entry of list(dom.add)) if (entry && typeof entry === "object") this.add(entry);
    for (const entry of list(dom.attr)) {
      if (!Array.isArray(entry)) continue;
      const [id, name, value] = entry;
      const el = nodes.get(id);
      if (el?.nodeType !== 1) continue;
      nodes.changeAttribute(el, name, value ?? null);
      if (this.focus?.el === el && name === "style") this.outline(el);   // the page's style, then the outline again
    }
    for (const entry of list(dom.text)) {
      if (!Array.isArray(entry)) continue;
      const node = nodes.get(entry[0]);
      if (node?.nodeType === 3) node.data = typeof entry[1] === "string" ? entry[1] : "";
    }
    for (const entry of list(dom.css)) if (Array.isArray(entry)) nodes.setSheet(entry[0], entry[1]);
    this.placeDocumentCSS();
  }

  /** `{p, b, n}`: node `n` into `p` before `b` (null or unknown: last); a node whose id is known is taken from where it
   *  was and replaced by `n` (moved, or recorded again). An unknown `p` skips the entry. */
  add({ p, b, n }) {
    const nodes = this.nodes;
    const parent = nodes.get(p);
    if (!parent || !holdsChildren(parent, nodes) || !n || typeof n !== "object") return;
    const existing = nodes.get(n.i);
    if (existing === parent) return;
    if (existing && existing.nodeType !== 9 && existing.nodeType !== 11) {
      nodes.forget(existing);
      existing.parentNode?.removeChild(existing);
    }
    const node = nodes.build(n, parent.nodeType === 1 ? parent : null);
    if (!node) return;
    let before = b === null || b === undefined ? null : nodes.get(b);
    if (before && before.parentNode !== parent) before = null;
    try {
      nodes.insert(parent, node, before);
    } catch {
      nodes.forget(node);   // a second root element, say: not shown
    }
  }

  scroll(entries) {
    for (const entry of list(entries)) {
      if (Array.isArray(entry) && Number.isFinite(entry[1]) && Number.isFinite(entry[2])) this.pending.scroll.set(entry[0], [entry[1], entry[2]]);
    }
  }

  /** Writes what the records since the last call left waiting: the viewport first (the frame's size bounds its
   *  scrolling), then scroll positions, then the focus. */
  settle() {
    const { scroll, focus, viewport } = this.pending;
    this.pending = { scroll: new Map(), focus: undefined, viewport: null };
    if (viewport && Number.isFinite(viewport.w) && Number.isFinite(viewport.h)) {
      this.viewport = viewport;
      this.onViewport(viewport);
    }
    for (const [id, [x, y]] of scroll) {
      const node = this.nodes.get(id);
      if (node === this.doc) {
        this.doc.defaultView?.scrollTo(x, y);
      } else if (node?.nodeType === 1) {
        node.scrollLeft = x;
        node.scrollTop = y;
      } else {
        continue;
      }
      this.positions.set(id, [x, y]);
    }
    if (focus !== undefined) this.setFocus(focus);
  }

  /** An outline on the focused element, written into its inline style (never .focus(): the console keeps its own). */
  setFocus(id) {
    const node = id === null ? null : this.nodes.get(id);
    const el = node?.nodeType === 1 && !this.nodes.sheets.has(node) ? node : null;
    if (this.focus?.el === el) return;
    this.dropFocus();
    if (el) this.outline(el);
  }

  outline(el) {
    this.focus = { el, style: el.getAttribute("style") };
    el.style.setProperty("outline", FOCUS_OUTLINE);
    el.style.setProperty("outline-offset", "1px");
    el.setAttribute("data-mueval-focus", "");
  }

  focusID() { return this.focus ? this.nodes.ids.get(this.focus.el) ?? null : null; }

  dropFocus() {
    if (!this.focus) return;
    const { el, style } = this.focus;
    this.focus = null;
    if (style === null) el.removeAttribute("style"); else el.setAttribute("style", style);
    el.removeAttribute("data-mueval-focus");
  }
}
