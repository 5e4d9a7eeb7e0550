// A tiny DOM for the page recording's tests (no jsdom: npm is out of reach, and the tests should say what the code
// reads): nodes with the members capture/page/ and dom.js use, a MutationObserver fed by the fake's own changes as the
// browser's is, animation frames and idle callbacks the test runs by hand. Not a test file itself (no .test.js).

const observers = new Set();

/** Queues a mutation record for every observer watching the target's tree (not across shadow roots, as the DOM). */
function mutated(record) {
  for (const observer of observers) {
    if (![...observer.roots].some((root) => within(record.target, root))) continue;
    observer.queue.push(record);
    if (!observer.scheduled) {
      observer.scheduled = true;
      queueMicrotask(() => {
        observer.scheduled = false;
        const records = observer.takeRecords();
        if (records.length) observer.callback(records);
      });
    }
  }
}
const within = (node, root) => { for (let at = node; at; at = at.parentNode) if (at === root) return true; return false; };

export class FakeMutationObserver {
  constructor(callback) { Object.assign(this, { callback, roots: new Set(), queue: [], scheduled: false }); }
  observe(root) { this.roots.add(root); observers.add(this); }
  takeRecords() { return this.queue.splice(0); }
  disconnect() { observers.delete(this); this.roots.clear(); this.queue = []; }
}

class Listening {
  constructor() { this.listeners = []; }
  addEventListener(type, fn) { this.listeners.push({ type, fn }); }
  removeEventListener(type, fn) { this.listeners = this.listeners.filter((l) => l.type !== type || l.fn !== fn); }
  /** The event at `target` as a listener in the capture phase here sees it. */
  fire(type, target = this) { for (const l of this.listeners.filter((l) => l.type === type)) l.fn({ type, target }); }
}

class FakeNode extends Listening {
  constructor(nodeType, doc) {
    super();
    Object.assign(this, { nodeType, ownerDocument: doc, parentNode: null, childNodes: [] });
  }
  get parentElement() { return this.parentNode?.nodeType === 1 ? this.parentNode : null; }
  get isConnected() {
    for (let at = this; at; at = at.nodeType === 11 ? at.host : at.parentNode) if (at.nodeType === 9) return true;
    return false;
  }
  get nextSibling() { const list = this.parentNode?.childNodes; return list ? list[list.indexOf(this) + 1] ?? null : null; }
  get textContent() { return this.childNodes.map((n) => n.textContent).join(""); }
  insertBefore(node, before) {
    node.parentNode?.removeChild(node);
    const at = before ? this.childNodes.indexOf(before) : this.childNodes.length;
    this.childNodes.splice(at, 0, node);
    node.parentNode = this;
    mutated({ type: "childList", target: this, addedNodes: [node], removedNodes: [] });
    return node;
  }
  appendChild(node) { return this.insertBefore(node, null); }
  append(...nodes) { for (const n of nodes) this.appendChild(typeof n === "string" ? this.ownerDocument.createTextNode(n) : n); return this; }
  removeChild(node) {
    this.childNodes.splice(this.childNodes.indexOf(node), 1);
    node.parentNode = null;
    mutated({ type: "childList", target: this, addedNodes: [], removedNodes: [node] });
    return node;
  }
  remove() { this.parentNode?.removeChild(this); }
}

class FakeText extends FakeNode {
  constructor(data, doc) { super(3, doc); this._data = data; }
  get data() { return this._data; }
  set data(value) { this._data = value; mutated({ type: "characterData", target: this }); }
  get textContent() { return this._data; }
}

class FakeElement extends FakeNode {
  constructor(localName, doc) {
    super(1, doc);
    Object.assign(this, { localName, attrs: new Map(), shadowRoot: null, rect: { width: 100, height: 20 }, value: "", labels: undefined });
  }
  get attributes() { return [...this.attrs].map(([name, value]) => ({ name, value })); }
  get id() { return this.attrs.get("id") ?? ""; }
  get type() { return (this.attrs.get("type") || "text").toLowerCase(); }
  getAttribute(name) { return this.attrs.has(name) ? this.attrs.get(name) : null; }
  hasAttribute(name) { return this.attrs.has(name); }
  setAttribute(name, value) { this.attrs.set(name, String(value)); mutated({ type: "attributes", target: this, attributeName: name }); }
  removeAttribute(name) { this.attrs.delete(name); mutated({ type: "attributes", target: this, attributeName: name }); }
  get isContentEditable() {
    const own = this.attrs.get("contenteditable");
    if (own !== undefined) return own !== "false";
    return !!this.parentElement?.isContentEditable;
  }
  getBoundingClientRect() { return { left: 0, top: 0, ...this.rect }; }
  attachShadow({ mode }) {
    const root = new FakeShadowRoot(this);
    if (mode === "open") this.shadowRoot = root;
    return root;
  }
}

class FakeShadowRoot extends FakeNode {
  constructor(host) { super(11, host.ownerDocument); Object.assign(this, { host, adoptedStyleSheets: [], activeElement: null }); }
}

export class FakeDocument extends FakeNode {
  constructor() {
    super(9, null);
    Object.assign(this, { baseURI: "https://app.example.org/notes/", doctype: { name: "html" }, adoptedStyleSheets: [], activeElement: null });
    this.ownerDocument = null;
    this.documentElement = this.appendChild(this.createElement("html"));
    this.head = this.documentElement.appendChild(this.createElement("head"));
    this.body = this.documentElement.appendChild(this.createElement("body"));
  }
  createElement(localName) { return new FakeElement(localName, this); }
  createTextNode(data) { return new FakeText(data, this); }
}

/** `h(doc, "p", {class: "x"}, "text", child…)`: an element with attributes and children (strings are text nodes). */
export function h(doc, localName, attributes = {}, ...children) {
  const el = doc.createElement(localName);
  for (const [name, value] of Object.entries(attributes)) el.attrs.set(name, String(value));
  for (const child of children) el.childNodes.push(Object.assign(typeof child === "string" ? doc.createTextNode(child) : child, { parentNode: el }));
  return el;
}

/** A fake CSSStyleSheet: rules as texts; `readable` false is another origin's (reading cssRules throws). */
export function sheet(rules, { href = null, readable = true } = {}) {
  return {
    href,
    get cssRules() {
      if (!readable) throw new Error("SecurityError: cannot access rules");
      return rules.map((cssText) => (typeof cssText === "string" ? { cssText } : cssText));
    },
    insertRule(text) { rules.push(text); },
  };
}

/** Installs a fresh document, window and the frame and idle queues as globals; returns them. */
export function install() {
  const doc = new FakeDocument();
  const win = new Listening();
  const frames = [], idle = [];
  Object.assign(globalThis, {
    document: doc, window: win, MutationObserver: FakeMutationObserver, innerWidth: 390, innerHeight: 844, scrollX: 0, scrollY: 0,
    requestAnimationFrame: (fn) => frames.push(fn), cancelAnimationFrame: () => {},
    requestIdleCallback: (fn) => idle.push(fn),
  });
  return {
    doc, win,
    /** Runs the animation frames asked for so far. */
    frame() { for (const fn of frames.splice(0)) fn(performance.now()); },
    /** Runs idle callbacks, each with `remaining` ms; `each()` after each one; returns how many ran. */
    async idle(remaining = 50, each = () => {}) {
      let ran = 0;
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 1));  // the microtasks and timers between callbacks
        if (!idle.length) return ran;
        idle.shift()({ timeRemaining: () => remaining, didTimeout: false });
        each();
        ran++;
      }
    },
  };
}
