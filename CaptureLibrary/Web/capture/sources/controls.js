// What the page's controls did: a click on a control (an `action`, as UIKit's touchUpInside) and a scroll coming to rest.

import { SCROLL_REST_MS } from "../constants.js";
import { CONTROLS, describe, round } from "../dom.js";
import { Listeners } from "../listeners.js";

/** Inputs whose click is typing, not an action. */
const TEXT_INPUTS = "input:not([type=button],[type=submit],[type=reset],[type=checkbox],[type=radio],[type=image])";

export class ControlsSource {
  /** `host`: {record, mask, view(), isOverlay(el), activate(), rendering(ms)}; `fingers`: told of scrolls. */
  constructor(host, fingers) {
    this.host = host;
    this.fingers = fingers;
    this.listeners = new Listeners();
    this.restTimer = null;
  }

  start() {
    this.listeners.add(window, "click", (e) => this.clicked(e));
    this.listeners.add(window, "scroll", (e) => this.scrolled(e));
    this.listeners.undo(() => clearTimeout(this.restTimer));
  }

  stop() { this.listeners.clear(); }

  clicked(e) {
    const el = e.target instanceof Element && !this.host.isOverlay(e.target) && e.target.closest(CONTROLS);
    if (!el || el.matches(TEXT_INPUTS)) return;
    this.host.activate();
    this.host.record("UserInterfaceEvent", { type: "action", event: "touchUpInside", action: "click", view: this.host.view(),
      sender: describe(el, this.host.mask) });
  }

  /** Scrolling during a gesture makes it a scroll; its end is a UserInterfaceEvent, as UIKit's. */
  scrolled(e) {
    this.fingers.scrolled();
    this.host.rendering();
    clearTimeout(this.restTimer);
    this.restTimer = setTimeout(() => {
      const el = e.target instanceof Element ? e.target : document.scrollingElement || document.documentElement;
      this.host.record("UserInterfaceEvent", { type: "scrollViewDidEndDragging", view: this.host.view(),
        sender: describe(el, this.host.mask, false), contentOffset: { x: round(el.scrollLeft), y: round(el.scrollTop) } });
    }, SCROLL_REST_MS);
  }
}
