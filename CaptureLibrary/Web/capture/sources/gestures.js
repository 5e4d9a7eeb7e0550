// The gesture recogniser: fingers' points in, a gesture out when the last finger lifts (tap, long press, swipe, scroll,
// drag, pinch). Pure: positions in CSS pixels, times in milliseconds, no DOM; the fingers source feeds it.

import { LONG_PRESS_S, MAX_PATH_POINTS, PINCH_MIN_CHANGE, SWIPE_MIN_PX, TAP_SLOP_PX } from "../constants.js";

export class GestureRecognizer {
  constructor() {
    this.fingers = new Map();  // id → {x0, y0, x, y}
    this.gesture = null;
  }

  get active() { return this.fingers.size; }

  /** A finger down at (x, y). The first starts a gesture; `target` (what it was on) is kept with it. */
  began(id, x, y, time, target) {
    const g = this.gesture ??= { t0: time, first: id, target, fingers: 0, span0: 0, span: 0, scrolled: false, path: [[x, y]], end: [x, y], moved: 0 };
    this.fingers.set(id, { x0: x, y0: y, x, y });
    g.fingers = Math.max(g.fingers, this.fingers.size);
    if (this.fingers.size === 2) g.span0 = g.span = this.span();
  }

  /** A finger's latest position (moves, and where it lifted). */
  moved(id, x, y) {
    const finger = this.fingers.get(id), g = this.gesture;
    if (!finger || !g) return;
    finger.x = x;
    finger.y = y;
    g.moved = Math.max(g.moved, Math.hypot(x - finger.x0, y - finger.y0));
    if (id === g.first) g.end = [x, y];
  }

  /** An animation frame: the first finger's position joins the path, the fingers' distance is taken. */
  frame() {
    const g = this.gesture;
    if (!g) return;
    if (g.path.length < MAX_PATH_POINTS) g.path.push(g.end);
    if (this.fingers.size >= 2) g.span = this.span();
  }

  /** The page scrolled during the gesture: it is a scroll. */
  scrolled() {
    if (this.gesture) this.gesture.scrolled = true;
  }

  /** A finger lifted (or cancelled). The last one ends the gesture: returns what it was, else null. */
  ended(id, time) {
    this.fingers.delete(id);
    if (this.fingers.size) return null;
    const g = this.gesture;
    this.gesture = null;
    return g && recognise(g, time);
  }

  /** The distance between the first two fingers down. */
  span() {
    const [a, b] = this.fingers.values();
    return a && b ? Math.hypot(a.x - b.x, a.y - b.y) : 0;
  }
}

/** {gesture, duration (s), path, target, direction, scale, fingers} of a finished gesture. */
function recognise(g, time) {
  const [x0, y0] = g.path[0];
  if (g.path.length < MAX_PATH_POINTS && g.path.at(-1) !== g.end) g.path.push(g.end);
  const duration = (time - g.t0) / 1000, dx = g.end[0] - x0, dy = g.end[1] - y0;
  let gesture;
  if (g.fingers >= 2 && g.span0 > 0 && Math.abs(g.span / g.span0 - 1) > PINCH_MIN_CHANGE) gesture = "pinch";
  else if (g.moved < TAP_SLOP_PX) gesture = duration >= LONG_PRESS_S ? "longPress" : "tap";
  else if (g.scrolled) gesture = "scroll";
  else gesture = duration < LONG_PRESS_S && Math.hypot(dx, dy) > SWIPE_MIN_PX ? "swipe" : "drag";
  const direction = ["swipe", "scroll", "drag"].includes(gesture)
    ? (Math.abs(dx) > Math.abs(dy) ? (dx < 0 ? "left" : "right") : (dy < 0 ? "up" : "down")) : undefined;
  return { gesture, duration: Math.round(duration * 1000) / 1000, path: g.path, target: g.target, direction,
    scale: gesture === "pinch" ? Math.round(g.span / g.span0 * 1000) / 1000 : undefined, fingers: g.fingers };
}
