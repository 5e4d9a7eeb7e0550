// Scroll positions: the document's and those of scrolled elements, at most once per animation frame (the recorder's),
// whatever the number of scroll events. Cost: a scroll event adds its target to a set; a frame reads scrollLeft and
// scrollTop of the elements that scrolled in it (layout is fresh then: the browser is about to paint).

import { round } from "../dom.js";
import { Listeners } from "../listeners.js";
import { PAGE } from "../constants.js";

export class ScrollWatch {
  /** `known(node)`: a node's id, or undefined; `changed()`: asks for a frame. */
  constructor(known, changed) {
    Object.assign(this, { known, changed });
    this.listeners = new Listeners();
    this.moved = new Set();     // scrolled since the last frame
    this.scrolled = new Set();  // elements that ever scrolled (at most PAGE.maxScrolled): a snapshot says where they are
  }

  /** Scroll events do not bubble, but a listener on the document in the capture phase sees every element's. */
  start() {
    this.listeners.add(document, "scroll", (e) => {
      this.moved.add(e.target);
      this.changed();
    });
  }

  stop() { this.listeners.clear(); }

  /** `[id, x, y]` of the document (its scrolling element's position) or of an element, or null if it is not recorded. */
  position(target) {
    const id = this.known(target);
    if (id === undefined) return null;
    if (target === document) return [id, round(scrollX), round(scrollY)];
    return target.isConnected ? [id, round(target.scrollLeft), round(target.scrollTop)] : null;
  }

  /** What scrolled since the last frame: {scroll: [[id, x, y]…]}, or null. */
  take() {
    const out = [];
    for (const target of this.moved) {
      const at = this.position(target);
      if (!at) continue;
      out.push(at);
      if (target !== document && this.scrolled.size < PAGE.maxScrolled) this.scrolled.add(target);
    }
    this.moved.clear();
    return out.length ? { scroll: out } : null;
  }

  /** Where the document and the elements that scrolled before are now, for a snapshot; gone elements are forgotten. */
  positions() {
    this.moved.clear();
    const out = [this.position(document)];
    for (const el of this.scrolled) {
      const at = this.position(el);
      if (at) out.push(at); else if (!el.isConnected) this.scrolled.delete(el);
    }
    return out.filter(Boolean);
  }
}
