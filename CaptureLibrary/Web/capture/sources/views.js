// Views: the page's screens as UIKit's view controllers. A view's name is the visible `data-mueval-view` element's,
// else the URL's path and hash; the library looks when the History API changes the route, on popstate and hashchange,
// and when elements change (at most every VIEW_CHECK_MS). A new view is a `viewDidAppear` with the stack, the UI state
// tree and its wireframe: walked, painted and encoded in idle slices, so that a page of thousands of elements is no
// long task.

import { INPUT_BEFORE_ROUTE_MS, KEEP, MAX_VIEW_STACK, RENDER_AFTER_VIEW_MS, VIEW_CHECK_MS, VIEW_SLICE_UNITS } from "../constants.js";
import { masked } from "../dom.js";
import { inIdle } from "../idle.js";
import { Listeners } from "../listeners.js";
import { encodeFields, fieldsSteps } from "../plist.js";
import { uiTree } from "../ui-tree.js";
import { wireframe } from "../wireframe.js";

/** The stack after `name` appears: a name on it already is a pop back to it; it keeps `max` names. Returns the
 * transition's kind (`launch`, `push`, `pop`). Pure, for tests. */
export function stackAfter(stack, name, from, routeTransition, max = MAX_VIEW_STACK) {
  const at = stack.indexOf(name);
  if (at >= 0) stack.length = at + 1; else stack.push(name);
  if (stack.length > max) stack.shift();
  return !from ? "launch" : at >= 0 || routeTransition === "pop" ? "pop" : "push";
}

export class ViewsSource {
  /** `host`: {recordEncoded, mask, overlayElement(), lastInput(), problem(text), routed(transition)}; `frames`: the frame
   * timing source. */
  constructor(host, frames) {
    this.host = host;
    this.frames = frames;
    this.listeners = new Listeners();
    this.current = null;
    this.stack = [];
    this.transition = null;   // the route change awaiting a look: push, replace or pop
    this.routeTime = null;    // when it began (the input before it, if any)
    this.timer = null;
    this.launchTime = null;
    this.appearing = Promise.resolve();  // the views being captured
  }

  start() {
    this.wrapHistory();
    this.listeners.add(window, "popstate", () => this.routeChanged("pop"));
    this.listeners.add(window, "hashchange", () => this.routeChanged("push"));
    const observer = new MutationObserver(() => this.mayChange());
    observer.observe(document.documentElement, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-mueval-view", "hidden"] });
    this.listeners.undo(() => observer.disconnect());
    this.listeners.undo(() => clearTimeout(this.timer));
    const paint = performance.getEntriesByName?.("first-contentful-paint")[0];
    this.launchTime = (paint ? paint.startTime : performance.now()) / 1000;
    this.look("launch");
  }

  /** Stops looking; resolves once the views that appeared are recorded. A change not looked at yet (a route changed
   * in the last two frames) is looked at now: a stop right after it still records that view. */
  stop() {
    if (!this.stopped && (this.transition || this.timer)) this.look(this.transition || "push");
    this.stopped = true;
    this.listeners.clear();
    return this.appearing;
  }

  /** pushState and replaceState, wrapped while capturing and restored by stop(). */
  wrapHistory() {
    for (const name of ["pushState", "replaceState"]) {
      const original = history[name], views = this;
      const wrapper = function (...args) {
        const result = original.apply(this, args);
        views.routeChanged(name === "pushState" ? "push" : "replace");
        return result;
      };
      history[name] = wrapper;
      this.listeners.undo(() => { if (history[name] === wrapper) history[name] = original; });
    }
  }

  /** A route changed: the app renders the new view; look once it has had two frames to do so. */
  routeChanged(transition) {
    this.host.routed(transition);
    this.transition = transition;
    const input = this.host.lastInput();
    this.routeTime = input > performance.now() - INPUT_BEFORE_ROUTE_MS ? input : performance.now();
    requestAnimationFrame(() => requestAnimationFrame(() => this.look(transition)));
  }

  mayChange() {
    if (this.timer) return;
    this.timer = setTimeout(() => { this.timer = null; this.look(this.transition || "push"); }, VIEW_CHECK_MS);
  }

  name() {
    for (const el of document.querySelectorAll("[data-mueval-view]")) {
      if (el.checkVisibility ? el.checkVisibility() : el.offsetParent !== null) return el.getAttribute("data-mueval-view");
    }
    return location.pathname + location.hash;
  }

  look(transition) {
    if (this.stopped) return;
    const name = this.name();
    if (name === this.current) return;
    const from = this.current, started = this.routeTime ?? performance.now();
    this.routeTime = null;
    this.transition = null;
    this.current = name;
    const kind = stackAfter(this.stack, name, from, transition);
    this.frames.viewAppeared(name, from ? (performance.now() - started) / 1000 : undefined);
    if (!from && this.launchTime != null) this.frames.launched(name, this.launchTime);
    this.frames.rendering(RENDER_AFTER_VIEW_MS);
    const appeared = this.appeared(name, from, kind).catch((error) => this.host.problem(`the view ${name} could not be captured: ${error}`));
    this.appearing = Promise.all([this.appearing, appeared]);
  }

  /** UserInterfaceEvent `viewDidAppear` with the stack, the tree and its wireframe. */
  async appeared(view, from, transition) {
    const backgrounds = new Map();
    const mask = this.host.mask;
    const tree = await inIdle(uiTree(mask, this.host.overlayElement(), backgrounds), undefined, VIEW_SLICE_UNITS.walk);
    const screenshot = await wireframe(tree, backgrounds).catch(() => undefined);
    const title = document.title ? masked(document.title, mask, true) : undefined;
    const fields = { type: "viewDidAppear", transition, view, title, previousView: from ?? undefined, viewStack: [...this.stack], uiState: tree };
    const lean = await inIdle(fieldsSteps(fields), undefined, VIEW_SLICE_UNITS.encode);
    // When the spool is full, the view change goes without its screenshot (its last field) rather than not at all.
    return this.host.recordEncoded("UserInterfaceEvent", screenshot ? lean + encodeFields({ screenshot }) : lean, KEEP, lean);
  }
}
