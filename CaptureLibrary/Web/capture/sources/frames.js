// Frame timing: the sums of docs/CAPTURE-LIBRARY.md "Frame timing" (frames, dropped refreshes, hitch time, longest
// frame, per view and second of rendering), from animation-frame intervals counted while the page moves, and long
// animation frames (or long tasks) while it does not. Engines without either entry type (WebKitGTK) count only
// the frames of movement.

import { KEEP, RENDER_AFTER_INPUT_MS, SAMPLE } from "../constants.js";
import { Listeners } from "../listeners.js";

/** The refresh rates told apart, by the fastest frame interval (ms) seen. */
const rateOf = (fastest) => (fastest < 9.5 ? 120 : fastest < 13 ? 90 : 60);

/** Frames summed per view and second of rendering (pure: intervals in seconds in, readings out). */
export class FrameSums {
  constructor() { this.rate = 60; this.open = null; this.view = null; }

  /** A frame presented `interval` seconds after the one before; a reading once a second of them is summed. */
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

  /** A new view: the open reading, and a `transition` reading of `duration` seconds (none for the first view). */
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

export class FramesSource {
  /** `host`: {record, hidden()}. */
  constructor(host) {
    this.host = host;
    this.sums = new FrameSums();
    this.listeners = new Listeners();
    this.on = false;
    this.looping = false;
    this.renderUntil = 0;
  }

  start() {
    if (this.on) return;
    this.on = true;
    const types = globalThis.PerformanceObserver?.supportedEntryTypes || [];
    const type = types.includes("long-animation-frame") ? "long-animation-frame" : types.includes("longtask") ? "longtask" : null;
    if (!type) return;
    // A long frame while nothing else is counted (an idle page's timer doing heavy work) is a hitch too.
    const observer = new PerformanceObserver((list) => {
      if (this.looping || this.host.hidden()) return;
      for (const e of list.getEntries()) this.reading(this.sums.present(e.duration / 1000));
    });
    observer.observe({ type });
    this.listeners.undo(() => observer.disconnect());
  }

  stop() {
    this.on = false;
    this.end();
    this.listeners.clear();
  }

  reading(r) {
    if (r && this.on) this.host.record("DeviceSensorEvent", { sensor: "frameTiming", ...micro({ ...r }) }, r.kind === "frames" ? SAMPLE : KEEP);
  }

  /** The open reading goes (the page is hidden, capture stops). */
  end() { this.reading(this.sums.flush()); }

  viewAppeared(view, duration) {
    for (const r of this.sums.viewAppeared(view, duration)) this.reading(r);
  }

  launched(view, seconds) { this.reading({ kind: "launch", view, duration: seconds }); }

  /** The page moves (a finger drags, it scrolls, a view comes in): frames are counted for `ms` more. Not after every
   * tap: requesting animation frames makes the browser render frames a still page would not (a second of them cost
   * more than the rest of a tap on a slow phone), and an idle page's frames would dilute the hitches. */
  rendering(ms = RENDER_AFTER_INPUT_MS) {
    this.renderUntil = Math.max(this.renderUntil, performance.now() + ms);
    if (this.looping || !this.on || this.host.hidden()) return;
    this.looping = true;
    let previous = 0, fastest = Infinity, count = 0;
    const tick = (t) => {
      if (previous) {
        const interval = t - previous;
        if (count++ < 20 && interval < fastest) {
          fastest = interval;
          if (count > 5) this.sums.rate = rateOf(fastest);
        }
        this.reading(this.sums.present(interval / 1000));
      } else {
        this.reading(this.sums.present(1 / this.sums.rate));  // the first frame after a pause passes one refresh
      }
      previous = t;
      if (performance.now() < this.renderUntil && this.on && !this.host.hidden()) requestAnimationFrame(tick);
      else this.looping = false;
    };
    requestAnimationFrame(tick);
  }
}
