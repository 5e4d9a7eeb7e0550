// sources/fingers.js, InputSources: a finger is one finger whatever mix of touch, pointer and mouse events the engine
// fires for it. Each engine's order of events is replayed by hand: pointer events come first in a task, the touch
// event (where there is one) after them in the same task, and takeDeferred() runs when the task is over.

import assert from "node:assert/strict";
import { test } from "node:test";
import { COMPAT_MOUSE_MS } from "../../CaptureLibrary/Web/capture/constants.js";
import { InputSources } from "../../CaptureLibrary/Web/capture/sources/fingers.js";

const touchPointer = (id, time, phase = "began") => ({ id: "p" + id, kind: "touch", time, phase });

test("Chromium and Safari (touch events fire): a pointer touch is dropped at once, the touch event speaks for the finger", () => {
  const s = new InputSources(true);
  assert.equal(s.pointer(touchPointer(1, 10)), "drop");
  s.touch(10);
  assert.equal(s.pointer(touchPointer(1, 20, "moved")), "drop");
  assert.deepEqual(s.takeDeferred(), []);
});

test("Firefox (no ontouchstart, touch events do come): the pointer touch waits, the touch event of the same task claims it", () => {
  const s = new InputSources(false);
  const down = touchPointer(1, 10);
  assert.equal(s.pointer(down), "defer");
  assert.deepEqual(s.deferred, [down]);
  s.touch(10);  // touchstart, in the same task
  assert.deepEqual(s.takeDeferred(), [], "the finger is the touch event's");
  // From now on the engine is known to fire touch events: every later pointer touch goes at once.
  assert.equal(s.pointer(touchPointer(1, 30, "moved")), "drop");
  assert.equal(s.pointer(touchPointer(2, 500)), "drop");
  assert.deepEqual(s.takeDeferred(), []);
});

test("an engine without touch events: the deferred pointer touches are all given back, in order", () => {
  const s = new InputSources(false);
  const points = [touchPointer(1, 10), touchPointer(2, 11), touchPointer(1, 12, "moved")];
  for (const p of points) assert.equal(s.pointer(p), "defer");
  assert.deepEqual(s.takeDeferred(), points);
  assert.deepEqual(s.takeDeferred(), [], "given back once");
  const up = touchPointer(1, 40, "ended");
  assert.equal(s.pointer(up), "defer", "still no touch event: the next task's points wait too");
  assert.deepEqual(s.takeDeferred(), [up]);
});

test("a mouse event within COMPAT_MOUSE_MS of a touch is the engine's compatibility event: dropped; a later one is taken", () => {
  const s = new InputSources(true);
  s.touch(5000);
  assert.equal(s.pointer({ kind: "mouse", time: 5000 }), "drop");
  assert.equal(s.pointer({ kind: "mouse", time: 5000 + COMPAT_MOUSE_MS - 1 }), "drop");
  assert.equal(s.pointer({ kind: "mouse", time: 5000 + COMPAT_MOUSE_MS }), "take");
  s.touch(9000);  // the latest touch counts
  assert.equal(s.pointer({ kind: "mouse", time: 9500 }), "drop");
});

test("a mouse with no touch ever, and a pen, are taken", () => {
  const s = new InputSources(false);
  assert.equal(s.pointer({ kind: "mouse", time: 0 }), "take");
  assert.equal(s.pointer({ kind: "pen", time: 1 }), "take");
  s.touch(2);
  assert.equal(s.pointer({ kind: "pen", time: 3 }), "take", "a pen is no touch's compatibility event");
  assert.deepEqual(s.takeDeferred(), [], "taken points are not deferred");
});
