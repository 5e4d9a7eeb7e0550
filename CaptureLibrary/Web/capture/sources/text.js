// Text entry, without its content: a field's focus, and typing counted per field and sent at a pause (how many edits
// and of what kind; never the text, nor its length).

import { TYPING_PAUSE_MS } from "../constants.js";
import { describe } from "../dom.js";
import { Listeners } from "../listeners.js";

/** Fields whose input is no typing. */
const NOT_TYPED = "input[type=checkbox],input[type=radio],input[type=range]";
const NOT_EDITED = "input[type=button],input[type=submit]," + NOT_TYPED;

export class TextSource {
  /** `host`: {record, mask, view(), isOverlay(el), activate()}. */
  constructor(host) {
    this.host = host;
    this.listeners = new Listeners();
    this.typing = new Map();  // field → {edits, inserted, deleted, timer}
  }

  start() {
    this.listeners.add(document, "focusin", (e) => this.focused(e));
    this.listeners.add(document, "input", (e) => this.input(e));
    this.listeners.add(document, "focusout", (e) => this.typing.has(e.target) && this.typed(e.target));
  }

  /** Typing not yet reported is reported now (the page is hidden or capture stops). */
  flush() { for (const el of [...this.typing.keys()]) this.typed(el); }

  stop() {
    this.flush();
    this.listeners.clear();
  }

  editable(el) { return el instanceof Element && !this.host.isOverlay(el) && (el.matches("input,textarea") || el.isContentEditable); }

  focused(e) {
    if (!this.editable(e.target) || e.target.matches(NOT_EDITED)) return;
    this.host.record("UserInterfaceEvent", { type: "editingDidBegin", view: this.host.view(), sender: describe(e.target, this.host.mask) });
  }

  input(e) {
    const el = e.target;
    if (!this.editable(el) || el.matches(NOT_TYPED)) return;
    this.host.activate();
    const t = this.typing.get(el) || { edits: 0, inserted: 0, deleted: 0, timer: null };
    t.edits++;
    if (e.inputType?.startsWith("delete")) t.deleted++; else t.inserted++;
    clearTimeout(t.timer);
    t.timer = setTimeout(() => this.typed(el), TYPING_PAUSE_MS);
    this.typing.set(el, t);
  }

  typed(el) {
    const t = this.typing.get(el);
    if (!t) return;
    clearTimeout(t.timer);
    this.typing.delete(el);
    this.host.record("UserInputEvent", { type: "text", view: this.host.view(), target: describe(el, this.host.mask, false), edits: t.edits,
      insertions: t.inserted, deletions: t.deleted, secure: el.type === "password" || undefined });
  }
}
