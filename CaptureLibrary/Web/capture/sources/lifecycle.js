// The page's life: hidden or leaving (it may be frozen or killed from there on), visible again, back from the
// back/forward cache (whose way in closed the socket), online again.

import { Listeners } from "../listeners.js";

export class LifecycleSource {
  /** `host`: {record}; `page`: {hiding() (what is open is ended), flush() (the queue to the spool now), showing() (the
   * clock and the socket), renew() (a new socket)}. */
  constructor(host, page) {
    this.host = host;
    this.page = page;
    this.listeners = new Listeners();
    this.hidden = false;
  }

  start() {
    this.listeners.add(document, "visibilitychange", () => (document.visibilityState === "hidden" ? this.background("hidden") : this.foreground()));
    this.listeners.add(window, "pagehide", (e) => this.background("pagehide", e.persisted));
    this.listeners.add(window, "pageshow", (e) => {
      if (!e.persisted) return;
      this.foreground();
      this.page.renew();
    });
    this.listeners.add(window, "online", () => this.page.renew());
  }

  stop() { this.listeners.clear(); }

  background(reason, persisted) {
    if (!this.hidden) {
      this.hidden = true;
      this.page.hiding();
      this.host.record("ApplicationEvent", { type: "background", reason, persisted });
    }
    this.page.flush();
  }

  foreground() {
    this.page.showing();
    if (this.hidden) {
      this.hidden = false;
      this.host.record("ApplicationEvent", { type: "foreground" });
    }
  }
}
