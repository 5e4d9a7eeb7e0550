// muEval for the web: the capture library for web apps, PWAs and WebViews (docs/WEB-CAPTURE.md).
// One dependency-free ES module. It speaks docs/PROTOCOL.md over muevald's WebSocket `/capture` and sends the
// event shapes muevald's analysis reads (docs/REPORTS.md, "What the interpreters read"), those of the simulator.
// Nothing happens on import: everything starts with start().
//
//   import * as muEval from "https://lab.example.org:28080/capture.js";
//   const capture = await muEval.start({ appId: "org.example.notes", appVersion: "1.0" });

const KEEP = 0;    // spool tiers: never dropped for room (task marks, views, taps, lifecycle, errors, app events)
const SAMPLE = 1;  // dropped first when the spool is full (sensor readings, moving touches, audio)
const G = 9.80665;
const RATE = 16000; // think-aloud PCM: what PocketSphinx wants
const STORE = "mueval:";

// ---------------------------------------------------------------- XML (property list values, docs/PROTOCOL.md)

/** The one escaping helper: markup characters, CR kept as a reference, characters XML cannot carry replaced. */
const esc = (s) => String(s).replace(/[&<>\r\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g,
  (c) => c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === "\r" ? "&#13;" : "\ufffd");

function base64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** A JavaScript value as a plist element: whole numbers as <integer>, others as <real>, bytes as <data>. */
function plist(v) {
  if (typeof v === "string") return `<string>${esc(v)}</string>`;
  if (typeof v === "boolean") return v ? "<true/>" : "<false/>";
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "<real>nan</real>";
    if (!Number.isFinite(v)) return v > 0 ? "<real>inf</real>" : "<real>-inf</real>";
    return Number.isSafeInteger(v) ? `<integer>${v}</integer>` : `<real>${v}</real>`;
  }
  if (v instanceof Uint8Array) return `<data>${base64(v)}</data>`;
  if (v instanceof Date) return `<date>${v.toISOString()}</date>`;
  if (Array.isArray(v)) return v.length ? `<array>${v.map(plist).join("")}</array>` : "<array/>";
  if (v && typeof v === "object") return `<dict>${pairs(v)}</dict>`;
  return `<string>${esc(v)}</string>`;
}

/** `<key>`/value pairs of an object's fields; null and undefined fields are left out. */
function pairs(o) {
  let s = "";
  for (const k in o) if (o[k] != null && typeof o[k] !== "function") s += `<key>${esc(k)}</key>${plist(o[k])}`;
  return s;
}

function readValue(el) {
  const t = el.textContent;
  switch (el.nodeName) {
    case "integer": return Number(t);
    case "real": return t === "nan" ? NaN : t === "inf" ? Infinity : t === "-inf" ? -Infinity : Number(t);
    case "true": return true;
    case "false": return false;
    case "array": return [...el.children].map(readValue);
    case "dict": return readPairs(el);
    default: return t;
  }
}

function readPairs(el) {
  const out = {};
  const kids = el.children;
  for (let i = 0; i + 1 < kids.length; i += 2) if (kids[i].nodeName === "key") out[kids[i].textContent] = readValue(kids[i + 1]);
  return out;
}

/** The server's replies in one text frame: each message parsed on its own (DOMParser), so a bad one spoils none
 * other. An ack in muevald's exact form (most replies) is read without building a document for it. */
function parseReplies(text) {
  const out = [];
  for (const m of text.matchAll(/<(welcome|ack|error)\b[^>]*?(?:\/>|>[\s\S]*?<\/\1>)/g)) {
    const ack = /^<ack><key>seq<\/key><integer>(\d+)<\/integer><\/ack>$/.exec(m[0]);
    if (ack) { out.push({ type: "ack", seq: Number(ack[1]) }); continue; }
    const doc = new DOMParser().parseFromString(m[0], "application/xml");
    if (!doc.getElementsByTagName("parsererror").length) out.push({ type: m[1], ...readPairs(doc.documentElement) });
  }
  return out;
}

// ---------------------------------------------------------------- small helpers

/** Text in WebSocket messages of at most 256 Ki UTF-16 units (under muevald's 1 MiB frame limit in UTF-8; a
 * message may span frames), never cutting a surrogate pair. */
function send(ws, text) {
  for (let i = 0; i < text.length;) {
    let j = Math.min(text.length, i + 262144);
    if (j < text.length && (text.charCodeAt(j) & 0xfc00) === 0xdc00) j--;
    ws.send(text.slice(i, j));
    i = j;
  }
}

const round = (v, step = 0.5) => Math.round(v / step) * step;
const idle = (fn) => (self.requestIdleCallback ? requestIdleCallback(fn, { timeout: 300 }) : setTimeout(fn, 1));
const stored = (key, value) => {
  try {
    if (value === undefined) return localStorage.getItem(STORE + key);
    if (value === null) localStorage.removeItem(STORE + key); else localStorage.setItem(STORE + key, value);
  } catch { /* storage off (a locked-down WebView): capture goes on without it */ }
  return value;
};
const randomId = () => (crypto.randomUUID ? crypto.randomUUID()
  : [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join(""));
const request = (r) => new Promise((ok, ko) => { r.onsuccess = () => ok(r.result); r.onerror = () => ko(r.error); });

/** Text replaced by its shape: letters → x (X), digits → 9, the rest (spaces, punctuation) kept. */
const shape = (s) => s.replace(/\p{Lu}/gu, "X").replace(/\p{L}/gu, "x").replace(/\p{N}/gu, "9");

/** What the `<hello>` says of the device, from the user agent and the screen. */
function device() {
  const ua = navigator.userAgent;
  let m, model = "Desktop", system;
  if ((m = ua.match(/\((iPhone|iPad|iPod)[^)]*? OS (\d+[_\d]*)/))) { model = m[1]; system = "iOS " + m[2].replace(/_/g, "."); }
  else if ((m = ua.match(/Android ([\d.]+)(?:; ([^;)]+))?/))) {
    system = "Android " + m[1];
    model = (m[2] || "").replace(/ Build\/.*/, "").trim();
    if (!model || model === "K") model = "Android";
  } else if ((m = ua.match(/Windows NT [\d.]+|Mac OS X [\d_.]+|CrOS|Linux/))) system = m[0].replace(/_/g, ".");
  const browser = /; wv\)/.test(ua) ? "a WebView" : /EdgA?\//.test(ua) ? "Edge" : /CriOS|Chrome\//.test(ua) ? "Chrome" : /FxiOS|Firefox\//.test(ua) ? "Firefox"
    : /Safari\//.test(ua) ? "Safari" : "a WebView";
  return { deviceName: `${browser} on ${model}`, model, systemVersion: system, screenWidth: screen.width, screenHeight: screen.height,
    screenScale: Math.min(100, Math.max(0.1, devicePixelRatio || 1)) };
}

// ---------------------------------------------------------------- the spool (IndexedDB)

/**
 * Every message is written here before it is sent, and deleted when an <ack> covers it. Its seq is the store's
 * own key (autoIncrement): assigned as it is added, unique across tabs of the device, going on after reloads, and
 * with no read before the write, so that a page on its way out (pagehide) still gets everything into the store.
 * The seq goes into the message as it is sent (`xml`). Bounded by `max` bytes: a sample that does not fit is
 * dropped; a message to keep evicts the newest spooled samples, else goes in over the bound (such messages are
 * small: a view change gives up its screenshot first). Without IndexedDB (a WebView that refuses it) the spool
 * lives in memory.
 */
class Spool {
  constructor(db, max) {
    Object.assign(this, { db, max, entries: new Map(), bytes: 0, dropped: 0, nextSeq: 1, kept: {} });
  }

  static async open(name, max) {
    let db = null;
    try {
      const r = indexedDB.open(name, 1);
      r.onupgradeneeded = () => {
        const spool = r.result.createObjectStore("spool", { keyPath: "seq", autoIncrement: true });
        r.result.createObjectStore("meta");
        // Seqs start at microseconds since 1970, as MuEvalCapture's: a device id that outlived its store (kept in
        // localStorage) never reuses a seq that muevald would take for a duplicate. A key set moves the generator on.
        const first = Date.now() * 1000;
        spool.add({ seq: first });
        spool.delete(first);
      };
      db = await request(r);
    } catch { /* no IndexedDB: in memory */ }
    const spool = new Spool(db, max);
    await spool.reload();
    return spool;
  }

  static size(e) { return e.head.length + e.tail.length + 60; }

  static xml(e) { return `<${e.name}>${e.head}<key>seq</key><integer>${e.seq}</integer>${e.tail}</${e.name}>\n`; }

  /** What the store holds (this tab's and any other's), in seq order. */
  async reload() {
    if (!this.db) return;
    const tx = this.db.transaction(["spool", "meta"]);
    const [all, dropped] = await Promise.all([request(tx.objectStore("spool").getAll()), request(tx.objectStore("meta").get("dropped"))]);
    this.entries = new Map(all.map((e) => [e.seq, e]));
    this.bytes = all.reduce((n, e) => n + Spool.size(e), 0);
    this.dropped = Math.max(this.dropped, dropped ?? 0);
  }

  /** Stores messages ({name, head, tail, tier, lean}); resolves with the stored entries, numbered, once durable. */
  write(items) {
    if (!items.length) return Promise.resolve([]);
    const fits = (n) => this.bytes + n <= this.max;
    const keep = [], evict = [];
    let drops = 0;
    for (const it of items) {
      if (!fits(Spool.size(it)) && it.tier === SAMPLE) { drops++; continue; }
      if (!fits(Spool.size(it))) {
        for (const e of [...this.entries.values()].reverse()) {
          if (fits(Spool.size(it))) break;
          if (e.tier === SAMPLE && !evict.includes(e.seq)) { evict.push(e.seq); this.bytes -= Spool.size(e); drops++; }
        }
      }
      if (!fits(Spool.size(it)) && it.lean != null) it.tail = it.lean;
      this.bytes += Spool.size(it);
      keep.push({ name: it.name, head: it.head, tail: it.tail, tier: it.tier });
    }
    this.dropped += drops;
    const settle = () => {
      for (const seq of evict) this.entries.delete(seq);
      for (const e of keep) this.entries.set(e.seq, e);
      this.bytes = [...this.entries.values()].reduce((n, e) => n + Spool.size(e), 0);
      return keep;
    };
    if (!this.db) {
      for (const e of keep) e.seq = this.nextSeq++;
      return Promise.resolve(settle());
    }
    return new Promise((ok, ko) => {
      const tx = this.db.transaction(["spool", "meta"], "readwrite");
      const spool = tx.objectStore("spool");
      for (const e of keep) spool.add(e).onsuccess = (r) => { e.seq = r.target.result; };
      for (const seq of evict) spool.delete(seq);
      if (drops) tx.objectStore("meta").put(this.dropped, "dropped");
      tx.commit?.();
      tx.oncomplete = () => ok(settle());
      tx.onerror = tx.onabort = () => ko(tx.error);
    });
  }

  /** A value kept beside the spool (the device's id and invitation: they must live as long as what is spooled). */
  async meta(key, value) {
    if (!this.db) return value === undefined ? this.kept[key] : (this.kept[key] = value);
    const store = this.db.transaction("meta", value === undefined ? "readonly" : "readwrite").objectStore("meta");
    return request(value === undefined ? store.get(key) : store.put(value, key));
  }

  /** Settled (acknowledged, or refused for good): gone from the spool. */
  remove(seqs) {
    for (const seq of seqs) {
      const e = this.entries.get(seq);
      if (e) { this.bytes -= Spool.size(e); this.entries.delete(seq); }
    }
    if (this.db && seqs.length) {
      const store = this.db.transaction("spool", "readwrite").objectStore("spool");
      for (const seq of seqs) store.delete(seq);
    }
  }
}

// ---------------------------------------------------------------- frame timing (FrameTiming.Aggregator's sums)

/** Frames summed per view and second of rendering, as docs/CAPTURE-LIBRARY.md "Frame timing" says. */
class Frames {
  constructor() { this.rate = 60; this.open = null; this.view = null; }

  present(interval) {
    if (!(interval > 0) || !Number.isFinite(interval)) return null;
    const r = this.open ??= { kind: "frames", view: this.view, duration: 0, frames: 0, dropped: 0, hitchTime: 0, longestFrame: 0 };
    const refresh = 1 / this.rate;
    r.refreshRate = this.rate;
    r.duration += interval;
    r.frames++;
    const late = Math.round(interval / refresh) - 1;  // refreshes the frame stayed beyond its own
    if (late >= 1) { r.dropped += Math.min(late, 1000); r.hitchTime += interval - refresh; }
    r.longestFrame = Math.max(r.longestFrame, interval);
    if (r.duration < 1) return null;
    this.open = null;
    return r;
  }

  flush() { const r = this.open; this.open = null; return r; }

  viewAppeared(view, duration) {
    const out = [this.flush()];
    if (duration >= 0) out.push({ kind: "transition", view, from: this.view, duration });
    this.view = view;
    return out.filter(Boolean);
  }
}

const micro = (r) => {
  for (const k of ["duration", "hitchTime", "longestFrame"]) if (r[k] != null) r[k] = Math.round(r[k] * 1e6) / 1e6;
  return r;
};

// ---------------------------------------------------------------- the UI state tree and its wireframe

const SKIP = new Set(["script", "style", "template", "noscript", "head", "meta", "link", "br", "wbr", "source", "track"]);
const LABELS = new Set(["h1", "h2", "h3", "h4", "h5", "h6", "label", "legend", "th", "caption", "figcaption", "summary", "option", "dt"]);
const LEAVES = new Set(["UIButton", "UITextField", "UISearchBar", "UITextView", "UISwitch", "UISlider", "UIImageView", "UIWebView"]);
const INTERACTIVE = "a[href],button,input,select,textarea,summary,label,[role=button],[role=link],[role=tab],[role=menuitem]," +
  "[role=checkbox],[role=switch],[role=slider],[onclick],[tabindex],[contenteditable]";

/** A DOM element as a UIKit class (what the analysis' checks know), with its tag and ARIA role beside. */
function classify(el) {
  const tag = el.localName, role = el.getAttribute("role"), type = (el.getAttribute("type") || "").toLowerCase();
  const k = (className) => ({ className, tag, role: role || undefined });
  switch (role) {
    case "button": case "link": case "menuitem": case "option": return k("UIButton");
    case "tab": return k("UITabBarButton");
    case "checkbox": case "switch": case "radio": return k("UISwitch");
    case "slider": return k("UISlider");
    case "searchbox": return k("UISearchBar");
    case "textbox": return k(el.getAttribute("aria-multiline") === "true" ? "UITextView" : "UITextField");
    case "img": return k("UIImageView");
  }
  if (el.isContentEditable && !el.parentElement?.isContentEditable) return k("UITextView");
  switch (tag) {
    case "button": case "summary": case "select": return k("UIButton");
    case "a": {
      if (!el.hasAttribute("href")) break;
      // A link inside running text is read, not aimed at: no hit target of its own.
      const inText = [...(el.parentElement?.childNodes || [])].some((n) => n.nodeType === 3 && n.data.trim());
      return k(inText ? "UILabel" : "UIButton");
    }
    case "input":
      if (["button", "submit", "reset", "image", "file", "color"].includes(type)) return k("UIButton");
      if (type === "checkbox" || type === "radio") return k("UISwitch");
      if (type === "range") return k("UISlider");
      if (type === "search") return k("UISearchBar");
      return type === "hidden" ? null : k("UITextField");
    case "textarea": return k("UITextView");
    case "img": case "svg": case "canvas": case "video": case "picture": return k("UIImageView");
    case "iframe": return k("UIWebView");
    case "ul": case "ol": case "table": return k("UITableView");
    case "li": case "tr": return k("UITableViewCell");
  }
  return k(null);
}

/** The masking mode of an element: its own or an ancestor's data-mueval-mask / data-mueval-unmask, else `mode`. */
function maskOf(el, inherited) {
  if (el.hasAttribute("data-mueval-unmask")) return "none";
  if (el.hasAttribute("data-mueval-mask")) return "all";
  return inherited;
}

const collapse = (s) => s.replace(/\s+/g, " ").trim().slice(0, 200);
const ownText = (el) => collapse([...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.data).join(" "));

/** What a control is called: its label, never its value. */
function controlTitle(el) {
  const aria = el.getAttribute("aria-label") || el.getAttribute("title") || el.getAttribute("alt");
  if (aria) return collapse(aria);
  if (el.localName === "input") return ["button", "submit", "reset"].includes(el.type) ? collapse(el.value || el.type) : el.labels?.[0] ? collapse(el.labels[0].textContent) : "";
  if (el.localName === "select" || el.localName === "textarea") return el.labels?.[0] ? collapse(el.labels[0].textContent) : "";
  return collapse(el.textContent);
}

/** Text under the masking policy: `label` is a control's label or a heading (kept under "inputs"). */
const masked = (text, mode, label) => (!text ? undefined : mode === "none" || (mode === "inputs" && label) ? text : shape(text));

/** `{className, id, title, frame}` of an element, as a touch's `target` or an action's `sender` names it. */
function describe(el, mode, withFrame = true) {
  const kind = classify(el) || { className: "UIView" };
  const r = withFrame ? el.getBoundingClientRect() : null;
  const m = maskOf(el.closest("[data-mueval-mask],[data-mueval-unmask]") || el, mode);
  const control = kind.className && kind.className !== "UILabel" && kind.className !== "UITableViewCell" && kind.className !== "UITableView";
  return {
    className: kind.className || "UIView", tag: kind.tag, id: el.id || undefined,
    title: masked(control ? controlTitle(el) : ownText(el), m, control || LABELS.has(el.localName)),
    frame: r ? { height: round(r.height), width: round(r.width), x: round(r.left), y: round(r.top) } : undefined,
  };
}

/**
 * The UI state tree of the page (thesis Listing 4.2 as the simulator writes it): a UIWindow of the viewport,
 * elements that matter (controls, images, text, lists, containers of several) with frames in CSS pixels, text
 * under the mask, fontSize from the computed style. A generator: it yields between elements so that the caller
 * spreads the walk over idle time. `bg` collects background colours for the wireframe (not sent).
 */
function* uiTree(mode, skip, bg) {
  const budget = { nodes: 1500 };
  const kids = yield* children(document.body, mode, skip, bg, budget, false);
  const tree = { className: "UIWindow", frame: { height: innerHeight, width: innerWidth, x: 0, y: 0 }, subviews: kids };
  const body = getComputedStyle(document.body).backgroundColor;
  bg.set(tree, body === "rgba(0, 0, 0, 0)" ? getComputedStyle(document.documentElement).backgroundColor : body);
  return tree;
}

function* children(el, mode, skip, bg, budget, inText) {
  const out = [];
  for (const c of [...el.children, ...(el.shadowRoot?.children || [])]) {
    if (c === skip || SKIP.has(c.localName) || budget.nodes <= 0) continue;
    const n = yield* element(c, mode, skip, bg, budget, inText);
    if (Array.isArray(n)) out.push(...n); else if (n) out.push(n);
  }
  return out;
}

function* element(el, inherited, skip, bg, budget, inText) {
  yield;
  const kind = classify(el);
  if (!kind) return null;
  const cs = getComputedStyle(el);
  if (cs.display === "none" || el.hidden) return null;
  const mode = maskOf(el, inherited);
  const leaf = LEAVES.has(kind.className);
  const text = leaf ? "" : ownText(el);
  // A block of running text is one label: its whole text, its inline elements not listed again.
  const label = !leaf && !inText && text ? collapse(el.textContent) : "";
  const subviews = leaf ? [] : yield* children(el, mode, skip, bg, budget, inText || !!label);
  if (cs.visibility === "hidden") return subviews;
  const className = kind.className || (label ? "UILabel" : "UIView");
  const hasBg = cs.backgroundColor !== "rgba(0, 0, 0, 0)" || cs.borderTopWidth !== "0px";
  if ((inText && !leaf) || (className === "UIView" && subviews.length < 2 && !hasBg && !el.id)) return subviews;
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0 && !subviews.length) return null;
  budget.nodes--;
  const node = { className, tag: kind.tag, role: kind.role, id: el.id || undefined,
    frame: { height: round(r.height), width: round(r.width), x: round(r.left), y: round(r.top) } };
  const isLabel = LABELS.has(kind.tag) || kind.role === "heading";
  if (leaf && kind.className !== "UIImageView" && kind.className !== "UIWebView") {
    node.title = masked(controlTitle(el), mode, true);
    const ph = el.getAttribute("placeholder") ?? el.getAttribute("aria-placeholder");
    if (ph != null) node.placeholder = masked(collapse(ph), mode, true);
  } else if (label) node.text = masked(label, mode, isLabel);
  if (node.title || node.text || node.placeholder) node.fontSize = round(parseFloat(cs.fontSize) || 0, 0.1);
  if (el.getAttribute("data-mueval-view")) node.viewController = el.getAttribute("data-mueval-view");
  node.subviews = subviews;
  if (hasBg) bg.set(node, cs.backgroundColor);
  return node;
}

const COLOURS = { background: "#dbe2ed", text: "#222", placeholder: "#b2b2b2", border: "#a0a0a0", button: "#324f85",
  separator: "#e0e0e0", image: "#c8c8c8", on: "#3c8ce6", white: "#fff" };

/** A CSS colour (as computed styles give it) too dark for dark text on it. */
const dark = (colour) => {
  const [r, g, b, a = 1] = (colour || "").match(/[\d.]+/g)?.map(Number) || [255, 255, 255];
  return a > 0.5 && 0.3 * r + 0.59 * g + 0.11 * b < 140;
};

/** The tree drawn as a wireframe PNG, as the simulator draws its screens: boxes by class, text "greeked". */
async function wireframe(tree, bg) {
  // One pixel per CSS pixel: a wireframe gains nothing from more, and each pixel costs the main thread to fill.
  const w = tree.frame.width, h = tree.frame.height;
  const canvas = self.OffscreenCanvas ? new OffscreenCanvas(w, h) : Object.assign(document.createElement("canvas"), { width: w, height: h });
  const g = canvas.getContext("2d");
  const fill = (f, colour) => { g.fillStyle = colour; g.fillRect(f.x, f.y, f.width, f.height); };
  const stroke = (f, colour) => { g.strokeStyle = colour; g.strokeRect(f.x + 0.5, f.y + 0.5, f.width - 1, f.height - 1); };
  // A bar per word, lines wrapped to the frame, each glyph about half the font size wide.
  const greek = (text, f, colour, size, centred) => {
    if (!text) return;
    const gw = Math.max(2, size * 0.5), lh = Math.min(size * 1.3, Math.max(f.height, size)), per = Math.max(1, Math.floor((f.width - 4) / gw));
    const lines = [];
    let line = "";
    for (const word of text.split(" ")) {
      if (line && line.length + 1 + word.length > per) { lines.push(line); line = ""; }
      line += (line ? " " : "") + word;
    }
    lines.push(line);
    const top = f.y + Math.max(0, (f.height - lines.length * lh) / 2);
    g.fillStyle = colour;
    lines.forEach((l, i) => {
      if (top + i * lh + size * 0.35 >= f.y + f.height) return;
      const x0 = centred ? f.x + Math.max(2, (f.width - l.length * gw) / 2) : f.x + 2;
      let x = x0;
      for (const word of l.split(" ")) {
        g.fillRect(x, top + i * lh + size * 0.35, Math.min(word.length * gw, f.x + f.width - x), size * 0.6);
        x += (word.length + 1) * gw;
      }
    });
  };
  const draw = (n) => {
    const f = n.frame, size = n.fontSize || 16;
    if (bg.has(n)) fill(f, bg.get(n));
    switch (n.className) {
      case "UIButton": case "UITabBarButton":
        if (!bg.has(n)) { fill(f, COLOURS.white); stroke(f, COLOURS.border); }
        greek(n.title, f, dark(bg.get(n)) ? COLOURS.white : COLOURS.button, size, true); break;
      case "UITextField": case "UISearchBar": case "UITextView":
        fill(f, COLOURS.white); stroke(f, COLOURS.border); greek(n.placeholder, { ...f, x: f.x + 6, width: f.width - 12 }, COLOURS.placeholder, size); break;
      case "UILabel": greek(n.text || n.title, f, dark(bg.get(n)) ? COLOURS.white : COLOURS.text, size); break;
      case "UIImageView": case "UIWebView": fill(f, COLOURS.image); break;
      case "UISwitch": case "UISlider": fill(f, COLOURS.on); break;
      case "UITableViewCell": fill({ ...f, y: f.y + f.height - 1, height: 1 }, COLOURS.separator); greek(n.text, f, COLOURS.text, size); break;
    }
    n.subviews.forEach(draw);
  };
  fill(tree.frame, bg.get(tree) && bg.get(tree) !== "rgba(0, 0, 0, 0)" ? bg.get(tree) : COLOURS.background);
  tree.subviews.forEach(draw);
  const blob = canvas.convertToBlob ? await canvas.convertToBlob({ type: "image/png" }) : await new Promise((ok) => canvas.toBlob(ok, "image/png"));
  return new Uint8Array(await blob.arrayBuffer());
}

/** Runs a generator in slices of idle time; resolves with its result. */
const inIdle = (gen) => new Promise((ok, ko) => {
  const step = (deadline) => {
    const end = performance.now() + Math.max(5, Math.min(12, deadline?.timeRemaining?.() ?? 8));
    try {
      for (let r = gen.next(); ; r = gen.next()) {
        if (r.done) return ok(r.value);
        if (performance.now() > end) return idle(step);
      }
    } catch (error) { ko(error); }
  };
  idle(step);
});

// ---------------------------------------------------------------- think-aloud: the AudioWorklet's code, as a string

/** Mono, averaged down to 16 kHz (a box filter: enough for speech), 16-bit, posted about once a second. */
const WORKLET = `registerProcessor("mueval-pcm", class extends AudioWorkletProcessor {
  constructor() { super(); this.step = sampleRate / ${RATE}; this.pos = 0; this.sum = 0; this.n = 0; this.fresh();
    this.port.onmessage = () => { if (this.len) this.port.postMessage(this.out.slice(0, this.len).buffer); this.fresh(); }; }
  fresh() { this.out = new Int16Array(${RATE}); this.len = 0; }
  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    if (ch) for (let i = 0; i < ch.length; i++) {
      this.sum += ch[i]; this.n++;
      if (++this.pos >= this.step) {
        this.pos -= this.step;
        this.out[this.len++] = Math.max(-32768, Math.min(32767, Math.round(this.sum / this.n * 32767)));
        this.sum = 0; this.n = 0;
        if (this.len === this.out.length) { this.port.postMessage(this.out.buffer, [this.out.buffer]); this.fresh(); }
      }
    }
    return true;
  }
});`;

/** RIFF/WAVE header of 16-bit mono PCM whose sizes are unknown while recording (0xFFFFFFFF: muevald sets them). */
function wavHeader() {
  const b = new DataView(new ArrayBuffer(44));
  const text = (at, s) => [...s].forEach((c, i) => b.setUint8(at + i, c.charCodeAt(0)));
  text(0, "RIFF"); b.setUint32(4, 0xffffffff, true); text(8, "WAVEfmt "); b.setUint32(16, 16, true);
  b.setUint16(20, 1, true); b.setUint16(22, 1, true); b.setUint32(24, RATE, true); b.setUint32(28, RATE * 2, true);
  b.setUint16(32, 2, true); b.setUint16(34, 16, true); text(36, "data"); b.setUint32(40, 0xffffffff, true);
  return new Uint8Array(b.buffer);
}

// ---------------------------------------------------------------- the overlay (Shadow DOM)

const OVERLAY_CSS = `:host{all:initial}*{box-sizing:border-box;font:14px/1.35 system-ui,-apple-system,sans-serif}
.box{position:fixed;z-index:2147483647;width:min(320px,calc(100vw - 16px));background:#fff;color:#1d1d1f;border:1px solid #bbb;
border-radius:12px;box-shadow:0 4px 18px #0004;overflow:hidden}
.bar{display:flex;align-items:center;gap:6px;background:#1d1d1f;color:#fff;padding:0 4px 0 0;min-height:44px}
.handle{cursor:move;touch-action:none;padding:0 10px;min-width:44px;min-height:44px;display:flex;align-items:center;font-size:20px}
.rec{flex:1;font-weight:600}.rec::before{content:"";display:inline-block;width:9px;height:9px;border-radius:50%;background:#e33;margin-right:6px}
button{min-height:44px;min-width:44px;border:0;border-radius:8px;padding:0 12px;background:#0a58ca;color:#fff;font-weight:600}
.bar button{background:transparent;font-size:18px}.body{padding:10px}.body>*{margin:0 0 8px}
.name{font-weight:700}.count,.note{color:#555;font-size:12px}.row{display:flex;gap:6px;flex-wrap:wrap}
.quiet{background:#e9e9ee;color:#1d1d1f}.box.small .body{display:none}[hidden]{display:none!important}a{color:#0a58ca;font-weight:600}`;

function h(tag, cls, text, parent) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text != null) el.textContent = text;
  parent?.append(el);
  return el;
}

/** The study on the page: the welcome's tasks with Begin, Done, Give up; the questionnaire after the last; Stop. */
class Overlay {
  constructor(capture) {
    this.capture = capture;
    this.host = document.createElement("mueval-overlay");
    // Open, so that tests reach it (host.shadowRoot, buttons by data-action); a closed root would protect nothing.
    const root = this.host.attachShadow({ mode: "open" });
    h("style", null, OVERLAY_CSS, root);
    const box = this.box = h("div", "box", null, root);
    const bar = h("div", "bar", null, box);
    const handle = h("span", "handle", "⠿", bar);
    handle.title = "Move";
    this.rec = h("span", "rec", "Recording", bar);
    this.toggle = h("button", null, "–", bar);
    this.toggle.dataset.action = "toggle";
    this.toggle.setAttribute("aria-label", "Collapse");
    const body = h("div", "body", null, box);
    this.count = h("p", "count", null, body);
    this.name = h("p", "name", null, body);
    this.instructions = h("p", null, null, body);
    const row = h("div", "row", null, body);
    this.begin = h("button", null, "Begin", row);
    this.done = h("button", null, "Done", row);
    this.giveUp = h("button", "quiet", "Give up", row);
    this.end = h("p", null, null, body);
    this.link = h("a", null, "Answer the questionnaire", body);
    this.link.target = "_blank";
    this.link.rel = "noopener";
    h("p", "note", "This page records what you do here (touches, screens, not what you type) for a usability study.", body);
    this.stop = h("button", "quiet", "Stop recording", body);
    for (const [el, action] of [[this.begin, "begin"], [this.done, "done"], [this.giveUp, "giveUp"], [this.stop, "stop"], [this.link, "questionnaire"]]) el.dataset.action = action;
    this.begin.onclick = () => this.mark("begin");
    this.done.onclick = () => this.mark("end");
    this.giveUp.onclick = () => this.mark("giveUp");
    this.stop.onclick = () => capture.stop().then(() => this.remove());
    this.toggle.onclick = () => this.collapse(!box.classList.contains("small"));
    this.place(JSON.parse(stored("overlay") || "null"));
    handle.onpointerdown = (e) => this.drag(e, handle);
    this.tasks = [];
    this.render();
    document.documentElement.append(this.host);
  }

  /** Where the tester put it (kept), else the bottom left corner, whatever its height. */
  place(p) {
    if (!(typeof p?.x === "number" && typeof p.y === "number")) return Object.assign(this.box.style, { left: "8px", top: "", bottom: "8px" });
    this.pos = { x: Math.max(0, Math.min(innerWidth - 60, p.x)), y: Math.max(0, Math.min(innerHeight - 44, p.y)) };
    Object.assign(this.box.style, { left: this.pos.x + "px", top: this.pos.y + "px", bottom: "" });
  }

  drag(e, handle) {
    const r = this.box.getBoundingClientRect(), start = { x: e.clientX - r.left, y: e.clientY - r.top };
    handle.setPointerCapture(e.pointerId);
    handle.onpointermove = (m) => this.place({ x: m.clientX - start.x, y: m.clientY - start.y });
    handle.onpointerup = handle.onpointercancel = () => { handle.onpointermove = null; stored("overlay", JSON.stringify(this.pos)); };
  }

  collapse(small) {
    clearTimeout(this.timer);
    this.box.classList.toggle("small", small);
    this.toggle.textContent = small ? "+" : "–";
    this.toggle.setAttribute("aria-label", small ? "Expand" : "Collapse");
  }

  /** The welcome's tasks, and where the tester stands in them (kept per session across reloads). */
  study(sessionId, tasks, questionnaire) {
    this.key = "tasks:" + sessionId;
    this.tasks = tasks;
    this.state = JSON.parse(stored(this.key) || '{"index":0,"begun":false}');
    let url = null;
    try { url = questionnaire && ["http:", "https:"].includes(new URL(questionnaire).protocol) ? questionnaire : null; } catch { /* not a URL */ }
    this.questionnaire = url;
    this.render();
    if (tasks.length && !this.state.begun) this.collapse(false);
  }

  mark(marker) {
    const task = this.tasks[this.state.index];
    if (!task) return;
    this.capture.mark(marker, task.name);
    if (marker === "begin") {
      this.state.begun = true;
      this.timer = setTimeout(() => this.collapse(true), 2500);  // out of the app's way while the tester works
    } else this.state = { index: this.state.index + 1, begun: false };
    stored(this.key, JSON.stringify(this.state));
    this.render();
    if (marker !== "begin") this.collapse(false);
  }

  render() {
    const { tasks } = this, s = this.state || { index: 0, begun: false }, task = tasks[s.index];
    const finished = tasks.length > 0 && !task;
    this.count.textContent = task ? `Task ${s.index + 1} of ${tasks.length}` : "";
    this.name.textContent = task ? task.name : "";
    this.instructions.textContent = task?.instructions || "";
    this.rec.textContent = task ? `Recording · task ${s.index + 1}` : "Recording";
    this.begin.hidden = !task || s.begun;
    this.done.hidden = this.giveUp.hidden = !task || !s.begun;
    this.end.textContent = finished ? (this.questionnaire ? "Thank you! One last step:" : "Thank you: all tasks are done.") : "";
    this.link.hidden = !(finished && this.questionnaire);
    if (this.questionnaire) this.link.href = this.questionnaire;
    for (const el of [this.count, this.name, this.instructions, this.end]) el.hidden = !el.textContent;
    if (!tasks.length) this.collapse(true);
  }

  remove() { this.host.remove(); }
}

// ---------------------------------------------------------------- the capture

let current = null;

/**
 * Starts capturing this page. Options: server (muevald's console origin; default: where this module came from),
 * invitation (default: the page's ?mueval=CODE) or pairingCode, token, appId, appVersion, sensors
 * (["accelerometer", "frameTiming"] by default; add "microphone" for think-aloud), mask ("inputs", "all",
 * "none"), maxSpoolBytes (8 MiB), overlay (true). Resolves once the spool is open; delivery goes on by itself.
 */
export async function start(options = {}) {
  if (current) throw new Error("muEval capture is already started: stop() it first");
  const capture = new Capture(options);
  current = capture;
  try {
    await capture.open();
  } catch (error) {
    current = null;
    throw error;
  }
  return capture;
}

class Capture extends EventTarget {
  constructor(o) {
    super();
    const server = new URL(o.server || new URL(import.meta.url).origin);
    if (!["http:", "https:", "ws:", "wss:"].includes(server.protocol)) throw new Error(`muEval: server must be an http(s) origin, not ${o.server}`);
    this.socketURL = `${server.protocol.replace("http", "ws")}//${server.host}/capture`;
    this.server = server.origin;
    // An option given as undefined keeps its default.
    this.o = { mask: "inputs", maxSpoolBytes: 8 << 20, overlay: true, sensors: ["accelerometer", "frameTiming"] };
    for (const k in o) if (o[k] !== undefined) this.o[k] = o[k];
    if (!(this.o.maxSpoolBytes > 0)) throw new Error(`muEval: maxSpoolBytes must be a positive number, not ${o.maxSpoolBytes}`);
    if (!["inputs", "all", "none"].includes(this.o.mask)) throw new Error(`muEval: mask must be "inputs", "all" or "none", not ${o.mask}`);
    Object.assign(this, { ws: null, welcome: null, inflight: new Map(), highest: -1, queue: [], flushing: null, attempt: 0,
      counts: { sent: 0, acked: 0, refused: 0 }, lastError: null, lastHeard: 0, probing: false, view: null, stack: [],
      writing: 0, off: [], timers: [], fingers: new Map(), moves: new Map(), gesture: null, typing: new Map(), frames: new Frames(),
      renderUntil: 0, looping: false, lastInput: 0, last: 0, anchor: Date.now() - performance.now(), selection: [] });
  }

  // -------------------------------------------------------------- life cycle

  async open() {
    this.spool = await Spool.open("mueval " + this.server, this.o.maxSpoolBytes);
    // The device's id is kept with the spool (IndexedDB is written at once; a killed browser may lose the last of
    // localStorage), so that what is spooled is always sent as the device that recorded it. The invitation outlives
    // a navigation that drops ?mueval= and a reload: kept until stop().
    const saved = (await this.spool.meta("device").catch(() => null)) || {};
    this.deviceId = saved.id || stored("device") || "web-" + randomId();
    const o = this.o, query = new URLSearchParams(location.search).get("mueval");
    this.invitation = o.invitation || query || (o.pairingCode ? null : saved.invitation || stored("invitation"));
    stored("device", this.deviceId);
    stored("invitation", this.invitation);
    await this.spool.meta("device", { id: this.deviceId, invitation: this.invitation });
    this.droppedReported = this.spool.dropped;
    if (this.o.overlay) this.overlay = new Overlay(this);
    this.record("ApplicationEvent", { type: "launch", appId: this.o.appId, appVersion: this.o.appVersion });
    this.listen();
    this.wrapHistory();
    this.startSensors();
    const fcp = performance.getEntriesByName?.("first-contentful-paint")[0];
    this.launchTime = (fcp ? fcp.startTime : performance.now()) / 1000;
    this.checkView("launch");
    this.timers.push(setInterval(() => this.heartbeat(), 5000));
    this.connect();
  }

  /** Stops: sensors and listeners off, waits up to `timeout` ms for what is spooled to be acknowledged, says goodbye. */
  async stop({ timeout = 10000 } = {}) {
    if (this.stopped) return this.status();
    this.stopped = true;
    if (current === this) current = null;
    for (const off of this.off) off();
    this.off = [];
    this.mic?.stop();
    this.endFrames();
    this.typing.forEach((t, el) => this.typed(el));
    await this.flush();
    const deadline = performance.now() + timeout;
    while (this.spool.entries.size && this.ws?.readyState === 1 && performance.now() < deadline) await new Promise((ok) => setTimeout(ok, 50));
    if (this.ws?.readyState === 1 && this.welcome) this.ws.send("<goodbye/>\n");
    this.timers.forEach(clearInterval);
    clearTimeout(this.retry);
    this.ws?.close();
    this.overlay?.remove();
    stored("invitation", null);
    await this.spool.meta("device", { id: this.deviceId }).catch(() => {});
    return this.status();
  }

  /** What tests and apps may read: delivery, the session, the spool. */
  status() {
    return { connected: this.ws?.readyState === 1 && !!this.welcome, sessionId: this.welcome?.session ?? null,
      spooled: (this.spool?.entries.size ?? 0) + this.queue.length + this.writing, spoolBytes: this.spool?.bytes ?? 0, dropped: this.spool?.dropped ?? 0,
      ...this.counts, lastError: this.lastError, deviceId: this.deviceId, tasks: this.tasks(), questionnaire: this.welcome?.questionnaire ?? null };
  }

  tasks() { return [...(this.welcome?.tasks || [])].sort((a, b) => (a.order ?? 0) - (b.order ?? 0)); }

  /** Adds a listener that stop() removes. */
  on(target, type, fn, opts = { capture: true, passive: true }) {
    target.addEventListener(type, fn, opts);
    this.off.push(() => target.removeEventListener(type, fn, opts));
  }

  // -------------------------------------------------------------- recording

  /** Device time in seconds: the wall clock anchored to a monotonic one, re-anchored when the page comes back
   * (Safari's monotonic clock stops while the phone sleeps); it never runs backwards. */
  now() {
    this.last = Math.max(this.last, Math.round(this.anchor + performance.now()) / 1000);
    return this.last;
  }

  /** One message into the spool queue; resolves when it is durable. `lean`: its fields without the heavy parts. */
  record(cls, fields, tier = KEEP, lean) {
    return this.enqueue("event", pairs({ class: cls, timestamp: this.now() }), pairs(fields), tier, lean && pairs(lean));
  }

  /** A message whose seq goes between `head` and `tail`; spooled with the others of the next 100 ms (a tap's
   * touches, gesture and click in one transaction, one send, one ack). Hidden or leaving, the page flushes at once. */
  enqueue(name, head, tail, tier, lean) {
    this.queue.push({ name, head, tail, tier, lean });
    return (this.flushing ??= new Promise((ok) => setTimeout(ok, 100)).then(() => this.flush()));
  }

  /** Writes the queue to the spool now (pagehide calls it: no timer runs after that), then sends. */
  flush() {
    this.flushing = null;
    const items = this.queue;
    this.queue = [];
    this.writing += items.length;
    const written = this.spool.write(items).finally(() => { this.writing -= items.length; }).then(() => this.pump()).catch((error) => this.problem(`the spool cannot be written: ${error}`));
    this.reportDropped();
    return written;
  }

  /** The spool dropped samples for room: said once the spell is over, with the running total. */
  reportDropped() {
    const d = this.spool.dropped;
    if (d > this.droppedReported && this.spool.bytes < this.o.maxSpoolBytes * 0.75) {
      const since = d - this.droppedReported;
      this.droppedReported = d;
      this.record("DeviceSensorEvent", { sensor: "captureQueue", dropped: d, droppedSince: since, maxSpoolBytes: this.o.maxSpoolBytes });
    }
  }

  problem(text) {
    this.lastError = text;
    this.dispatchEvent(new CustomEvent("problem", { detail: text }));
  }

  /** An application's own event (CustomEvent): `name` and whatever fields it wants stored. */
  event(name, fields = {}) {
    const { class: _c, timestamp: _t, seq: _s, name: _n, ...rest } = fields;
    return this.record("CustomEvent", { name: String(name), ...rest });
  }

  /** The tester's own task marks; a task the welcome does not name is refused (as MuEvalCapture does). */
  mark(marker, name) {
    const tasks = this.tasks();
    if (tasks.length && !tasks.some((t) => t.name === name)) {
      throw new Error(`the study has no task "${name}"; its tasks: ${tasks.map((t) => t.name).join(", ")}`);
    }
    this.activate();
    return this.record("CustomEvent", { name, marker, by: "tester" });
  }

  beginTask(name) { return this.mark("begin", name); }
  endTask(name) { return this.mark("end", name); }
  giveUpTask(name) { return this.mark("giveUp", name); }

  // -------------------------------------------------------------- delivery

  connect() {
    if (this.stopped || (this.ws && this.ws.readyState < 2)) return;
    clearTimeout(this.retry);
    let ws;
    try { ws = this.ws = new WebSocket(this.socketURL); } catch (error) { this.problem(String(error)); return this.reconnect(); }
    this.welcome = null;
    this.connecting = performance.now();
    this.inflight.clear();
    this.highest = -1;
    ws.onopen = () => {
      this.lastHeard = performance.now();
      ws.send(this.hello());
      // What another tab of this device (or the page before a reload) spooled meanwhile goes on this connection too.
      this.loaded = this.spool.reload();
    };
    ws.onmessage = (e) => { if (ws === this.ws) this.receive(String(e.data)); };
    ws.onclose = () => { if (ws === this.ws) { this.ws = null; this.reconnect(); } };
  }

  hello() {
    return `<hello>${pairs({ protocolVersion: 1, deviceId: this.deviceId, ...device(), appId: this.o.appId, appVersion: this.o.appVersion,
      token: this.o.token, pairing: this.o.pairingCode, invitation: this.invitation })}</hello>\n`;
  }

  /** Exponential backoff with jitter over the second half: 0.5 s doubling to 30 s; a welcome resets it. */
  reconnect(delay) {
    if (this.stopped) return;
    const base = Math.min(30000, 500 * 2 ** this.attempt++);
    clearTimeout(this.retry);
    this.retry = setTimeout(() => this.connect(), delay ?? base / 2 + Math.random() * base / 2);
  }

  /** Closes the socket and connects again at once (a dead socket, a page back from the cache). */
  renew() {
    const ws = this.ws;
    this.ws = null;
    ws?.close();
    this.attempt = 0;
    this.connect();
  }

  /** Sends, in seq order and after the welcome, what is spooled and not yet on this connection. */
  pump() {
    const ws = this.ws;
    if (!ws || ws.readyState !== 1 || !this.welcome) return;
    let frame = "", full = false, late = false;
    for (const e of this.spool.entries.values()) {
      if (e.seq <= this.highest) { late ||= !this.inflight.has(e.seq); continue; }
      if ((full = ws.bufferedAmount > 1 << 20)) break;
      frame += Spool.xml(e);
      this.inflight.set(e.seq, e);
      this.highest = e.seq;
      this.counts.sent++;
      if (frame.length > 65536) { send(ws, frame); frame = ""; }
    }
    if (frame) send(ws, frame);
    // Not all sent (the socket's buffer is full): try again when it has drained.
    if (full) setTimeout(() => this.pump(), 100);
    // Spooled late (by another tab) below what this connection sent: an ack would cover it unsent, so a new
    // connection sends everything again in order (stored once by seq).
    if (late) this.renew();
  }

  receive(text) {
    this.lastHeard = performance.now();
    this.probing = false;
    for (const m of parseReplies(text)) {
      if (m.type === "welcome") this.welcomed(m);
      else if (m.type === "ack") this.acked(m.seq);
      else this.refused(m);
    }
  }

  welcomed(m) {
    const first = !this.welcome;
    const changed = JSON.stringify([m.session, m.tasks, m.questionnaire]) !== JSON.stringify([this.welcome?.session, this.welcome?.tasks, this.welcome?.questionnaire]);
    this.welcome = { session: m.session, sensors: m.sensors || [], tasks: m.tasks || [], questionnaire: m.questionnaire };
    this.attempt = 0;
    this.lastError = null;
    this.selection = this.welcome.sensors;
    this.startSensors();
    if (changed) {
      this.overlay?.study(m.session, this.tasks(), m.questionnaire);
      this.dispatchEvent(new CustomEvent("welcome", { detail: this.status() }));
    }
    if (first) this.loaded.then(() => this.pump());
  }

  /** Everything this connection sent up to `seq` is dealt with: gone from the spool. */
  acked(seq) {
    const done = [];
    for (const s of this.inflight.keys()) {
      if (s > seq) break;
      done.push(s);
      this.inflight.delete(s);
    }
    this.counts.acked += done.length;
    this.spool.remove(done);
    this.reportDropped();
  }

  /** An <error>: one message refused for good; a range not stored (a full disk: sent again later, whatever a later
   * ack says); or, before the welcome, the hello refused (the socket stays until a session takes the device). */
  refused(m) {
    this.problem(m.reason);
    if (m.fromSeq != null) {
      this.ws.onclose = null;
      this.ws.close();
      this.ws = null;
      this.reconnect(5000);
    } else if (m.seq != null && this.inflight.has(m.seq)) {
      this.inflight.delete(m.seq);
      this.spool.remove([m.seq]);
      this.counts.refused++;
    }
  }

  /** The application-level heartbeat: mobile Safari drops sockets without a word. Unanswered messages for 15 s,
   * or a probe unanswered for 10 s, mean the socket is dead; after 25 s of silence a second hello probes it
   * (muevald answers with a welcome and keeps the session). */
  heartbeat() {
    const ws = this.ws, quiet = performance.now() - this.lastHeard;
    if (ws?.readyState === 0 && performance.now() - this.connecting > 15000) return this.renew();
    if (!ws || ws.readyState !== 1 || !this.welcome) return;
    if ((this.inflight.size && quiet > 15000) || (this.probing && quiet > 10000)) return this.renew();
    if (quiet > 25000 && !this.probing && document.visibilityState === "visible") this.probe();
  }

  probe() {
    this.probing = true;
    this.lastHeard = performance.now();
    this.ws.send(this.hello());
  }

  // -------------------------------------------------------------- page life cycle

  listen() {
    const on = this.on.bind(this);
    on(document, "visibilitychange", () => {
      if (document.visibilityState === "hidden") return this.background("hidden");
      this.foreground();
    });
    on(window, "pagehide", (e) => this.background("pagehide", e.persisted));
    on(window, "pageshow", (e) => { if (e.persisted) { this.foreground(); this.renew(); } });
    on(window, "online", () => this.renew());
    on(window, "error", (e) => {
      if (!(e instanceof ErrorEvent)) return;  // a resource that failed to load, not an exception
      this.exception(e.error?.name || "Error", e.message, e.error?.stack, `${e.filename}:${e.lineno}:${e.colno}`);
    });
    on(window, "unhandledrejection", (e) => {
      const r = e.reason;
      this.exception(r?.name || "UnhandledRejection", r?.message ?? String(r), r?.stack);
    });
    const touches = (e) => this.touch(e);
    for (const t of ["touchstart", "touchmove", "touchend", "touchcancel"]) on(window, t, touches);
    const pointers = (e) => this.pointer(e);
    for (const t of ["pointerdown", "pointermove", "pointerup", "pointercancel"]) on(window, t, pointers);
    on(window, "scroll", (e) => this.scrolled(e));
    on(window, "click", (e) => this.clicked(e));
    on(window, "keydown", () => this.activate());
    on(document, "focusin", (e) => this.focused(e));
    on(document, "input", (e) => this.input(e));
    on(document, "focusout", (e) => this.typing.has(e.target) && this.typed(e.target));
    on(window, "popstate", () => this.routeChanged("pop"));
    on(window, "hashchange", () => this.routeChanged("push"));
    const observer = new MutationObserver(() => this.viewMayChange());
    observer.observe(document.documentElement, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-mueval-view", "hidden"] });
    this.off.push(() => observer.disconnect());
  }

  /** Motion where the browser asks for it: at once (Chrome grants it), else (iOS wants a tap) at the first tap
   * anywhere, the overlay's Begin included. */
  askForMotion() {
    const ask = () => DeviceMotionEvent.requestPermission().then((s) => s === "granted" && this.motion());
    ask().catch(() => {
      const tapped = () => { off(); ask().catch(() => this.problem("motion sensors are off: the tester did not allow them")); };
      const off = () => { removeEventListener("click", tapped, true); removeEventListener("touchend", tapped, true); };
      addEventListener("click", tapped, true);
      addEventListener("touchend", tapped, true);
      this.off.push(off);
    });
  }

  /** Hidden or leaving: a page may be frozen or killed from here on, so the queue goes to the spool at once. */
  background(why, persisted) {
    if (!this.hidden) {
      this.hidden = true;
      this.endFrames();
      this.typing.forEach((t, el) => this.typed(el));
      this.record("ApplicationEvent", { type: "background", reason: why, persisted });
    }
    this.flush();
  }

  foreground() {
    this.anchor = Date.now() - performance.now();
    if (this.hidden) {
      this.hidden = false;
      this.record("ApplicationEvent", { type: "foreground" });
    }
    // Back on screen: a socket that slept may be dead. Connect now, or probe the open one.
    if (!this.ws) { this.attempt = 0; this.connect(); } else if (this.ws.readyState === 1 && this.welcome) this.probe();
  }

  /** An error as an exception event; the same one at most 10 times (a page throwing in every frame would flood). */
  exception(name, reason, stack, source) {
    const key = `${name}: ${reason}`, seen = (this.errors ??= new Map()).get(key) || 0;
    if (seen >= 10 || this.errors.size > 100) return;
    this.errors.set(key, seen + 1);
    this.record("ApplicationEvent", { type: "exception", name: String(name), reason: String(reason ?? ""), fatal: false, source,
      callStack: stack ? String(stack).split("\n").slice(0, 30).map((l) => l.trim()).filter(Boolean) : undefined });
  }

  // -------------------------------------------------------------- touches, pointers, gestures

  isOverlay(target) { return !!this.overlay && target === this.overlay.host; }

  /** Input: the start of a transition it may cause. */
  activate() {
    this.lastInput = performance.now();
  }

  /** The page moves (a finger drags, it scrolls, a view comes in): frames are counted for `ms` more. */
  rendering(ms) {
    this.renderUntil = Math.max(this.renderUntil, performance.now() + ms);
    this.frameLoop();
  }

  touch(e) {
    if (this.isOverlay(e.target)) return;
    const phase = { touchstart: "began", touchmove: "moved", touchend: "ended", touchcancel: "cancelled" }[e.type];
    for (const t of e.changedTouches) {
      const p = { id: t.identifier, x: round(t.clientX), y: round(t.clientY), force: t.force, radiusX: t.radiusX, radiusY: t.radiusY, target: t.target, kind: "touch" };
      this.finger(phase, p, e.touches.length);
    }
  }

  pointer(e) {
    // Touches come as touch events where the browser has them; mouse and pen (and touch without touch events) here.
    if (e.pointerType === "touch" && "ontouchstart" in window) return;
    if (this.isOverlay(e.target) || (e.type === "pointermove" && !this.fingers.has("p" + e.pointerId))) return;
    const phase = { pointerdown: "began", pointermove: "moved", pointerup: "ended", pointercancel: "cancelled" }[e.type];
    if (phase !== "began" && !this.fingers.has("p" + e.pointerId)) return;
    const p = { id: "p" + e.pointerId, x: round(e.clientX), y: round(e.clientY), force: e.pressure, radiusX: e.width / 2, radiusY: e.height / 2,
      target: e.target, kind: e.pointerType };
    this.finger(phase, p);
  }

  /** One touch point's phase: moves wait for the next animation frame (the latest per finger), the rest go now. */
  finger(phase, p, down) {
    if (phase === "moved") {
      if (!this.moves.size) requestAnimationFrame(() => this.flushMoves());
      this.moves.set(p.id, p);
      return;
    }
    if (this.moves.has(p.id)) this.flushMoves();
    const now = performance.now();
    if (phase === "began") {
      this.activate();
      const target = p.target instanceof Element ? describe(p.target, this.o.mask) : undefined;
      const g = this.gesture ??= { t0: now, first: p.id, el: p.target, target, fingers: 0, span0: 0, span: 0, scrolled: false, path: [[p.x, p.y]], end: [p.x, p.y], moved: 0 };
      this.fingers.set(p.id, { x0: p.x, y0: p.y, x: p.x, y: p.y, target });
      g.fingers = Math.max(g.fingers, this.fingers.size);
      if (this.fingers.size === 2) g.span0 = g.span = this.span();
    }
    const f = this.fingers.get(p.id);
    if (!f) return;
    this.moved(p, f);
    const ends = phase === "ended" || phase === "cancelled";
    this.touchEvent(phase, p, f, down ?? this.fingers.size - ends);
    if (ends) {
      this.fingers.delete(p.id);
      if (!this.fingers.size) this.recognise(now);
    }
  }

  flushMoves() {
    const g = this.gesture;
    for (const p of this.moves.values()) {
      const f = this.fingers.get(p.id);
      if (!f) continue;
      this.moved(p, f);
      this.touchEvent("moved", p, f, this.fingers.size);
    }
    this.moves.clear();
    if (g) {
      if (g.path.length < 64) g.path.push(g.end);
      if (this.fingers.size >= 2) g.span = this.span();
    }
    this.rendering(250);
  }

  moved(p, f) {
    Object.assign(f, { x: p.x, y: p.y });
    const g = this.gesture;
    if (!g) return;
    g.moved = Math.max(g.moved, Math.hypot(p.x - f.x0, p.y - f.y0));
    if (p.id === g.first) g.end = [p.x, p.y];
  }

  span() {
    const [a, b] = this.fingers.values();
    return a && b ? Math.hypot(a.x - b.x, a.y - b.y) : 0;
  }

  /** UserInputEvent `touch`, as the simulator sends it, with every point's identifier, force and radius. */
  touchEvent(phase, p, f, down) {
    this.record("UserInputEvent", { type: "touch", phase, x: p.x, y: p.y, tapCount: phase === "moved" ? 0 : 1, view: this.view,
      target: phase === "moved" ? undefined : f.target, identifier: typeof p.id === "number" ? p.id : Number(p.id.slice(1)),
      pointerType: p.kind, force: p.force, radiusX: p.radiusX, radiusY: p.radiusY, touches: Math.max(0, down) },
    phase === "moved" ? SAMPLE : KEEP);
  }

  /** All fingers lifted: what the gesture was (tap, long press, swipe, scroll, drag, pinch), as a gesture event. */
  recognise(now) {
    const g = this.gesture;
    this.gesture = null;
    if (!g) return;
    const [x0, y0] = g.path[0];
    if (g.path.length < 64 && g.path.at(-1) !== g.end) g.path.push(g.end);
    const duration = (now - g.t0) / 1000, dx = g.end[0] - x0, dy = g.end[1] - y0;
    let gesture;
    if (g.fingers >= 2 && g.span0 > 0 && Math.abs(g.span / g.span0 - 1) > 0.2) gesture = "pinch";
    else if (g.moved < 10) gesture = duration >= 0.5 ? "longPress" : "tap";
    else if (g.scrolled) gesture = "scroll";
    else gesture = duration < 0.5 && Math.hypot(dx, dy) > 30 ? "swipe" : "drag";
    const direction = ["swipe", "scroll", "drag"].includes(gesture)
      ? (Math.abs(dx) > Math.abs(dy) ? (dx < 0 ? "left" : "right") : (dy < 0 ? "up" : "down")) : undefined;
    const el = g.el;
    this.record("UserInputEvent", { type: "gesture", gesture, view: this.view,
      recognized: gesture === "tap" ? !!el?.closest?.(INTERACTIVE) : true,
      duration: Math.round(duration * 1000) / 1000, path: g.path, target: g.target, direction,
      scale: gesture === "pinch" ? Math.round(g.span / g.span0 * 1000) / 1000 : undefined, fingers: g.fingers });
  }

  /** Scrolling during a gesture makes it a scroll; the scroll's end is a UserInterfaceEvent, as UIKit's. */
  scrolled(e) {
    if (this.gesture) this.gesture.scrolled = true;
    this.rendering(250);
    clearTimeout(this.scrollTimer);
    this.scrollTimer = setTimeout(() => {
      const el = e.target instanceof Element ? e.target : document.scrollingElement || document.documentElement;
      this.record("UserInterfaceEvent", { type: "scrollViewDidEndDragging", view: this.view, sender: describe(el, this.o.mask, false),
        contentOffset: { x: round(el.scrollLeft), y: round(el.scrollTop) } });
    }, 150);
  }

  clicked(e) {
    const el = e.target instanceof Element && !this.isOverlay(e.target) && e.target.closest("a[href],button,input,select,summary,[role=button],[role=link],[role=tab],[role=menuitem]");
    if (!el || el.matches("input:not([type=button],[type=submit],[type=reset],[type=checkbox],[type=radio],[type=image])")) return;
    this.activate();
    this.record("UserInterfaceEvent", { type: "action", event: "touchUpInside", action: "click", view: this.view, sender: describe(el, this.o.mask) });
  }

  // -------------------------------------------------------------- text entry, without its content

  editable(el) { return el instanceof Element && !this.isOverlay(el) && (el.matches("input,textarea") || el.isContentEditable); }

  focused(e) {
    if (!this.editable(e.target) || e.target.matches("input[type=button],input[type=submit],input[type=checkbox],input[type=radio],input[type=range]")) return;
    this.record("UserInterfaceEvent", { type: "editingDidBegin", view: this.view, sender: describe(e.target, this.o.mask) });
  }

  /** Typing is counted per field and sent at a pause: how many edits and of what kind, never the text. */
  input(e) {
    const el = e.target;
    if (!this.editable(el) || el.matches("input[type=checkbox],input[type=radio],input[type=range]")) return;
    this.activate();
    const t = this.typing.get(el) || { edits: 0, inserted: 0, deleted: 0 };
    t.edits++;
    if (e.inputType?.startsWith("delete")) t.deleted++; else t.inserted++;
    clearTimeout(t.timer);
    t.timer = setTimeout(() => this.typed(el), 1000);
    this.typing.set(el, t);
  }

  typed(el) {
    const t = this.typing.get(el);
    if (!t) return;
    clearTimeout(t.timer);
    this.typing.delete(el);
    this.record("UserInputEvent", { type: "text", view: this.view, target: describe(el, this.o.mask, false), edits: t.edits,
      insertions: t.inserted, deletions: t.deleted, secure: el.type === "password" || undefined });
  }

  // -------------------------------------------------------------- views

  wrapHistory() {
    for (const name of ["pushState", "replaceState"]) {
      const original = history[name], capture = this;
      const wrapper = function (...args) {
        const result = original.apply(this, args);
        capture.routeChanged(name === "pushState" ? "push" : "replace");
        return result;
      };
      history[name] = wrapper;
      this.off.push(() => { if (history[name] === wrapper) history[name] = original; });
    }
  }

  /** A route changed: the app renders the new view; look once it has had two frames to do so. */
  routeChanged(transition) {
    this.transition = transition;
    this.routeTime = this.lastInput > performance.now() - 1000 ? this.lastInput : performance.now();
    requestAnimationFrame(() => requestAnimationFrame(() => this.checkView(transition)));
  }

  viewMayChange() {
    if (this.viewTimer) return;
    this.viewTimer = setTimeout(() => { this.viewTimer = null; this.checkView(this.transition || "push"); }, 250);
  }

  /** The view's name: the visible `data-mueval-view` element's, else the path and hash of the URL. */
  viewName() {
    for (const el of document.querySelectorAll("[data-mueval-view]")) {
      if (el.checkVisibility ? el.checkVisibility() : el.offsetParent !== null) return el.getAttribute("data-mueval-view");
    }
    return location.pathname + location.hash;
  }

  checkView(transition) {
    if (this.stopped) return;
    const name = this.viewName();
    if (name === this.view) return;
    const from = this.view, started = this.routeTime ?? performance.now();
    this.routeTime = null;
    this.transition = null;
    this.view = name;
    const at = this.stack.indexOf(name);
    if (at >= 0) this.stack.length = at + 1; else this.stack.push(name);
    if (this.stack.length > 20) this.stack.shift();
    const kind = !from ? "launch" : at >= 0 ? "pop" : transition === "pop" ? "pop" : "push";
    for (const r of this.frames.viewAppeared(name, from ? (performance.now() - started) / 1000 : undefined)) this.frameReading(r);
    if (!from && this.launchTime != null) this.frameReading({ kind: "launch", view: name, duration: this.launchTime });
    this.rendering(600);
    this.viewAppeared(name, from, kind).catch((error) => this.problem(`the view ${name} could not be captured: ${error}`));
  }

  /** UserInterfaceEvent `viewDidAppear` with the stack, the UI state tree (built in idle time) and its wireframe. */
  async viewAppeared(view, from, transition) {
    const bg = new Map();
    const tree = await inIdle(uiTree(this.o.mask, this.overlay?.host, bg));
    await new Promise(idle);  // the drawing in a slice of its own, not after the tree's last
    const screenshot = await wireframe(tree, bg).catch(() => undefined);
    const title = document.title ? masked(document.title, this.o.mask, true) : undefined;
    const fields = { type: "viewDidAppear", transition, view, title, previousView: from ?? undefined, viewStack: [...this.stack], uiState: tree };
    // When the spool is full, the view change goes without its screenshot rather than not at all.
    return this.record("UserInterfaceEvent", { ...fields, screenshot }, KEEP, fields);
  }

  // -------------------------------------------------------------- sensors

  selects(sensor) {
    const s = this.selection;
    return this.o.sensors.includes(sensor) && (!s.length || s.includes(sensor) || (sensor !== "microphone" && s.includes("DeviceSensorEvent")));
  }

  /** Sensors on and off as the session selects them (before the welcome: all the app asked for but the microphone). */
  startSensors() {
    if (this.stopped) return;
    if (!this.selects("accelerometer")) this.motionOff?.();
    else if (typeof self.DeviceMotionEvent?.requestPermission !== "function") this.motion();
    else if (!this.motionOff && !this.askedForMotion) { this.askedForMotion = true; this.askForMotion(); }
    if (this.selects("frameTiming") && !this.longFrames && self.PerformanceObserver) {
      const types = PerformanceObserver.supportedEntryTypes || [];
      const type = types.includes("long-animation-frame") ? "long-animation-frame" : types.includes("longtask") ? "longtask" : null;
      if (type) {
        // A long frame while nothing else is counted (an idle page's timer doing heavy work) is a hitch too.
        this.longFrames = new PerformanceObserver((list) => {
          if (this.looping || this.hidden) return;
          for (const e of list.getEntries()) { const r = this.frames.present(e.duration / 1000); if (r) this.frameReading(r); }
        });
        this.longFrames.observe({ type });
        this.off.push(() => this.longFrames.disconnect());
      }
    }
    if (this.welcome && this.selects("microphone") && !this.mic) this.microphone();
    if (this.mic && !this.selects("microphone")) this.mic.stop();
  }

  /** The accelerometer in g along the device's axes, gravity included, signed as UIKit's (upright: y = −1): every
   * 2 s at rest, every event (up to 60 a second) for 1.5 s after the phone moved hard (0.5 g away from the last calm reading). */
  motion() {
    if (this.motionOff || this.stopped) return;
    let calm = null, fastUntil = 0, lastSample = -Infinity;
    const handler = (e) => {
      const a = e.accelerationIncludingGravity;
      if (!a || a.x == null) return;
      const x = -a.x / G, y = -a.y / G, z = -a.z / G, t = performance.now();
      const away = calm ? Math.hypot(x - calm[0], y - calm[1], z - calm[2]) : 0;
      if (away > 0.5) fastUntil = t + 1500;
      else if (t > fastUntil && Math.abs(Math.hypot(x, y, z) - 1) < 0.15) calm = [x, y, z];
      if (t - lastSample < (t < fastUntil ? 15 : 2000)) return;
      lastSample = t;
      this.record("DeviceSensorEvent", { sensor: "accelerometer", x: Math.round(x * 1000) / 1000, y: Math.round(y * 1000) / 1000, z: Math.round(z * 1000) / 1000 }, SAMPLE);
    };
    addEventListener("devicemotion", handler);
    this.motionOff = () => { removeEventListener("devicemotion", handler); this.motionOff = null; };
    this.off.push(() => this.motionOff?.());
  }

  frameReading(r) {
    if (!this.selects("frameTiming")) return;
    this.record("DeviceSensorEvent", { sensor: "frameTiming", ...micro({ ...r }) }, r.kind === "frames" ? SAMPLE : KEEP);
  }

  /** Frames are counted while the page moves: a finger dragging, scrolling, a view's transition, and a little
   * after. Not after every tap: requesting animation frames makes the browser render frames a still page would
   * not (a second of them cost more than the rest of a tap on a slow phone), and an idle page's frames would
   * dilute the hitches. Long animation frames (PerformanceObserver) cover the rest. */
  frameLoop() {
    if (this.looping || this.stopped || this.hidden || !this.selects("frameTiming")) return;
    this.looping = true;
    let prev = 0, fastest = Infinity, count = 0;
    const tick = (t) => {
      if (prev) {
        const interval = t - prev;
        if (count++ < 20 && interval < fastest) {
          fastest = interval;
          if (count > 5) this.frames.rate = fastest < 9.5 ? 120 : fastest < 13 ? 90 : 60;
        }
        const r = this.frames.present(interval / 1000);
        if (r) this.frameReading(r);
      } else {
        const r = this.frames.present(1 / this.frames.rate);  // the first frame after a pause passes one refresh
        if (r) this.frameReading(r);
      }
      prev = t;
      if (performance.now() < this.renderUntil && !this.hidden && !this.stopped) requestAnimationFrame(tick);
      else this.looping = false;
    };
    requestAnimationFrame(tick);
  }

  endFrames() {
    const r = this.frames.flush();
    if (r) this.frameReading(r);
  }

  /** Think-aloud: the microphone as 16 kHz mono PCM, `audio/wav` chunks of a second (docs/PROTOCOL.md, "Media"). */
  async microphone() {
    const mic = this.mic = { stop: () => { mic.stopped = true; mic.finish?.(); this.mic = null; } };
    try {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
      const context = new AudioContext();
      const url = URL.createObjectURL(new Blob([WORKLET], { type: "text/javascript" }));
      await context.audioWorklet.addModule(url);
      URL.revokeObjectURL(url);
      const node = new AudioWorkletNode(context, "mueval-pcm");
      context.createMediaStreamSource(stream).connect(node);
      node.connect(context.destination);  // pulls the node; it outputs silence
      // Each recording is a stream of its own: (device, stream, part) must not repeat after a reload.
      const rec = { stream: "voice-" + Date.now(), part: 0, samples: 0, start: 0 };
      node.port.onmessage = (e) => this.audio(rec, new Int16Array(e.data));
      mic.finish = () => {
        node.port.postMessage("flush");
        setTimeout(() => { stream.getTracks().forEach((t) => t.stop()); context.close(); }, 200);
      };
      if (mic.stopped) return mic.finish();
      // Autoplay rules may hold the context until a tap.
      const resume = () => context.state === "suspended" && context.resume();
      resume();
      this.on(window, "click", resume);
      this.on(window, "touchend", resume);
    } catch (error) {
      this.problem(`think-aloud is off: the microphone is not available (${error})`);
    }
  }

  audio(rec, pcm) {
    const duration = pcm.length / RATE;
    if (rec.part === 0) rec.start = this.now() - duration;
    const bytes = new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    let data = bytes;
    if (rec.part === 0) {
      data = new Uint8Array(44 + bytes.length);
      data.set(wavHeader());
      data.set(bytes, 44);
    }
    const head = pairs({ stream: rec.stream, kind: "audio", contentType: "audio/wav", part: rec.part++,
      start: Math.round((rec.start + rec.samples / RATE) * 1000) / 1000, duration });
    rec.samples += pcm.length;
    this.enqueue("media", head, pairs({ data }), SAMPLE);
  }
}

/** The running capture, if any. */
export const capture = () => current;
