// Listeners an event source adds on start() and removes, all of them, on stop().

/** Passive and in the capture phase: the library sees every event first and never delays scrolling. */
export const PASSIVE = Object.freeze({ capture: true, passive: true });

export class Listeners {
  constructor() { this.removers = []; }

  add(target, type, fn, options = PASSIVE) {
    target.addEventListener(type, fn, options);
    this.removers.push(() => target.removeEventListener(type, fn, options));
  }

  /** Something else to undo on stop (an observer, a wrapped function). */
  undo(fn) { this.removers.push(fn); }

  clear() {
    for (const remove of this.removers.splice(0)) remove();
  }
}
