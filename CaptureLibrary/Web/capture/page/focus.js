// Focus: which recorded element has it (inside open shadow roots too), sent when it moved, at most once per animation
// frame. Never what is typed into it. Cost: focusin and focusout ask for a frame; the frame reads activeElement.

import { Listeners } from "../listeners.js";

export class FocusWatch {
  /** `known(node)`: a node's id, or undefined; `changed()`: asks for a frame. */
  constructor(known, changed) {
    Object.assign(this, { known, changed });
    this.listeners = new Listeners();
    this.last = undefined;
  }

  start() {
    this.listeners.add(document, "focusin", this.changed);
    this.listeners.add(document, "focusout", this.changed);
  }

  stop() { this.listeners.clear(); }

  /** The focused element's id, or null (nothing but the page has the focus, or the element is not recorded). */
  current() {
    let el = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    const id = el && el !== document.body ? this.known(el) : undefined;
    return (this.last = id ?? null);
  }

  /** {focus: id or null} if the focus moved since it was last read, else null. */
  take() {
    const before = this.last;
    return this.current() === before ? null : { focus: this.last };
  }
}
