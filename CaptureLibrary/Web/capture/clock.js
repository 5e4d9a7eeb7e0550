// Device time for events: seconds since 1970, to the millisecond.

/** The wall clock anchored to the page's monotonic clock, re-anchored when the page comes back (Safari's monotonic
 * clock stops while the phone sleeps); it never runs backwards. `wall` and `monotonic` are injectable for tests. */
export class DeviceClock {
  constructor(wall = () => Date.now(), monotonic = () => performance.now()) {
    this.wall = wall;
    this.monotonic = monotonic;
    this.last = 0;
    this.reanchor();
  }

  reanchor() {
    this.anchor = this.wall() - this.monotonic();
  }

  /** Seconds since 1970. */
  now() {
    this.last = Math.max(this.last, Math.round(this.anchor + this.monotonic()) / 1000);
    return this.last;
  }
}
