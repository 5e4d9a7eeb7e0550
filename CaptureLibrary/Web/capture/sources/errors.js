// Uncaught errors and unhandled rejections as exception events; the same one at most MAX_SAME_ERROR times (a page
// throwing in every frame would flood the session).

import { MAX_ERROR_KINDS, MAX_SAME_ERROR, MAX_STACK_LINES } from "../constants.js";
import { Listeners } from "../listeners.js";

export class ErrorsSource {
  /** `host`: {record}. */
  constructor(host) {
    this.host = host;
    this.listeners = new Listeners();
    this.seen = new Map();  // "name: reason" → times recorded
  }

  start() {
    this.listeners.add(window, "error", (e) => {
      if (!(e instanceof ErrorEvent)) return;  // a resource that failed to load, not an exception
      this.exception(e.error?.name || "Error", e.message, e.error?.stack, `${e.filename}:${e.lineno}:${e.colno}`);
    });
    this.listeners.add(window, "unhandledrejection", (e) => {
      const r = e.reason;
      this.exception(r?.name || "UnhandledRejection", r?.message ?? String(r), r?.stack);
    });
  }

  stop() { this.listeners.clear(); }

  exception(name, reason, stack, source) {
    const key = `${name}: ${reason}`, times = this.seen.get(key) || 0;
    if (times >= MAX_SAME_ERROR || this.seen.size > MAX_ERROR_KINDS) return;
    this.seen.set(key, times + 1);
    this.host.record("ApplicationEvent", { type: "exception", name: String(name), reason: String(reason ?? ""), fatal: false, source,
      callStack: stack ? String(stack).split("\n").slice(0, MAX_STACK_LINES).map((l) => l.trim()).filter(Boolean) : undefined });
  }
}
