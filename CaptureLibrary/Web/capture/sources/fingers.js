// Touch and pointer input as fingers: every point's phases as `touch` events, and the gesture when the last finger
// lifts. An engine may fire touch, pointer and mouse events for one finger (Safari all three; Firefox touch and
// pointer events while "ontouchstart" is not in window): a finger is recorded once whatever mix arrives (`InputSources`).

import { COMPAT_MOUSE_MS, KEEP, SAMPLE } from "../constants.js";
import { INTERACTIVE, describe, round } from "../dom.js";
import { Listeners } from "../listeners.js";
import { GestureRecognizer } from "./gestures.js";

const PHASES = { touchstart: "began", touchmove: "moved", touchend: "ended", touchcancel: "cancelled",
  pointerdown: "began", pointermove: "moved", pointerup: "ended", pointercancel: "cancelled" };

/**
 * Which events speak for a finger. Touch events do where the engine fires them (they go on while the page scrolls,
 * where pointer events are cancelled). A pointer event of a touch is taken only where no touch event comes for it:
 * it waits for the end of the task that fired it (`defer`), and is dropped if a touch event came meanwhile, or ever
 * came before. A mouse event right after a touch is the engine's compatibility event for it.
 */
export class InputSources {
  constructor(touchEventsFire) {
    this.touchEvents = touchEventsFire;
    this.lastTouch = -Infinity;
    this.deferred = [];
  }

  /** A touch event at `time` (ms): always taken; pointer touches waiting for the task's end are the same finger. */
  touch(time) {
    this.touchEvents = true;
    this.lastTouch = time;
    this.deferred = [];
  }

  /** A pointer event's point ({kind, time, …}): "take", "drop" or "defer" (then `takeDeferred` after the task). */
  pointer(point) {
    if (point.kind === "touch") {
      if (this.touchEvents) return "drop";
      this.deferred.push(point);
      return "defer";
    }
    return point.kind === "mouse" && point.time - this.lastTouch < COMPAT_MOUSE_MS ? "drop" : "take";
  }

  /** The deferred pointer touches that no touch event claimed, in order. */
  takeDeferred() {
    const points = this.deferred;  // a touch event since has emptied it
    this.deferred = [];
    return points;
  }
}

export class FingersSource {
  /** `host`: {record, mask, view(), isOverlay(el), activate(), rendering(ms)}. */
  constructor(host) {
    this.host = host;
    this.listeners = new Listeners();
    this.sources = new InputSources("ontouchstart" in globalThis);
    this.recognizer = new GestureRecognizer();
    this.down = new Map();     // id → {target, el}: the fingers down
    this.moves = new Map();    // id → the latest point, until the next animation frame
  }

  start() {
    const touches = (e) => this.touched(e), pointers = (e) => this.pointed(e);
    for (const type of ["touchstart", "touchmove", "touchend", "touchcancel"]) this.listeners.add(window, type, touches);
    for (const type of ["pointerdown", "pointermove", "pointerup", "pointercancel"]) this.listeners.add(window, type, pointers);
  }

  stop() { this.listeners.clear(); }

  /** The page scrolled: the gesture under way is a scroll. */
  scrolled() { this.recognizer.scrolled(); }

  touched(e) {
    if (this.host.isOverlay(e.target)) return;
    this.sources.touch(e.timeStamp);
    for (const t of e.changedTouches) {
      this.finger(PHASES[e.type], { id: t.identifier, x: round(t.clientX), y: round(t.clientY), force: t.force, radiusX: t.radiusX,
        radiusY: t.radiusY, target: t.target, kind: "touch", time: e.timeStamp }, e.touches.length);
    }
  }

  pointed(e) {
    const id = "p" + e.pointerId;
    if (this.host.isOverlay(e.target) || (e.type !== "pointerdown" && !this.down.has(id) && e.pointerType !== "touch")) return;
    const point = { id, x: round(e.clientX), y: round(e.clientY), force: e.pressure, radiusX: e.width / 2, radiusY: e.height / 2,
      target: e.target, kind: e.pointerType, time: e.timeStamp, phase: PHASES[e.type] };
    const decision = this.sources.pointer(point);
    if (decision === "take") this.finger(point.phase, point);
    else if (decision === "defer" && this.sources.deferred.length === 1) {
      setTimeout(() => { for (const p of this.sources.takeDeferred()) this.finger(p.phase, p); });
    }
  }

  /** One point's phase: moves wait for the next animation frame (the latest per finger), the rest go now. */
  finger(phase, point, touchesDown) {
    if (phase !== "began" && !this.down.has(point.id)) return;
    if (phase === "moved") {
      if (!this.moves.size) requestAnimationFrame(() => this.frame());
      this.moves.set(point.id, point);
      return;
    }
    if (this.moves.has(point.id)) this.frame();
    const now = performance.now();
    if (phase === "began") {
      this.host.activate();
      const target = point.target instanceof Element ? describe(point.target, this.host.mask) : undefined;
      this.down.set(point.id, { target, el: point.target });
      this.recognizer.began(point.id, point.x, point.y, now, { target, el: point.target });
    }
    const finger = this.down.get(point.id);
    this.recognizer.moved(point.id, point.x, point.y);
    const ends = phase === "ended" || phase === "cancelled";
    this.record(phase, point, finger.target, touchesDown ?? this.down.size - (ends ? 1 : 0));
    if (!ends) return;
    this.down.delete(point.id);
    const gesture = this.recognizer.ended(point.id, now);
    if (gesture) this.recordGesture(gesture);
  }

  /** The coalesced moves of an animation frame. */
  frame() {
    for (const point of this.moves.values()) {
      const finger = this.down.get(point.id);
      if (!finger) continue;
      this.recognizer.moved(point.id, point.x, point.y);
      this.record("moved", point, undefined, this.down.size);
    }
    this.moves.clear();
    this.recognizer.frame();
    this.host.rendering();
  }

  /** UserInputEvent `touch`, as the simulator sends it, with the point's identifier, force and radius. */
  record(phase, point, target, touches) {
    const moved = phase === "moved";
    this.host.record("UserInputEvent", { type: "touch", phase, x: point.x, y: point.y, tapCount: moved ? 0 : 1, view: this.host.view(),
      target: moved ? undefined : target, identifier: typeof point.id === "number" ? point.id : Number(point.id.slice(1)),
      pointerType: point.kind, force: point.force, radiusX: point.radiusX, radiusY: point.radiusY, touches: Math.max(0, touches) },
    moved ? SAMPLE : KEEP);
  }

  /** UserInputEvent `gesture`; a tap is `recognized` when something interactive was under it. */
  recordGesture(g) {
    const { el, target } = g.target;
    this.host.record("UserInputEvent", { type: "gesture", gesture: g.gesture, view: this.host.view(),
      recognized: g.gesture === "tap" ? !!el?.closest?.(INTERACTIVE) : true, duration: g.duration, path: g.path, target,
      direction: g.direction, scale: g.scale, fingers: g.fingers });
  }
}
