// Work in idle slices (capture/idle.js): sliced while the page is seen, at once when it is hidden (its idle callbacks
// and timers are throttled there, and a stop on a closing page must not wait for them).
import { test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { inIdle } from "../../CaptureLibrary/Web/capture/idle.js";

function* units(count, log) {
  for (let i = 0; i < count; i++) { log.push(i); yield; }
  return count;
}

/** requestIdleCallback that counts its calls and runs the callback on a later turn. */
function idleCallbacks() {
  const calls = { count: 0 };
  globalThis.requestIdleCallback = (fn) => { calls.count++; setImmediate(() => fn({ timeRemaining: () => 10 })); };
  return calls;
}

afterEach(() => {
  delete globalThis.requestIdleCallback;
  delete globalThis.document;
});

test("a page that is seen does its work a budget at a time, each slice in an idle callback", async () => {
  globalThis.document = { visibilityState: "visible" };
  const calls = idleCallbacks();
  const log = [];
  assert.equal(await inIdle(units(10, log), () => 0, 3), 10);
  assert.deepEqual(log, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.equal(calls.count, 4, "slices of 3, 3, 3 and the last unit");
});

test("a hidden page does the whole work at once, without waiting for an idle callback", async () => {
  globalThis.document = { visibilityState: "hidden" };
  const calls = idleCallbacks();
  const log = [];
  assert.equal(await inIdle(units(1000, log), () => 0, 3), 1000);
  assert.equal(log.length, 1000);
  assert.equal(calls.count, 0);
});

test("a page hidden between slices finishes in the next one", async () => {
  globalThis.document = { visibilityState: "visible" };
  const calls = idleCallbacks();
  const log = [];
  const work = inIdle((function* () { yield* units(5, log); })(), () => 0, 2);
  globalThis.document.visibilityState = "hidden";
  await work;
  assert.equal(log.length, 5);
  assert.equal(calls.count, 1, "the first slice waited for idle time; the rest ran at once");
});
