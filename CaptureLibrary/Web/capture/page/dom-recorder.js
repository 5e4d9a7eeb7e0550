// Page recording, phone side (issue 55; docs/WEB-CAPTURE.md, "Page recording"): a snapshot of the document, then its
// changes, scroll positions, viewport and focus, masked here before anything leaves, handed to the owner's `emit` as
// records. muevald sanitises and stores them, the console replays them and the reports draw them (docs/WEB-CAPTURE.md).
//
// Records: DOMSnapshot (the tree, the viewport, scroll positions and focus; never dropped for room), then DOMMutations,
// DOMScroll, DOMViewport and DOMFocus (samples, the spool may drop them). Each carries `s`, the snapshot it follows,
// and `n`, its number since that snapshot (0: the snapshot): a gap in `n` is a dropped record, and once the spool has
// room again a new snapshot heals it.
//
// Light on the main thread: the snapshot is walked in idle slices of at most PAGE.sliceUnits nodes and rules each, and
// its JSON written in idle slices of at most PAGE.writeUnits objects and arrays (json.js); changes are gathered per
// animation frame and cost at most PAGE.frameUnits (more: a new snapshot instead, no sooner than PAGE.snapshotGapMs
// after the last); changed stylesheets are read in idle slices too. What remains in one piece is the finished
// snapshot's text becoming a message (the owner's emit: its XML escaping and spooling).
//
// A snapshot is never dropped: stop() finishes the one being taken, or due, and sends it with the changes after it.

import { KEEP, PAGE, SAMPLE } from "../constants.js";
import { inIdle } from "../idle.js";
import { FocusWatch } from "./focus.js";
import { jsonText } from "./json.js";
import { Mutations, WHOLESALE } from "./mutations.js";
import { ScrollWatch } from "./scroll.js";
import { Serializer } from "./serializer.js";
import { ViewportWatch } from "./viewport.js";

export class DomRecorder {
  /** `emit(cls, json, tier)`: where records go, as JSON text; `mask`: the capture's mode; `skip(el)`: never recorded
   * (the study overlay); `spool()`: {dropped (samples dropped for room, in all), room (whether it has room again)}; `problem(text)`;
   * `limits`: constants.js's PAGE (tests give smaller ones). */
  constructor({ emit, mask, skip, spool, problem, limits = PAGE }) {
    Object.assign(this, { emit, spool, problem, limits });
    this.serializer = new Serializer({ mask, skip, shadow: (root) => this.mutations.observe(root) });
    const changed = () => this.requestFrame();
    const known = (node) => this.serializer.known(node);
    this.mutations = new Mutations(this.serializer, changed, limits.frameUnits * 4);
    this.watches = { scroll: new ScrollWatch(known, changed), viewport: new ViewportWatch(changed), focus: new FocusWatch(known, changed) };
    this.s = 0;                 // the last snapshot's number (0: none yet)
    this.n = 0;                 // records since it
    this.taking = null;         // the snapshot being taken (walked, written, emitted): a promise
    this.timer = null;          // a wholesale snapshot waiting for its gap
    this.lastSnapshot = -Infinity;
    this.droppedAt = 0;         // the spool's drop count at the last snapshot
    this.frame = 0;
    this.sheets = new Set();    // style and link elements whose rules are to be read again
    this.readingSheets = false;
    this.stopped = false;
  }

  start() {
    this.mutations.observe(document);  // before the walk: what changes during it is sent after it
    for (const watch of Object.values(this.watches)) watch.start();
    this.snapshot();
  }

  /** Stops; resolves once the snapshot being taken, or due (a route's, a heal's, a wholesale change's), is sent with the
   * changes after it. With none, the frame's changes are sent at once. */
  async stop() {
    if (this.timer) this.snapshotNow();
    if (this.taking) await this.taking;
    this.flush();  // what changed while it was taken
    if (this.timer) {  // too much for one record: one more snapshot, the last
      this.snapshotNow();
      await this.taking;
    }
    this.stopped = true;
    this.mutations.stop();
    for (const watch of Object.values(this.watches)) watch.stop();
    cancelAnimationFrame(this.frame);
    clearTimeout(this.timer);
  }

  /** A route was pushed or popped (views.js): the app shows another page, recorded as a new snapshot (unless one is
   * being taken: what changes during its walk is sent after it, and a frame too large for that is wholesale). */
  navigated(transition) {
    if ((transition === "push" || transition === "pop") && !this.taking) this.wholesale(0);
  }

  /** Dropped records are healed by a snapshot once the spool has room again (the owner calls this when acks came). A
   * snapshot being taken heals what was dropped before it is sent. */
  heal() {
    const { dropped, room } = this.spool();
    if (this.s && !this.taking && dropped > this.droppedAt && room) this.wholesale(0);
  }

  send(cls, fields, tier = SAMPLE) {
    if (this.s) this.emit(cls, JSON.stringify({ s: this.s, n: ++this.n, ...fields }), tier);
  }

  requestFrame() {
    if (!this.frame && !this.stopped) this.frame = requestAnimationFrame(() => this.flush());
  }

  /** The frame's changes, in one record each (a hidden page gets no frames: the owner calls this when it hides). */
  flush() {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    if (this.stopped || this.taking || !this.s) return;  // changes wait for the snapshot that is being taken
    if (this.timer) return this.mutations.discard();      // a snapshot is coming: it has them
    const changes = this.mutations.take(this.limits.frameUnits);
    if (changes === WHOLESALE) return this.wholesale(this.limits.snapshotGapMs);
    if (changes.record) this.send("DOMMutations", changes.record);
    for (const [cls, watch] of [["DOMScroll", "scroll"], ["DOMViewport", "viewport"], ["DOMFocus", "focus"]]) {
      const record = this.watches[watch].take();
      if (record) this.send(cls, record);
    }
    for (const el of changes.sheets) this.sheets.add(el);
    this.readSheets();
    this.heal();
  }

  /** A new snapshot for a page changed wholesale, `gap` ms after the last one at the soonest. */
  wholesale(gap) {
    if (this.timer) return;
    this.mutations.discard();
    this.timer = setTimeout(() => this.snapshotNow(), Math.max(0, this.lastSnapshot + gap - performance.now()));
  }

  /** Walks the document in idle slices, writes it with the viewport, scroll positions and focus as JSON in idle slices,
   * and emits it; the changes made meanwhile follow in the next frame. */
  snapshot() {
    if (this.stopped) return;
    const walk = this.serializer.document(document);
    this.lastSnapshot = performance.now();
    this.mutations.discard();  // what changed before the walk is in it
    this.taking = inIdle(walk, undefined, this.limits.sliceUnits).then((root) => {
      const { scroll, viewport, focus } = this.watches;
      const record = { s: this.s + 1, n: 0, doctype: document.doctype?.name, root, viewport: viewport.current(),
        scroll: scroll.positions(), focus: focus.current() };
      return inIdle(jsonText(record), undefined, this.limits.writeUnits);
    }).then((json) => {
      this.taking = null;
      this.s++;
      this.n = 0;
      this.droppedAt = this.spool().dropped;
      this.emit("DOMSnapshot", json, KEEP);
      this.requestFrame();
    }).catch((error) => {
      this.taking = null;
      this.problem(`the page could not be recorded: ${error}`);
    });
  }

  /** The snapshot waiting for its gap, taken now. */
  snapshotNow() {
    clearTimeout(this.timer);
    this.timer = null;
    this.snapshot();
  }

  /** Reads changed stylesheets again in idle slices, one record for them. */
  readSheets() {
    if (this.readingSheets || !this.sheets.size) return;
    this.readingSheets = true;
    const elements = [...this.sheets];
    this.sheets.clear();
    inIdle(this.serializer.restyled(elements), undefined, this.limits.sliceUnits).then((css) => {
      this.readingSheets = false;
      if (css.length && !this.stopped) this.send("DOMMutations", { css });
      this.readSheets();
    }).catch((error) => {
      this.readingSheets = false;
      this.problem(`the page's stylesheets could not be recorded: ${error}`);
    });
  }
}
