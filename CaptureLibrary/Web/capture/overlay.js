// The study on the page: the welcome's tasks with Begin, Done and Give up, the questionnaire after the last, and Stop
// recording, in a Shadow DOM whose styles cannot leak either way (docs/WEB-CAPTURE.md, "The study overlay").

import { OVERLAY_COLLAPSE_MS } from "./constants.js";
import { stored } from "./storage.js";

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

/** An element with a class and text (always as text, never markup), appended to `parent`. */
function h(tag, cls, text, parent) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text != null) el.textContent = text;
  parent?.append(el);
  return el;
}

/** The study on the page: the welcome's tasks with Begin, Done, Give up; the questionnaire after the last; Stop. */
export class Overlay {
  /** `actions`: {mark(marker, taskName), stop()}: what its buttons do. */
  constructor(actions) {
    this.actions = actions;
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
    this.stop.onclick = () => actions.stop().then(() => this.remove());
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
    this.actions.mark(marker, task.name);
    if (marker === "begin") {
      this.state.begun = true;
      this.timer = setTimeout(() => this.collapse(true), OVERLAY_COLLAPSE_MS);  // out of the app's way while the tester works
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
