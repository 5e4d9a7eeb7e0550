// The accelerometer in g along the device's axes, gravity included, signed as UIKit's (upright: y = −1): a reading
// every MOTION.calmMs at rest, every event (up to 60 a second) for MOTION.fastMs after the phone moved hard, so that
// the shake detector sees every reversal. Where the browser has no DeviceMotionEvent (WebKitGTK, desktops) nothing
// comes and nothing is recorded.

import { MOTION, SAMPLE, STANDARD_GRAVITY } from "../constants.js";
import { Listeners } from "../listeners.js";

/** Which readings to keep: the sampling rule alone, in milliseconds and g (a pure class, for tests). */
export class MotionSampler {
  constructor() {
    this.calm = null;
    this.fastUntil = 0;
    this.last = -Infinity;
  }

  /** Whether the reading (x, y, z in g) at `time` is recorded. */
  take(x, y, z, time) {
    const away = this.calm ? Math.hypot(x - this.calm[0], y - this.calm[1], z - this.calm[2]) : 0;
    if (away > MOTION.shakeG) this.fastUntil = time + MOTION.fastMs;
    else if (time > this.fastUntil && Math.abs(Math.hypot(x, y, z) - 1) < MOTION.calmTolerance) this.calm = [x, y, z];
    if (time - this.last < (time < this.fastUntil ? MOTION.fastMinMs : MOTION.calmMs)) return false;
    this.last = time;
    return true;
  }
}

const milli = (v) => Math.round(v * 1000) / 1000;

export class MotionSource {
  /** `host`: {record, problem(text)}. */
  constructor(host) {
    this.host = host;
    this.listeners = new Listeners();
    this.listening = false;
    this.asked = false;
    this.granted = false;
  }

  /** Listens, where the browser asks for permission first: at once (Chrome grants it), else (iOS wants a tap) at
   * the first tap anywhere, the overlay's Begin included. */
  start() {
    if (this.listening) return;
    if (typeof globalThis.DeviceMotionEvent?.requestPermission !== "function" || this.granted) return this.listen();
    if (this.asked) return;
    this.asked = true;
    const ask = () => DeviceMotionEvent.requestPermission().then((state) => {
      this.granted = state === "granted";
      if (this.granted) this.listen();
    });
    ask().catch(() => {
      const tapped = () => {
        this.listeners.clear();
        ask().catch(() => this.host.problem("motion sensors are off: the tester did not allow them"));
      };
      this.listeners.add(window, "click", tapped, true);
      this.listeners.add(window, "touchend", tapped, true);
    });
  }

  listen() {
    const sampler = new MotionSampler();
    this.listening = true;
    this.listeners.add(window, "devicemotion", (e) => {
      const a = e.accelerationIncludingGravity;
      if (!a || a.x == null) return;
      const x = -a.x / STANDARD_GRAVITY, y = -a.y / STANDARD_GRAVITY, z = -a.z / STANDARD_GRAVITY;
      if (sampler.take(x, y, z, performance.now())) this.host.record("DeviceSensorEvent", { sensor: "accelerometer", x: milli(x), y: milli(y), z: milli(z) }, SAMPLE);
    });
  }

  stop() {
    this.listening = false;
    this.asked = this.granted;  // a tap still awaited is asked for again at the next start
    this.listeners.clear();
  }
}
