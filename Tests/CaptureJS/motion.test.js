// sources/motion.js MotionSampler: which accelerometer readings (g, ms) are recorded: one every calmMs at rest,
// every one at least fastMinMs apart for fastMs after the phone moved more than shakeG from the last calm reading.
// Times start at 1000 ms: a page's clock is past 0 when its first devicemotion event comes.

import assert from "node:assert/strict";
import { test } from "node:test";
import { MOTION } from "../../CaptureLibrary/Web/capture/constants.js";
import { MotionSampler } from "../../CaptureLibrary/Web/capture/sources/motion.js";

/** The times of the readings taken, of readings every `step` ms from `from` to `to` (exclusive) at `at(time)`. */
function taken(sampler, from, to, step, at) {
  const out = [];
  for (let t = from; t < to; t += step) if (sampler.take(...at(t), t)) out.push(t);
  return out;
}
const upright = () => [0, -1, 0];
const range = (from, to, step) => Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);

test("the expectations below assume the shipped limits", () => {
  assert.deepEqual({ ...MOTION }, { calmMs: 2000, fastMs: 1500, fastMinMs: 15, shakeG: 0.5, calmTolerance: 0.15 });
});

test("at rest: the first reading, then one every calmMs", () => {
  assert.deepEqual(taken(new MotionSampler(), 1000, 6000, 100, upright), [1000, 3000, 5000]);
});

test("a hard move: every reading at least fastMinMs apart until fastMs after the last hard one, then calm again", () => {
  const s = new MotionSampler();
  assert.equal(s.take(0, -1, 0, 1000), true);
  // Shaken along x (±0.8 g: 0.8 g away from rest) from 2000 to 2190 ms at 100 Hz, then at rest.
  const shaken = (t) => (t < 2200 ? [t % 20 ? 0.8 : -0.8, -1, 0] : [0, -1, 0]);
  // Every other reading (10 ms < fastMinMs ≤ 20 ms), until 2190 + fastMs.
  assert.deepEqual(taken(s, 2000, 4000, 10, shaken), range(2000, 3680, 20));
  assert.deepEqual(taken(s, 4000, 9000, 100, upright), [5700, 7700], "calm: calmMs after the last fast reading");
});

test("a small move (under shakeG from rest) stays calm", () => {
  const s = new MotionSampler();
  assert.deepEqual(taken(s, 1000, 4000, 10, (t) => [t % 20 ? 0.2 : -0.2, -1, 0]), [1000, 3000]);
});

test("a slow tilt moves the rest position along and never counts as a hard move", () => {
  // From upright to lying flat over 10 s: |g| stays 1, each reading close to the last calm one.
  const tilt = (t) => [0, -Math.cos((t - 1000) / 10000 * Math.PI / 2), -Math.sin((t - 1000) / 10000 * Math.PI / 2)];
  assert.deepEqual(taken(new MotionSampler(), 1000, 11000, 50, tilt), [1000, 3000, 5000, 7000, 9000]);
});

test("the rest position is not taken from a reading far from 1 g", () => {
  const s = new MotionSampler();
  assert.equal(s.take(0, -1, 0, 1000), true);
  assert.equal(s.take(0, -0.6, 0, 4000), true, "0.4 g from rest: calm sampling, but no rest position (|g| = 0.6)");
  // 0.45 g from upright, 0.6 g from (0, −0.6, 0): calm only if upright is still the rest position.
  assert.equal(s.take(0.45, -1, 0, 7000), true);
  assert.equal(s.take(0.45, -1, 0, 7100), false, "no fast sampling");
});
