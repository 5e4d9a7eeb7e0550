// sources/gestures.js: the recogniser fed point sequences with explicit times (ms), as the fingers source feeds it:
// began, moved, frame (one per animation frame), ended. Each threshold is tried on both of its sides.

import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_PATH_POINTS } from "../../CaptureLibrary/Web/capture/constants.js";
import { GestureRecognizer } from "../../CaptureLibrary/Web/capture/sources/gestures.js";

/** One finger from `from` to `to` in `steps` frames over `ms`, lifted at `ms`; `during(r)` runs halfway. */
function stroke(from, to, ms, { steps = 5, target = { name: "the target" }, during } = {}) {
  const r = new GestureRecognizer();
  r.began(1, from[0], from[1], 1000, target);
  for (let i = 1; i <= steps; i++) {
    r.moved(1, from[0] + (to[0] - from[0]) * i / steps, from[1] + (to[1] - from[1]) * i / steps);
    r.frame();
    if (during && i === Math.ceil(steps / 2)) during(r);
  }
  return r.ended(1, 1000 + ms);
}

test("a tap: moved less than 10 px, lifted before 0.5 s", () => {
  const target = { name: "a button" };
  const g = stroke([100, 100], [103, 104], 120, { steps: 1, target });
  assert.equal(g.gesture, "tap");
  assert.equal(g.duration, 0.12);
  assert.equal(g.target, target, "the target given when the finger went down");
  assert.equal(g.fingers, 1);
  assert.deepEqual(g.path, [[100, 100], [103, 104]]);
  assert.equal(g.direction, undefined);
  assert.equal(g.scale, undefined);
});

test("moving 10 px or more is no tap", () => {
  assert.notEqual(stroke([100, 100], [106, 108], 120, { steps: 1 }).gesture, "tap", "10 px away (6, 8)");
  assert.equal(stroke([100, 100], [105, 108], 120, { steps: 1 }).gesture, "tap", "9.4 px away");
});

test("the farthest a finger got counts, not where it lifted", () => {
  const r = new GestureRecognizer();
  r.began(1, 0, 0, 0);
  r.moved(1, 40, 0);
  r.frame();
  r.moved(1, 2, 0);
  assert.notEqual(r.ended(1, 100).gesture, "tap");
});

test("a long press: held still for 0.5 s or more", () => {
  assert.equal(stroke([50, 50], [52, 51], 500, { steps: 1 }).gesture, "longPress");
  assert.equal(stroke([50, 50], [52, 51], 499, { steps: 1 }).gesture, "tap");
  assert.equal(stroke([50, 50], [52, 51], 3000, { steps: 1 }).duration, 3);
});

test("a swipe: fast and farther than 30 px, in each direction", () => {
  const cases = [[[200, 300], [100, 310], "left"], [[100, 300], [200, 290], "right"], [[150, 400], [160, 300], "up"], [[150, 300], [140, 400], "down"]];
  for (const [from, to, direction] of cases) {
    const g = stroke(from, to, 200);
    assert.equal(g.gesture, "swipe", direction);
    assert.equal(g.direction, direction);
    assert.deepEqual(g.path.at(-1), to);
    assert.deepEqual(g.path[0], from);
  }
});

test("a fast move of 30 px or less is a drag, not a swipe", () => {
  assert.equal(stroke([0, 0], [30, 0], 100).gesture, "drag");
  assert.equal(stroke([0, 0], [31, 0], 100).gesture, "swipe");
});

test("a drag: the same move, slow", () => {
  const g = stroke([100, 100], [300, 120], 500);
  assert.equal(g.gesture, "drag");
  assert.equal(g.direction, "right");
});

test("a scroll: the page scrolled during the gesture", () => {
  const g = stroke([100, 400], [100, 200], 200, { during: (r) => r.scrolled() });
  assert.equal(g.gesture, "scroll");
  assert.equal(g.direction, "up");
  assert.equal(stroke([100, 400], [100, 200], 200).gesture, "swipe", "the same move without scrolling");
});

test("a scroll of the page after the gesture does not make the next one a scroll", () => {
  const r = new GestureRecognizer();
  r.scrolled();  // between gestures: nothing to mark
  r.began(1, 0, 0, 0);
  r.moved(1, 100, 0);
  r.frame();
  assert.equal(r.ended(1, 100).gesture, "swipe");
});

/** Two fingers, `a` and `b` from their starts to their ends over `frames` frames, lifted one after the other. */
function twoFingers(a0, b0, a1, b1, frames = 4) {
  const r = new GestureRecognizer();
  r.began(1, ...a0, 0, "first");
  r.began(2, ...b0, 20, "second");
  for (let i = 1; i <= frames; i++) {
    r.moved(1, a0[0] + (a1[0] - a0[0]) * i / frames, a0[1] + (a1[1] - a0[1]) * i / frames);
    r.moved(2, b0[0] + (b1[0] - b0[0]) * i / frames, b0[1] + (b1[1] - b0[1]) * i / frames);
    r.frame();
  }
  assert.equal(r.ended(1, 300), null, "a finger still down: no gesture yet");
  assert.equal(r.active, 1);
  return r.ended(2, 320);
}

test("a pinch: two fingers whose distance changed by more than 20 %", () => {
  const out = twoFingers([100, 100], [200, 100], [75, 100], [225, 100]);
  assert.equal(out.gesture, "pinch");
  assert.equal(out.scale, 1.5);
  assert.equal(out.fingers, 2);
  assert.equal(out.target, "first", "the first finger's target");
  assert.equal(out.direction, undefined);
  assert.equal(out.duration, 0.32);
  const closing = twoFingers([100, 100], [200, 100], [125, 100], [175, 100]);
  assert.equal(closing.gesture, "pinch");
  assert.equal(closing.scale, 0.5);
});

test("a distance change of 20 % or less is no pinch", () => {
  assert.notEqual(twoFingers([100, 100], [200, 100], [90, 100], [210, 100]).gesture, "pinch", "+20 %");
  assert.notEqual(twoFingers([100, 100], [200, 100], [110, 100], [190, 100]).gesture, "pinch", "−20 %");
});

test("two fingers moving together keep their distance: a two-finger swipe, not a pinch", () => {
  const out = twoFingers([100, 100], [200, 100], [100, 20], [200, 20]);
  assert.equal(out.gesture, "swipe");
  assert.equal(out.direction, "up");
  assert.equal(out.fingers, 2);
  assert.equal(out.scale, undefined);
});

test("two fingers down and lifted without moving: a two-finger tap", () => {
  const out = twoFingers([100, 100], [200, 100], [100, 100], [200, 100], 1);
  assert.equal(out.gesture, "tap");
  assert.equal(out.fingers, 2);
});

test("the path keeps at most MAX_PATH_POINTS points, the first where the finger went down", () => {
  const r = new GestureRecognizer();
  r.began(1, 0, 0, 0);
  for (let i = 1; i <= 200; i++) {
    r.moved(1, i, 0);
    r.frame();
  }
  const g = r.ended(1, 5000);
  assert.equal(g.path.length, MAX_PATH_POINTS);
  assert.deepEqual(g.path[0], [0, 0]);
  assert.deepEqual(g.path[1], [1, 0]);
  assert.equal(g.direction, "right", "the direction from where the finger lifted (200, 0)");
});

test("the point where the finger lifted joins the path when no frame took it", () => {
  const r = new GestureRecognizer();
  r.began(1, 0, 0, 0);
  r.moved(1, 50, 0);
  r.frame();
  r.moved(1, 80, 0);
  assert.deepEqual(r.ended(1, 100).path, [[0, 0], [50, 0], [80, 0]]);
});

test("after a gesture ends the next starts afresh", () => {
  const r = new GestureRecognizer();
  r.began(1, 0, 0, 0);
  r.moved(1, 100, 0);
  r.scrolled();
  r.frame();
  assert.equal(r.ended(1, 100).gesture, "scroll");
  r.began(3, 10, 10, 1000, "next");
  const g = r.ended(3, 1050);
  assert.equal(g.gesture, "tap");
  assert.equal(g.target, "next");
  assert.equal(g.duration, 0.05);
  assert.equal(r.ended(3, 2000), null, "no gesture without a finger");
});
