// Mobile Monitor: helpers every page shares (docs/CONSOLE.md; HTTP contract in the lead's console-api notes).
//
// Rule for all pages: text from a device or a user goes into the DOM as text only (el(), textContent,
// setAttribute of non-URL attributes). Nothing here or in the pages uses innerHTML with data.
//
// Stable ids on every page: #banner (one-line error, data-testid="banner"), #conn (connection state
// of the page's WebSocket).

// ---------------------------------------------------------------- DOM

/** Creates an element. attrs: plain attributes (set with setAttribute), except `on*` functions
 *  (addEventListener), `dataset` (object) and `hidden`/`checked`/`disabled`/`value` (properties).
 *  Children: nodes, or anything else as a text node (never parsed as markup). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "dataset") {
      Object.assign(node.dataset, value);
    } else if (key === "hidden" || key === "checked" || key === "disabled" || key === "value" || key === "selected") {
      node[key] = value;
    } else if (key === "href" || key === "src") {
      node.setAttribute(key, safeURL(value));
    } else {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children (text or nodes). */
export function setChildren(node, ...children) {
  node.replaceChildren();
  append(node, children);
}

/** Same-origin paths only: a link never leads to javascript: or another host. */
export function safeURL(url) {
  const text = String(url);
  return text.startsWith("/") && !text.startsWith("//") ? text : "#";
}

export const $ = (selector) => document.querySelector(selector);

// ---------------------------------------------------------------- errors

/** Shows one line of error at the top of the page until closed or replaced. */
export function showError(message) {
  let banner = document.getElementById("banner");
  if (!banner) {
    banner = el("div", { id: "banner", class: "banner", role: "alert", "data-testid": "banner" },
      el("span", { class: "msg" }),
      el("button", { type: "button", "aria-label": "Dismiss", onclick: () => banner.classList.remove("shown") }, "×"));
    document.body.prepend(banner);
  }
  const line = String(message).split("\n")[0];
  banner.querySelector(".msg").textContent = line;
  banner.classList.add("shown");
}

export function clearError() {
  document.getElementById("banner")?.classList.remove("shown");
}

// ---------------------------------------------------------------- HTTP

/** An API failure: status and the server's one-line message. */
export class APIError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

// A page without a login (a tester's phone) carries its visitor's token in its head instead.
let csrfToken = document.querySelector('meta[name="csrf-token"]')?.content ?? null;
let mePromise = null;

/** GET /api/me once per page: the CSRF token and the daemon's version. */
export function me() {
  mePromise ??= fetchJSON("/api/me").then((reply) => { csrfToken = reply.csrf; return reply; });
  return mePromise;
}

async function fetchJSON(path, init = {}) {
  let response;
  try {
    response = await fetch(path, { credentials: "same-origin", ...init });
  } catch (error) {
    throw new APIError(0, `muevald is not reachable (${error.message}); is it running?`);
  }
  if (response.status === 401) {
    // The cookie expired or the daemon restarted: the page itself now is the login page.
    location.reload();
    throw new APIError(401, "Not logged in: run `muevalctl console --open` for a new link.");
  }
  const text = await response.text();
  let body = null;
  if (text) {
    try { body = JSON.parse(text); } catch { body = null; }
  }
  if (!response.ok) {
    const message = body && typeof body.error === "string" ? body.error : `${response.status} ${response.statusText}`;
    throw new APIError(response.status, message);
  }
  return body;
}

/** Calls the JSON API. POST/DELETE carry the CSRF token; `body` is sent as JSON.
 *  Errors are shown in the banner (unless quiet) and rethrown. */
export async function api(path, { method = "GET", body, quiet = false } = {}) {
  const init = { method, headers: {} };
  if (method !== "GET") {
    if (csrfToken === null) await me();
    init.headers["X-CSRF-Token"] = csrfToken;
  }
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  try {
    return await fetchJSON(path, init);
  } catch (error) {
    if (!quiet) showError(error.message);
    throw error;
  }
}

/** Runs an async action; its failure is already in the banner, so only log it. */
export function run(promise) {
  Promise.resolve(promise).catch((error) => console.warn(error));
}

// ---------------------------------------------------------------- logout

/** Ends this browser's login on the server (its cookie then gets 401 anywhere) and shows the login page. */
export async function logout() {
  await api("/api/logout", { method: "POST" });
  location.assign("/");
}

// Every page's navigation ends with the logout control.
document.querySelector(".topnav")?.append(
  el("button", { type: "button", id: "logout", class: "logout", "data-testid": "logout", title: "End this browser's login",
                 onclick: () => run(logout()) }, "Log out"));

// ---------------------------------------------------------------- formatting

/** Seconds since 1970 → local "2026-11-23 18:40:05". */
export function formatTime(seconds) {
  if (seconds === undefined || seconds === null) return "—";
  const d = new Date(seconds * 1000);
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** Seconds since 1970 → local "18:40:05.123" (event lists). */
export function formatClock(seconds) {
  const d = new Date(seconds * 1000);
  const p = (n, w = 2) => String(n).padStart(w, "0");
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

/** A duration in seconds → "1:02:03" or "2:03" (tenths with `tenths`). */
export function formatDuration(seconds, tenths = false) {
  if (seconds === undefined || seconds === null || !isFinite(seconds)) return "—";
  const s = Math.max(0, seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = tenths ? (s % 60).toFixed(1).padStart(4, "0") : String(Math.floor(s % 60)).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

export function formatRate(rate) {
  return rate === undefined || rate === null ? "—" : rate >= 100 ? rate.toFixed(0) : rate.toFixed(1);
}

export function formatCount(n) {
  return n === undefined || n === null ? "—" : Number(n).toLocaleString("en-US");
}

/** How long a session recorded so far (or in all). */
export function sessionDuration(session, now = Date.now() / 1000) {
  if (!session.started) return null;
  return (session.stopped ?? now) - session.started;
}

/** A state badge: `<span class="badge recording">recording</span>`. */
export function stateBadge(state) {
  return el("span", { class: `badge ${/^[a-z]+$/.test(state) ? state : ""}`, "data-testid": "state" }, state);
}

/** A device's name for tables: "Jack's iPhone (iphone-jack)". */
export function deviceLabel(device, fallbackID) {
  if (!device) return fallbackID || "—";
  return device.name ? `${device.name} (${device.id})` : device.id;
}

/** The number in /sessions/{id}/… */
export function sessionIDFromPath() {
  const match = /^\/sessions\/([^/]+)/.exec(location.pathname);
  return match ? decodeURIComponent(match[1]) : null;
}

/** The page of a study (/study?name=S). */
export function studyURL(name) {
  return `/study?name=${encodeURIComponent(name)}`;
}

/** The questionnaire form of a participant in an iteration. */
export function questionnaireURL(study, iteration, participant) {
  const query = new URLSearchParams({ study, iteration: String(iteration), participant });
  return `/questionnaire?${query}`;
}

/** The sha256 of a typed-JSON data value `{"$data": sha, "$size": n}`, else null. */
export function dataSHA(value) {
  return value && typeof value === "object" && typeof value.$data === "string" ? value.$data : null;
}

export function blobURL(sessionID, sha) {
  return `/api/sessions/${encodeURIComponent(sessionID)}/blobs/${encodeURIComponent(sha)}`;
}

// ---------------------------------------------------------------- WebSocket

/** A WebSocket to `path` (same origin) that reconnects with backoff (0.5 s doubling to 15 s).
 *  onMessage gets parsed JSON; onOpen(reconnected) runs after every connection; after a
 *  reconnection (true) the page refetches what it may have missed. Updates #conn if present. Returns { close() }. */
export function liveSocket(path, { onMessage, onOpen, onClose } = {}) {
  const url = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${path}`;
  let delay = 500;
  let socket = null;
  let timer = null;
  let closed = false;
  let opened = false;
  const indicator = () => document.getElementById("conn");
  const setState = (text, down) => {
    const node = indicator();
    if (!node) return;
    node.textContent = text;
    node.classList.toggle("down", down);
    node.dataset.state = down ? "down" : "up";
  };

  const connect = () => {
    if (!opened) setState("connecting…", true);
    socket = new WebSocket(url);
    socket.addEventListener("open", () => {
      delay = 500;
      setState("live", false);
      onOpen?.(opened);
      opened = true;
    });
    socket.addEventListener("message", (message) => {
      let data;
      try { data = JSON.parse(message.data); } catch { return; }
      if (data.type === "studyCompleted") showStudyCompleted(data);
      onMessage?.(data);
    });
    socket.addEventListener("close", () => {
      onClose?.();
      if (closed) return;
      setState(`reconnecting in ${Math.round(delay / 100) / 10} s…`, true);
      timer = setTimeout(connect, delay);
      delay = Math.min(delay * 2, 15000);
    });
  };
  connect();
  return {
    close() { closed = true; clearTimeout(timer); socket?.close(); },
  };
}

/** A recruited study met its target or passed its deadline (pushed on /api/updates): a notice at
 *  the top of whatever page is open, linking the study and the report its completion wrote. */
function showStudyCompleted({ study, reason, url }) {
  const notice = el("div", { class: "notice", role: "status", "data-testid": "study-completed", dataset: { study } },
    `Study ${study} is complete (${reason === "deadline" ? "its deadline passed" : "its target was met"}). `,
    el("a", { href: studyURL(study) }, "Open the study"), " · ",
    el("a", { href: url, target: "_blank", rel: "noopener" }, "its report"),
    el("button", { type: "button", class: "small", "aria-label": "Dismiss", onclick: () => notice.remove() }, "×"));
  (document.querySelector("main") ?? document.body).prepend(notice);
}

// ---------------------------------------------------------------- observer notes

/** Marker keys (when focus is not in a text field) and their note kinds. */
export const MARKER_KEYS = { "1": "problem", "2": "quote", "3": "task-done" };
const KIND_TITLES = { note: "Note", problem: "Problem", quote: "Quote", "task-done": "Task done" };

/** Wires the note box of the live and replay pages: #note-text, #note-kind (with a "custom"
 *  option revealing #note-label), #note-form. `timeOfNote()` gives the device time to send as
 *  `t` (or undefined: the server maps its own clock); `onPosted(event)` sees the stored note. */
export function setupNoteBox(sessionID, { timeOfNote = () => undefined, onPosted = () => {}, extraKeys = "" } = {}) {
  // Built here, once for the Live and Replay pages, into their #note-box.
  const kinds = [["note", "note"], ["problem", "problem"], ["quote", "quote"], ["task-done", "task done"], ["custom", "custom label…"]];
  setChildren(document.getElementById("note-box"),
    el("form", { id: "note-form", class: "notebox", autocomplete: "off", "data-testid": "note-form" },
      el("input", { type: "text", id: "note-text", placeholder: "Note (Enter saves)", "aria-label": "Note", "data-testid": "note-text" }),
      el("select", { id: "note-kind", "aria-label": "Kind", "data-testid": "note-kind" }, kinds.map(([value, name]) => el("option", { value }, name))),
      el("input", { type: "text", id: "note-label", class: "hidden", placeholder: "label", "aria-label": "Custom label" }),
      el("button", { type: "submit", id: "note-submit" }, "Add note")),
    el("div", { class: "keys" }, "Keys outside a text field: ", el("kbd", {}, "1"), " problem · ", el("kbd", {}, "2"), " quote · ",
      el("kbd", {}, "3"), " task done · ", el("kbd", {}, "n"), " note field", extraKeys),
    el("div", { class: "muted", id: "note-status", "data-testid": "note-status" }));
  const form = document.getElementById("note-form");
  const text = document.getElementById("note-text");
  const kind = document.getElementById("note-kind");
  const label = document.getElementById("note-label");
  const status = document.getElementById("note-status");

  kind.addEventListener("change", () => {
    label.classList.toggle("hidden", kind.value !== "custom");
    if (kind.value === "custom") label.focus();
  });

  const post = async (noteText, noteKind) => {
    const body = { text: noteText, kind: noteKind };
    const t = timeOfNote();
    if (typeof t === "number" && isFinite(t)) body.t = t;
    const event = await api(`/api/sessions/${encodeURIComponent(sessionID)}/notes`, { method: "POST", body });
    status.textContent = `Saved: [${noteKind}] ${noteText}`;
    onPosted(event);
    return event;
  };

  form.addEventListener("submit", (submit) => {
    submit.preventDefault();
    const noteText = text.value.trim();
    let noteKind = kind.value;
    if (noteKind === "custom") noteKind = label.value.trim();
    if (!noteText) { showError("Type a note first (or press 1, 2, 3 outside a text field for a marker)."); return; }
    if (!noteKind) { showError("Type the custom label, or choose another kind."); return; }
    run(post(noteText, noteKind).then(() => { text.value = ""; clearError(); }));
  });

  document.addEventListener("keydown", (key) => {
    if (key.ctrlKey || key.metaKey || key.altKey || isTyping(key.target)) return;
    const markerKind = MARKER_KEYS[key.key];
    if (markerKind) {
      key.preventDefault();
      run(post(KIND_TITLES[markerKind], markerKind));
    } else if (key.key === "n") {
      key.preventDefault();
      text.focus();
    }
  });
  return { post };
}

/** True when keystrokes belong to a text field, not to the page's shortcuts. */
export function isTyping(target) {
  if (!(target instanceof Element)) return false;
  if (target.isContentEditable) return true;
  if (target.tagName === "TEXTAREA" || target.tagName === "SELECT") return true;
  return target.tagName === "INPUT" && !["checkbox", "radio", "range", "button", "submit"].includes(target.type);
}
