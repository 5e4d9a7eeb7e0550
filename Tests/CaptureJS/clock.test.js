// clock.js DeviceClock: the wall clock anchored to the monotonic clock, re-anchored when the page comes back; device
// time must never run backwards (events would be ordered wrongly in the session).

import assert from "node:assert/strict";
import { test } from "node:test";
import { DeviceClock } from "../../CaptureLibrary/Web/capture/clock.js";

/** Clocks the test sets by hand. */
function clocks(wall, monotonic) {
  const c = { wall, monotonic };
  return { c, clock: new DeviceClock(() => c.wall, () => c.monotonic) };
}

test("seconds since 1970, to the millisecond, moving with the monotonic clock", () => {
  const { c, clock } = clocks(1_700_000_000_000, 100);
  assert.equal(clock.now(), 1_700_000_000);
  c.monotonic = 250.4;
  c.wall = 1_800_000_000_000;  // the wall clock is read only when anchoring
  assert.equal(clock.now(), 1_700_000_000.15);
});

test("a re-anchor after the monotonic clock stopped (Safari asleep) jumps forward", () => {
  const { c, clock } = clocks(1_700_000_000_000, 1000);
  c.monotonic = 2000;
  c.wall = 1_700_000_001_000;
  assert.equal(clock.now(), 1_700_000_001);
  c.wall += 60_000;  // a minute asleep, the monotonic clock stood still
  assert.equal(clock.now(), 1_700_000_001, "not before the re-anchor");
  clock.reanchor();
  assert.equal(clock.now(), 1_700_000_061);
});

test("a re-anchor to a wall clock set back never runs device time backwards", () => {
  const { c, clock } = clocks(1_700_000_000_000, 0);
  c.monotonic = 10_000;
  assert.equal(clock.now(), 1_700_000_010);
  c.wall = 1_700_000_005_000;  // set back 5 s (a network time correction)
  clock.reanchor();
  assert.equal(clock.now(), 1_700_000_010, "held, not 1_700_000_005");
  c.monotonic = 13_000;
  assert.equal(clock.now(), 1_700_000_010, "held until the new anchor passes it");
  c.monotonic = 16_000;
  assert.equal(clock.now(), 1_700_000_011);
  let last = 0;
  for (let i = 0; i < 50; i++) {
    c.monotonic += 7;
    if (i % 10 === 0) { c.wall -= 1000; clock.reanchor(); }
    const now = clock.now();
    assert.ok(now >= last, `${now} < ${last}`);
    last = now;
  }
});
