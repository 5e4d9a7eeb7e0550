// sources/frames.js FrameSums: frame intervals (seconds) in, a reading per second of frames out, with dropped
// refreshes and hitch time for frames that stayed beyond their refresh, and transition readings per view.

import assert from "node:assert/strict";
import { test } from "node:test";
import { FrameSums } from "../../CaptureLibrary/Web/capture/sources/frames.js";

const REFRESH = 1 / 60;

test("smooth frames: one reading once a second of them is summed, none before", () => {
  const sums = new FrameSums();
  sums.viewAppeared("/notes");
  let reading = null, count = 0, before = 0;
  while (!reading && count < 200) {
    before = sums.open?.duration ?? 0;
    reading = sums.present(REFRESH);
    count++;
  }
  // Summing 1/60 in binary may land a hair under 1 after 60 frames: the rule is "the frame that reaches a second".
  assert.ok(before < 1 && reading.duration >= 1, `${before} → ${reading.duration}`);
  assert.ok(count === 60 || count === 61, `${count} frames`);
  assert.deepEqual({ ...reading, duration: undefined, longestFrame: undefined },
    { kind: "frames", view: "/notes", duration: undefined, frames: count, dropped: 0, hitchTime: 0, longestFrame: undefined, refreshRate: 60 });
  assert.equal(reading.longestFrame, REFRESH);
  assert.equal(sums.present(REFRESH), null, "the next second starts afresh");
  assert.equal(sums.flush().frames, 1);
  assert.equal(sums.flush(), null);
});

test("a long frame counts the refreshes it stayed beyond its own and the time beyond one refresh", () => {
  const sums = new FrameSums();
  assert.equal(sums.present(0.1), null);
  const r = sums.flush();
  assert.equal(r.dropped, 5, "0.1 s is 6 refreshes at 60 Hz: 5 beyond its own");
  assert.ok(Math.abs(r.hitchTime - (0.1 - REFRESH)) < 1e-12, String(r.hitchTime));
  assert.equal(r.longestFrame, 0.1);
  assert.equal(r.frames, 1);
});

test("a frame is late only from half a refresh beyond its own", () => {
  const sums = new FrameSums();
  sums.present(1.4 * REFRESH);
  const early = sums.flush();
  assert.equal(early.dropped, 0);
  assert.equal(early.hitchTime, 0, "no hitch either");
  sums.present(1.6 * REFRESH);
  const r = sums.flush();
  assert.equal(r.dropped, 1);
  assert.ok(Math.abs(r.hitchTime - 0.6 * REFRESH) < 1e-12);
});

test("a frame of over a second is a reading of its own; dropped refreshes are capped at 1000 per frame", () => {
  const sums = new FrameSums();
  const r = sums.present(2);
  assert.equal(r.duration, 2);
  assert.equal(r.dropped, 119);
  assert.equal(sums.present(30).dropped, 1000);
});

test("the refresh rate decides what a late frame is", () => {
  const sums = new FrameSums();
  sums.rate = 120;
  sums.present(REFRESH);
  const r = sums.flush();
  assert.equal(r.refreshRate, 120);
  assert.equal(r.dropped, 1, "1/60 s is two refreshes at 120 Hz");
});

test("intervals that are no frame are ignored", () => {
  const sums = new FrameSums();
  for (const interval of [0, -0.01, NaN, Infinity, undefined]) assert.equal(sums.present(interval), null, String(interval));
  assert.equal(sums.flush(), null, "nothing was opened");
});

test("a new view closes the open reading and adds a transition reading; the first view adds none", () => {
  const sums = new FrameSums();
  assert.deepEqual(sums.viewAppeared("/a"), []);
  sums.present(REFRESH);
  sums.present(REFRESH);
  const out = sums.viewAppeared("/b", 0.35);
  assert.equal(out.length, 2);
  assert.equal(out[0].kind, "frames");
  assert.equal(out[0].view, "/a");
  assert.equal(out[0].frames, 2);
  assert.deepEqual(out[1], { kind: "transition", view: "/b", from: "/a", duration: 0.35 });
  sums.present(REFRESH);
  assert.equal(sums.flush().view, "/b", "frames after it are the new view's");
  assert.deepEqual(sums.viewAppeared("/c", 0), [{ kind: "transition", view: "/c", from: "/b", duration: 0 }]);
});
