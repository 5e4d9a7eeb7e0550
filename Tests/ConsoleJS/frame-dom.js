// A small DOM standing for the replay frame's document (no jsdom: npm is out of reach, and the tests should say what
// the builder touches): nodes made by createElement(NS), createTextNode and createComment, attributes with
// namespaces, an inline style that stays in step with the `style` attribute, open shadow roots, scroll positions and
// the window's scrollTo. What the builder must never use (innerHTML and its kin, focus()) throws. Not a test file.

export const SVG_NS = "http://www.w3.org/2000/svg";
export const HTML_NS = "http://www.w3.org/1999/xhtml";

const NAME = /^[A-Za-z_:][A-Za-z0-9_:.-]*$/;
/** Elements that may host a shadow root (the DOM's list, and custom elements). */
const SHADOW_HOSTS = new Set(["article", "aside", "blockquote", "body", "div", "footer", "h1", "h2", "h3", "h4", "h5", "h6",
  "header", "main", "nav", "p", "section", "span"]);

class DOMError extends Error {
  constructor(name) { super(name); this.name = name; }
}

class Node {
  constructor(nodeType, doc) {
    Object.assign(this, { nodeType, ownerDocument: doc, parentNode: null, childNodes: [] });
  }
  get firstChild() { return this.childNodes[0] ?? null; }
  get nextSibling() { const list = this.parentNode?.childNodes; return list ? list[list.indexOf(this) + 1] ?? null : null; }
  get isConnected() {
    for (let at = this; at; at = at.nodeType === 11 ? at.host : at.parentNode) if (at.nodeType === 9) return true;
    return false;
  }
  get textContent() { return this.childNodes.map((n) => (n.nodeType === 8 ? "" : n.textContent)).join(""); }
  set textContent(text) {
    for (const child of this.childNodes) child.parentNode = null;
    this.childNodes = [];
    if (text !== "") this.appendChild(this.ownerDocument.createTextNode(String(text)));
  }
  insertBefore(node, before) {
    if (this.nodeType === 3 || this.nodeType === 8) throw new DOMError("HierarchyRequestError");
    for (let at = this; at; at = at.parentNode) if (at === node) throw new DOMError("HierarchyRequestError");
    if (this.nodeType === 9 && (node.nodeType === 3 || (node.nodeType === 1 && this.documentElement && this.documentElement !== node))) {
      throw new DOMError("HierarchyRequestError");
    }
    if (before && before.parentNode !== this) throw new DOMError("NotFoundError");
    node.parentNode?.removeChild(node);
    const at = before ? this.childNodes.indexOf(before) : this.childNodes.length;
    this.childNodes.splice(at, 0, node);
    node.parentNode = this;
    return node;
  }
  appendChild(node) { return this.insertBefore(node, null); }
  removeChild(node) {
    const at = this.childNodes.indexOf(node);
    if (at < 0) throw new DOMError("NotFoundError");
    this.childNodes.splice(at, 1);
    node.parentNode = null;
    return node;
  }
  replaceChild(node, old) {
    this.insertBefore(node, old);
    return this.removeChild(old);
  }
  remove() { this.parentNode?.removeChild(this); }
  append(...nodes) { for (const node of nodes) this.appendChild(node); }
  // Listeners, for the console's own elements in the view's tests (the builder adds none to the frame's).
  addEventListener(type, fn) { (this.listeners ??= []).push({ type, fn }); }
  removeEventListener(type, fn) { this.listeners = (this.listeners ?? []).filter((l) => l.type !== type || l.fn !== fn); }
  dispatch(type) { for (const l of (this.listeners ?? []).filter((l) => l.type === type)) l.fn({ type, target: this }); }
  set innerHTML(_) { throw new Error("innerHTML must never be set"); }
  insertAdjacentHTML() { throw new Error("insertAdjacentHTML must never be used"); }
}

class Text extends Node {
  constructor(data, doc, type = 3) { super(type, doc); this.data = data; }
  get textContent() { return this.data; }
  cloneNode() { return new Text(this.data, this.ownerDocument, this.nodeType); }
}

/** The inline style: properties by name, written back to the `style` attribute as a browser does. */
class Style {
  constructor(el) { this.el = el; this.props = new Map(); }
  parse(text) {
    this.props = new Map();
    for (const part of String(text).split(";")) {
      const colon = part.indexOf(":");
      if (colon > 0) this.props.set(part.slice(0, colon).trim(), part.slice(colon + 1).trim());
    }
  }
  write() { this.el.attrs.set("style", { ns: null, value: [...this.props].map(([k, v]) => `${k}: ${v};`).join(" ") }); }
  setProperty(name, value) { this.props.set(name, String(value)); this.write(); }
  removeProperty(name) { this.props.delete(name); this.write(); }
  getPropertyValue(name) { return this.props.get(name) ?? ""; }
}
const kebab = (name) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const styleProxy = (style) => new Proxy(style, {
  get: (target, key) => (key in target ? (typeof target[key] === "function" ? target[key].bind(target) : target[key]) : target.getPropertyValue(kebab(String(key)))),
  set: (target, key, value) => { if (key in target) target[key] = value; else target.setProperty(kebab(String(key)), value); return true; },
});

class Element extends Node {
  constructor(localName, namespaceURI, doc) {
    super(1, doc);
    Object.assign(this, { localName, namespaceURI, attrs: new Map(), shadowRoot: null, scrollAt: [0, 0] });
    this.styleObject = new Style(this);
    this.style = styleProxy(this.styleObject);
    // data-* attributes as the DOM's dataset gives them (the console's own elements use it: screen.js's hooks).
    const data = (key) => `data-${String(key).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    this.dataset = new Proxy({}, { get: (_, key) => this.getAttribute(data(key)) ?? undefined,
      set: (_, key, value) => { this.setAttribute(data(key), value); return true; } });
  }
  getAttribute(name) { return this.attrs.get(name)?.value ?? null; }
  hasAttribute(name) { return this.attrs.has(name); }
  setAttribute(name, value) {
    if (!NAME.test(name)) throw new DOMError("InvalidCharacterError");
    const key = this.namespaceURI === HTML_NS ? name.toLowerCase() : name;
    this.attrs.set(key, { ns: null, value: String(value) });
    if (key === "style") this.styleObject.parse(value);
  }
  setAttributeNS(ns, name, value) {
    if (!NAME.test(name)) throw new DOMError("InvalidCharacterError");
    this.attrs.set(name, { ns, value: String(value) });
  }
  removeAttribute(name) {
    this.attrs.delete(this.namespaceURI === HTML_NS ? name.toLowerCase() : name);
    if (name === "style") this.styleObject.props = new Map();
  }
  removeAttributeNS(ns, local) {
    for (const [name, attr] of this.attrs) if (attr.ns === ns && name.split(":").pop() === local) this.attrs.delete(name);
  }
  /** A shallow copy: tag, namespace and attributes (not the shadow root, as the DOM's). */
  cloneNode(deep = false) {
    if (deep) throw new Error("the replay copies node by node");
    const copy = this.ownerDocument.createElementNS(this.namespaceURI, this.localName);
    for (const [name, attr] of this.attrs) copy.attrs.set(name, { ...attr });
    copy.styleObject.parse(this.getAttribute("style") ?? "");
    return copy;
  }
  attachShadow({ mode }) {
    if (this.namespaceURI !== HTML_NS || !(SHADOW_HOSTS.has(this.localName) || this.localName.includes("-")) || this.shadowRoot) {
      throw new DOMError("NotSupportedError");
    }
    const root = new Node(11, this.ownerDocument);
    root.host = this;
    root.mode = mode;
    this.shadowRoot = root;
    return root;
  }
  focus() { throw new Error("the replay must never move the real focus"); }
  /** A canvas's 2D context that draws nothing (the touch overlay's). */
  getContext() { return new Proxy({}, { get: (target, key) => (key in target ? target[key] : () => {}), set: (target, key, value) => { target[key] = value; return true; } }); }
  // Scroll positions are written, never read (a read lays the page out): `scrollAt` is what was written.
  set scrollLeft(x) { this.scrollAt = [x, this.scrollAt[1]]; }
  set scrollTop(y) { this.scrollAt = [this.scrollAt[0], y]; }
  get scrollLeft() { throw new Error("layout read: scrollLeft"); }
  get scrollTop() { throw new Error("layout read: scrollTop"); }
  get offsetWidth() { throw new Error("layout read: offsetWidth"); }
  get offsetHeight() { throw new Error("layout read: offsetHeight"); }
  get clientWidth() { throw new Error("layout read: clientWidth"); }
  get clientHeight() { throw new Error("layout read: clientHeight"); }
  getBoundingClientRect() { throw new Error("layout read: getBoundingClientRect"); }
}

export class FrameDocument extends Node {
  constructor() {
    super(9, null);
    this.created = [];          // every element made, as `ns tag`
    this.window = { scrolls: [], scrollTo: (x, y) => this.window.scrolls.push([x, y]), addEventListener() {}, removeEventListener() {} };
    this.defaultView = this.window;
    this.appendChild(Object.assign(new Node(10, this), { name: "html" }));
    const html = this.appendChild(this.createElement("html"));
    html.appendChild(this.createElement("head"));
    html.appendChild(this.createElement("body"));
    this.created = [];
  }
  get documentElement() { return this.childNodes.find((n) => n.nodeType === 1) ?? null; }
  get body() { return this.documentElement?.childNodes.find((n) => n.localName === "body") ?? null; }
  createElement(tag) { return this.createElementNS(HTML_NS, String(tag).toLowerCase()); }
  createElementNS(ns, tag) {
    if (!NAME.test(tag)) throw new DOMError("InvalidCharacterError");
    this.created.push(`${ns === SVG_NS ? "svg:" : ""}${tag}`);
    return new Element(tag, ns, this);
  }
  createTextNode(data) { return new Text(String(data), this); }
  createComment(data) { return new Text(String(data), this, 8); }
}

/** The tree as short markup, for assertions: `<p class="x">text</p>`, SVG tags as `svg:`, comments `<!---->`, a shadow
 *  root `#shadow(…)`. Attribute values as they are (no escaping: tests read them). */
export function markup(node) {
  if (node.nodeType === 3) return node.data;
  if (node.nodeType === 8) return "<!---->";
  if (node.nodeType === 10) return "";
  const inner = node.childNodes.map(markup).join("") + (node.shadowRoot ? `#shadow(${markup(node.shadowRoot)})` : "");
  if (node.nodeType !== 1) return inner;
  const tag = `${node.namespaceURI === SVG_NS && node.localName !== "svg" ? "svg:" : ""}${node.localName}`;
  const attributes = [...node.attrs].map(([name, { value }]) => ` ${name}="${value}"`).join("");
  return `<${tag}${attributes}>${inner}</${tag}>`;
}

/** The body's markup: what most tests look at. */
export const bodyOf = (doc) => markup(doc.body).replace(/^<body>|<\/body>$/g, "");
