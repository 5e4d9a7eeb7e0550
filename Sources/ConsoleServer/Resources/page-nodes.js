// The nodes of a replayed page (docs/WEB-CAPTURE.md, "Records", for their JSON): each recorded node made in the
// frame's document through the DOM (createElement, createElementNS for SVG, createTextNode, attachShadow), never from
// markup, and kept by its id. What a record may not create (page-safety.js) becomes an empty comment that holds its place
// and id; stylesheets become <style> elements whose text is only ever a record's `css`; boxes are grey blocks of their
// size; an image the lab's browser may not fetch (`replay.remote_assets`) is an empty grey box, with no request made.
//
// No layout is read here: building and changing nodes only writes, so that a whole record applies in one pass.

import { HTML_NS, SVG_NS, XLINK_NS, attributeValue, blockedImage, fetchable, tagAllowed } from "./page-safety.js";

const MAX_DEPTH = 256;          // the server's limit too: deeper nodes are left out
const BOX_FILL = "#e3e6ea";     // boxes and images not fetched
const BLANK_IMAGE = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";
/** Boxes of these tags stand in a line of text, as the elements did; the others are blocks. */
const INLINE_BOXES = new Set(["canvas", "video", "audio", "iframe", "frame", "object", "embed", "img", "input", "select",
  "textarea", "button", "span", "a", "label"]);

/** The namespace of an element of `tag` made inside `parent`: SVG from `svg` down, HTML again in a foreignObject. */
export function namespaceOf(tag, parent) {
  if (tag === "svg") return SVG_NS;
  const inSVG = parent?.namespaceURI === SVG_NS && parent.localName !== "foreignObject";
  return inSVG ? SVG_NS : HTML_NS;
}

export class PageNodes {
  /** `doc`: the frame's document; `remote`: a RemoteAssets; `css(value)`: a record's css value as text (assets
   *  resolved; "" when unknown). */
  constructor(doc, { remote, css }) {
    Object.assign(this, { doc, remote, css });
    this.byID = new Map();         // id → node: elements, texts, placeholders, shadow roots, the document
    this.ids = new WeakMap();      // node → id, to forget a removed subtree
    this.sheets = new WeakSet();   // the <style> (or <link>) standing for a recorded style or link element
    this.boxes = new WeakSet();    // boxes take no attributes
    this.tails = new WeakMap();    // parent → its own <style> (a shadow root's or the document's css): kept last
    this.images = new WeakMap();   // img or SVG image → {src, srcset, href} as recorded, to decide again on a change
  }

  /** Forgets every node (a new snapshot). */
  reset() { this.byID.clear(); }

  get(id) { return this.byID.get(id); }

  register(id, node) {
    if (!Number.isFinite(id)) return;
    this.byID.set(id, node);
    this.ids.set(node, id);
  }

  /** Forgets `node` and everything in it (removed or replaced): ids of nodes no longer shown go, so that an hour of
   *  changes between snapshots does not pile up. A walk of the subtree, no layout. */
  forget(node) {
    const stack = [node];
    while (stack.length) {
      const at = stack.pop();
      const id = this.ids.get(at);
      if (id !== undefined && this.byID.get(id) === at) this.byID.delete(id);
      for (const child of at.childNodes ?? []) stack.push(child);
      if (at.shadowRoot) stack.push(at.shadowRoot);
    }
  }

  /** A recorded node (`json`) made as a child of `parent` (its namespace), registered with its subtree; null when the
   *  record is not a node. */
  build(json, parent, depth = 0) {
    if (!json || typeof json !== "object" || depth > MAX_DEPTH) return null;
    let node;
    if (typeof json.t !== "string") {
      node = this.doc.createTextNode(typeof json.x === "string" ? json.x : "");
    } else if ("w" in json || "h" in json) {
      node = this.box(json, parent);
    } else {
      node = this.element(json, parent, depth);
    }
    this.register(json.i, node);
    return node;
  }

  /** A stand-in that shows nothing and holds a forbidden element's place (a later change may name its id). */
  placeholder() { return this.doc.createComment(""); }

  box(json, parent) {
    const tag = String(json.t).toLowerCase();
    const w = Math.max(0, Number(json.w) || 0), h = Math.max(0, Number(json.h) || 0);
    let node;
    if (namespaceOf(tag, parent) === SVG_NS && tag !== "svg") {
      node = this.doc.createElementNS(SVG_NS, "rect");
      node.setAttribute("width", String(w));
      node.setAttribute("height", String(h));
      node.setAttribute("fill", BOX_FILL);
    } else {
      node = this.doc.createElement("div");
      node.style.display = INLINE_BOXES.has(tag) ? "inline-block" : "block";
      node.style.boxSizing = "border-box";
      node.style.width = `${w}px`;
      node.style.height = `${h}px`;
      node.style.background = BOX_FILL;
    }
    node.setAttribute("data-mueval-box", tag.replace(/[^a-z0-9-]/g, "").slice(0, 32) || "div");
    this.boxes.add(node);
    return node;
  }

  element(json, parent, depth) {
    const raw = json.t;
    const ns = namespaceOf(raw.toLowerCase() === "svg" ? "svg" : raw, parent);
    const tag = ns === HTML_NS ? raw.toLowerCase() : raw;
    if (!tagAllowed(tag)) return this.placeholder();
    const attributes = json.a && typeof json.a === "object" ? json.a : {};
    if (ns === HTML_NS && (tag === "style" || tag === "link")) return this.sheet(json, attributes);
    let el;
    try {
      el = ns === HTML_NS ? this.doc.createElement(tag) : this.doc.createElementNS(ns, tag);
    } catch {
      return this.placeholder();   // not a name an element can have
    }
    if (ns === SVG_NS && tag === "style") return this.sheet(json, attributes, el);
    for (const [name, value] of Object.entries(attributes)) this.setAttribute(el, name, value);
    if ((ns === HTML_NS && tag === "img") || (ns === SVG_NS && tag === "image")) this.image(el, attributes);
    // A textarea's text is what was typed: never sent, never shown, whatever a record holds.
    if (Array.isArray(json.c) && tag !== "textarea") {
      for (const child of json.c) {
        const node = this.build(child, el, depth + 1);
        if (node) el.appendChild(node);
      }
    }
    if (json.r && typeof json.r === "object" && ns === HTML_NS) this.shadow(el, json.r, depth);
    return el;
  }

  /** An open shadow root with its children, and its constructed sheets' text as a <style> kept last in it. Elements
   *  that cannot host one (an input, an img) are shown without it. */
  shadow(host, json, depth) {
    let root;
    try {
      root = host.attachShadow({ mode: "open" });
    } catch {
      return;
    }
    this.register(json.i, root);
    if (Array.isArray(json.c)) {
      for (const child of json.c) {
        const node = this.build(child, root, depth + 1);
        if (node) root.appendChild(node);
      }
    }
    if (json.css !== undefined) this.tail(root, json.css);
  }

  /** The parent's own <style> with this css (a shadow root's or the document's constructed sheets), after its
   *  children: constructed sheets come last in the cascade. */
  tail(parent, value) {
    let style = this.tails.get(parent);
    if (!style) {
      style = this.doc.createElement("style");
      this.tails.set(parent, style);
    }
    style.textContent = this.css(value);
    if (style.parentNode !== parent) parent.appendChild(style);
    return style;
  }

  /** A style or link element: a <style> with the record's css (its rules, read on the phone), or, for a stylesheet
   *  the phone could not read (another origin) on an origin the lab allows, a <link> to it. Never children. */
  sheet(json, attributes, svgStyle = null) {
    const href = attributes.href;
    const linked = json.t === "link" && json.css === undefined && typeof href === "string" &&
      /(^|\s)stylesheet(\s|$)/i.test(String(attributes.rel ?? "")) && fetchable(href, this.remote) && /^\s*https?:/i.test(href);
    let el;
    if (linked) {
      el = this.doc.createElement("link");
      el.setAttribute("rel", "stylesheet");
      el.setAttribute("href", href);
    } else {
      el = svgStyle ?? this.doc.createElement("style");
      if (json.css !== undefined) el.textContent = this.css(json.css);
    }
    if (typeof attributes.media === "string") el.setAttribute("media", attributes.media);
    this.sheets.add(el);
    return el;
  }

  /** A style or link element's rules changed (a mutation's `css`): its <style> gets them; a <link> becomes a <style>
   *  in its place. */
  setSheet(id, value) {
    const el = this.byID.get(id);
    if (!el || !this.sheets.has(el)) return;
    if (el.localName !== "link") {
      el.textContent = this.css(value);
      return;
    }
    const style = this.doc.createElement("style");
    style.textContent = this.css(value);
    const media = el.getAttribute("media");
    if (media !== null) style.setAttribute("media", media);
    this.sheets.add(style);
    el.parentNode?.replaceChild(style, el);
    this.register(id, style);
  }

  /** Sets (or, for null or a value refused, removes) an attribute as page-safety.js allows. */
  setAttribute(el, name, value) {
    if (this.boxes.has(el) || typeof name !== "string") return;
    if (this.sheets.has(el)) {
      // A stylesheet keeps only its media, and a <link> its href on an allowed origin: the rest say nothing here.
      const key = name.toLowerCase();
      if (key === "media") {
        if (typeof value === "string") el.setAttribute("media", value); else el.removeAttribute("media");
      } else if (key === "href" && el.localName === "link" && typeof value === "string" && /^\s*https?:/i.test(value) &&
                 fetchable(value, this.remote)) {
        el.setAttribute("href", value);
      }
      return;
    }
    const ns = el.namespaceURI;
    const tag = el.localName;
    const allowed = value === null ? null : attributeValue(ns, tag, name, value, this.remote);
    const xlink = name.toLowerCase().startsWith("xlink:");
    try {
      if (allowed === null) {
        if (xlink) el.removeAttributeNS(XLINK_NS, name.slice(6)); else el.removeAttribute(name);
      } else if (xlink && ns === SVG_NS) {
        el.setAttributeNS(XLINK_NS, name, allowed);
      } else {
        el.setAttribute(name, allowed);
      }
    } catch {
      // A name the browser refuses: left out.
    }
  }

  /** A mutation's attribute change: images decide again whether they may load. */
  changeAttribute(el, name, value) {
    const recorded = this.images.get(el);
    if (recorded && (name === "src" || name === "srcset" || name === "href" || name === "xlink:href")) {
      if (value === null) delete recorded[name]; else recorded[name] = String(value);
      this.image(el, recorded);
      return;
    }
    this.setAttribute(el, name, value);
    if (recorded && name === "style") this.image(el, recorded);
  }

  /** An img or SVG image: its URLs if the lab's browser may fetch them, else an empty grey box (no request). */
  image(el, attributes) {
    const recorded = { ...(this.images.get(el) ?? {}) };
    for (const name of ["src", "srcset", "href", "xlink:href"]) if (typeof attributes[name] === "string") recorded[name] = attributes[name];
    this.images.set(el, recorded);
    const svg = el.namespaceURI === SVG_NS;
    if (!blockedImage(el.namespaceURI, el.localName, recorded, this.remote)) {
      if (el.getAttribute("data-mueval-box") !== null) {
        el.removeAttribute("data-mueval-box");
        el.style.removeProperty("background");
      }
      for (const name of svg ? ["href", "xlink:href"] : ["src", "srcset"]) this.setAttribute(el, name, recorded[name] ?? null);
      return;
    }
    if (svg) {
      this.setAttribute(el, "xlink:href", null);
      el.setAttribute("href", BLANK_IMAGE);
    } else {
      el.removeAttribute("srcset");
      el.setAttribute("src", BLANK_IMAGE);
      el.style.setProperty("background", BOX_FILL);
    }
    el.setAttribute("data-mueval-box", el.localName);
  }

  /** Inserts `node` into `parent` before `before` (null: last, but before the parent's own <style>). */
  insert(parent, node, before) {
    parent.insertBefore(node, before ?? this.tails.get(parent) ?? null);
  }
}
