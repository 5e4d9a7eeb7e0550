// The viewport: its size in CSS pixels, the orientation, and the pinch zoom (the visual viewport's scale and offset),
// sent when one of them changed, at most once per animation frame. Cost: a few property reads in a frame after one of
// their events, none in the others (reading innerWidth in a frame after the page changed forces its layout early: 24 ms
// on a page of 3,000 elements throttled 4×).

import { round } from "../dom.js";
import { Listeners } from "../listeners.js";

export class ViewportWatch {
  /** `changed()`: asks for a frame. */
  constructor(changed) {
    this.changed = changed;
    this.listeners = new Listeners();
    this.last = null;
    this.moved = false;  // an event came since the last frame
  }

  start() {
    const moved = () => {
      this.moved = true;
      this.changed();
    };
    this.listeners.add(window, "resize", moved);
    if (globalThis.screen?.orientation) this.listeners.add(screen.orientation, "change", moved);
    if (globalThis.visualViewport) {
      this.listeners.add(visualViewport, "resize", moved);
      this.listeners.add(visualViewport, "scroll", moved);
    }
  }

  stop() { this.listeners.clear(); }

  /** {w, h, o (portrait or landscape), z (zoom), zx, zy (the zoomed view's offset)}: z, zx, zy only when zoomed. */
  read() {
    const w = innerWidth, h = innerHeight;
    const o = globalThis.screen?.orientation?.type?.split("-")[0] ?? (h >= w ? "portrait" : "landscape");
    const v = globalThis.visualViewport, out = { w, h, o };
    if (v && Math.abs(v.scale - 1) > 0.01) Object.assign(out, { z: round(v.scale, 0.01), zx: round(v.offsetLeft), zy: round(v.offsetTop) });
    return out;
  }

  /** The viewport now, remembered (a snapshot has it). */
  current() {
    const now = this.read();
    this.last = JSON.stringify(now);
    return now;
  }

  /** The viewport if it changed since it was last read, else null (read only after one of its events). */
  take() {
    if (!this.moved) return null;
    this.moved = false;
    const before = this.last, now = this.current();
    return this.last === before ? null : now;
  }
}
