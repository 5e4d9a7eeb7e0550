// Work spread over the page's idle time, so that no slice of it is a long task.

import { IDLE_FALLBACK_MS, IDLE_SLICE_MS, IDLE_TIMEOUT_MS } from "./constants.js";

/** Calls `fn` when the page is idle: requestIdleCallback, else (Safari has none) a timer. */
const whenIdle = (fn) => (globalThis.requestIdleCallback ? requestIdleCallback(fn, { timeout: IDLE_TIMEOUT_MS }) : setTimeout(fn, IDLE_FALLBACK_MS));

/** A hidden page has nobody to keep responsive, and its idle callbacks and timers are throttled (to one a second, or
 * a minute): work there runs to its end at once, so that stop() on a page being closed does not wait on them. */
export const pageHidden = () => globalThis.document?.visibilityState === "hidden";

/** Runs a generator in slices of idle time (it yields between units of work); resolves with its result. A slice ends
 * when its time is up or, with a `budget`, after that many units: a time check alone lets a slow phone (whose clock
 * reads are coarse, or whose one unit is slow) overrun, a unit count bounds the work itself. */
export const inIdle = (generator, clock = () => performance.now(), budget = Infinity) => new Promise((resolve, reject) => {
  const step = (deadline) => {
    const whole = pageHidden();
    const remaining = deadline?.timeRemaining?.() ?? IDLE_SLICE_MS.fallback;
    const end = whole ? Infinity : clock() + Math.max(IDLE_SLICE_MS.min, Math.min(IDLE_SLICE_MS.max, remaining));
    const units = whole ? Infinity : budget;
    try {
      for (let r = generator.next(), done = 1; ; r = generator.next(), done++) {
        if (r.done) return resolve(r.value);
        if (clock() > end || done >= units) return next();
      }
    } catch (error) {
      reject(error);
    }
  };
  const next = () => (pageHidden() ? queueMicrotask(step) : whenIdle(step));
  next();
});
