// One node as the page recording sends it (docs/WEB-CAPTURE.md, "Page recording"): a number that stays the node's for
// the whole capture (a WeakMap, so that removed nodes are still collected), its tag and attributes (attributes.js),
// text under the mask by dom.js's rules (one vocabulary with the UI state tree), open shadow roots, stylesheets as
// text (styles.js), and boxes of their size for what must not or cannot be recorded. Generators yielding once per node
// and per CSS rule: a snapshot runs in idle slices (inIdle with a unit budget), a frame's changes count against theirs.
//
// Cost per element: one pass over its attributes, one WeakMap lookup, under the "inputs" mask one classify (a few
// attribute reads) until an ancestor is known to label; no style or layout read, except one getBoundingClientRect
// per box. 9 to 25 µs per node (text nodes included) in Node 20 with the tests' fake DOM on the loaded lab machine,
// so that a slice of PAGE.sliceUnits is a few ms; inIdle's clock ends a slice sooner on a slower phone.

import { labels, maskOf, masked, round } from "../dom.js";
import { attributesOf } from "./attributes.js";
import { adoptedText, ruleCount, sheetText } from "./styles.js";

export const ELEMENT = 1, TEXT = 3, DOCUMENT = 9, FRAGMENT = 11;

/** Never recorded, nor anything in them: scripts, and what is not rendered. */
const DROPPED = new Set(["script", "noscript", "template", "base"]);
/** Recorded as boxes of their size: content the page cannot or must not give (pixels, media, other documents). */
const BOXES = new Set(["canvas", "video", "audio", "iframe", "frame", "object", "embed"]);
/** Recorded with their attributes but not their children: a textarea's text is its value; a style sheet is sent as
 * its rules (`css`), not as the text it was parsed from. */
const CLOSED = new Set(["textarea", "style", "link"]);

/** Roles of an element that shows what was typed into it. */
const TYPED_ROLES = new Set(["textbox", "searchbox"]);

/** Whether an element is sent as a box: the tag, `data-mueval-block`, or an editor: the root of a contenteditable or
 * an element with a text box's role (its text is what was typed). */
const isBox = (el) => BOXES.has(el.localName) || el.hasAttribute("data-mueval-block") || TYPED_ROLES.has(el.getAttribute("role")) ||
  (el.isContentEditable && !el.parentElement?.isContentEditable);

/** The parent a node's recording hangs from: a shadow root's is its host. */
export const parentOf = (node) => (node.nodeType === FRAGMENT ? node.host : node.parentNode);

export class Serializer {
  /** `mask`: the capture's mode; `skip(el)`: an element never recorded (the study overlay); `shadow(root)`: told of
   * each open shadow root recorded, so that its changes are observed too. */
  constructor({ mask, skip = () => false, shadow = () => {} }) {
    Object.assign(this, { mask, skip, shadow });
    this.ids = new WeakMap();
    this.next = 1;
    this.closed = new WeakSet();  // recorded without children: boxes and CLOSED elements
    this.boxes = new WeakSet();   // recorded without attributes either
    this.sheets = new Map();      // style or link element → its rule count when its sheet was read
    this.seen = null;             // during a snapshot: the nodes already in it
  }

  /** A node's id, given at its first recording and kept while it lives. */
  id(node) {
    let id = this.ids.get(node);
    if (id === undefined) this.ids.set(node, (id = this.next++));
    return id;
  }

  known(node) { return this.ids.get(node); }

  /** Forgets a node that is no longer recorded (so that no change places a node next to it); returns its id. */
  forget(node) {
    const id = this.ids.get(node);
    this.ids.delete(node);
    return id;
  }

  dropped(el) {
    const tag = el.localName;
    if (DROPPED.has(tag) || this.skip(el)) return true;
    if (tag === "meta") return el.getAttribute("name") !== "viewport";  // the viewport's width rules the layout
    if (tag === "link") return !/\bstylesheet\b/i.test(el.getAttribute("rel") || "");
    return false;
  }

  /** The context `el`'s children are recorded in: the mask there and whether text there labels (kept under "inputs"). */
  inner(el, ctx) {
    const mode = maskOf(el, ctx.mode);
    return { mode, label: mode === "inputs" && (ctx.label || el.localName === "title" || labels(el)) };
  }

  text(data, ctx) { return data && masked(data, ctx.mode, ctx.label); }

  /** The whole document: a snapshot's tree. A node moved during the walk is recorded once (the changes move it). */
  *document(doc) {
    this.seen = new Set();
    try {
      const root = { i: this.id(doc), c: yield* this.children(doc, { mode: this.mask, label: false }) };
      const css = yield* adoptedText(doc, doc.baseURI);
      if (css) root.css = css;
      return root;
    } finally {
      this.seen = null;
    }
  }

  /** A node as sent ({i, t, a, c, r, css} for an element, {i, t, w, h} for a box, {i, x} for text), or null. `ctx`:
   * the context of its parent. */
  *node(node, ctx) {
    yield;
    if (this.seen) {
      if (this.seen.has(node)) return null;
      this.seen.add(node);
    }
    if (node.nodeType === TEXT) return { i: this.id(node), x: this.text(node.data, ctx) };
    if (node.nodeType !== ELEMENT || this.dropped(node)) return null;
    const el = node, out = { i: this.id(el), t: el.localName };
    if (isBox(el)) {
      this.closed.add(el);
      this.boxes.add(el);
      const rect = el.getBoundingClientRect();
      return Object.assign(out, { w: round(rect.width), h: round(rect.height) });
    }
    this.boxes.delete(el);
    const inner = this.inner(el, ctx);
    const attributes = attributesOf(el, inner.mode, el.ownerDocument?.baseURI);
    if (attributes) out.a = attributes;
    if (CLOSED.has(el.localName)) {
      this.closed.add(el);
      const css = el.localName === "textarea" ? null : yield* this.sheet(el);
      if (css != null) out.css = css;
      return out;
    }
    this.closed.delete(el);
    const children = yield* this.children(el, inner);
    if (children.length) out.c = children;
    if (el.shadowRoot) out.r = yield* this.root(el.shadowRoot, inner);
    return out;
  }

  *children(parent, ctx) {
    const out = [];
    for (const child of [...parent.childNodes]) {  // a copy: the page may change it between idle slices
      const node = yield* this.node(child, ctx);
      if (node) out.push(node);
    }
    return out;
  }

  /** An open shadow root ({i, c, css}: its children and its constructed sheets), observed from now on. */
  *root(root, ctx) {
    this.shadow(root);
    const out = { i: this.id(root), c: yield* this.children(root, ctx) };
    const css = yield* adoptedText(root, root.host?.ownerDocument?.baseURI);
    if (css) out.css = css;
    return out;
  }

  /** A style or link element's sheet as text (null: not loaded or not readable, a link's `href` stands), its rule
   * count kept so that rules inserted later, and a sheet that loads later, are seen (`changedSheets`). */
  *sheet(el) {
    this.sheets.set(el, ruleCount(el.sheet));
    return el.sheet ? yield* sheetText(el.sheet, el.ownerDocument?.baseURI) : null;
  }

  /** The recorded style and link elements whose rules changed since they were read (insertRule leaves no mutation). */
  changedSheets() {
    const changed = [];
    for (const [el, count] of this.sheets) {
      if (!el.isConnected) this.sheets.delete(el);
      else if (ruleCount(el.sheet) !== count) changed.push(el);
    }
    return changed;
  }

  /** `[[id, css]]` of these style and link elements, read again (a generator, for idle slices). */
  *restyled(elements) {
    const out = [];
    for (const el of elements) {
      if (!el.isConnected || this.known(el) === undefined || !el.sheet) continue;
      const css = yield* this.sheet(el);
      if (css != null) out.push([this.known(el), css]);
    }
    return out;
  }

  /** The context `node`'s children are recorded in, or null when they are not recorded: `node` or an ancestor is
   * unrecorded, closed, or out of the document. Walks up to the document, across shadow roots, so that a change is
   * masked exactly as the snapshot masked its node. O(depth). */
  context(node) {
    const chain = [];
    let at = node;
    for (; at && at.nodeType !== DOCUMENT; at = parentOf(at)) {
      if (!this.ids.has(at) || this.closed.has(at)) return null;
      if (at.nodeType === ELEMENT) chain.push(at);
    }
    if (!at || !this.ids.has(at)) return null;
    let ctx = { mode: this.mask, label: false };
    for (let i = chain.length - 1; i >= 0; i--) ctx = this.inner(chain[i], ctx);
    return ctx;
  }
}
