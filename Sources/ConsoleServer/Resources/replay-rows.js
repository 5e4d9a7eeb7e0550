// The Replay page's event list (#events): a session may hold millions of events, so only the rows in view and a few
// around them are made, placed in a spacer as tall as all of them, their chunks asked for as they scroll into view.
// The row of the event at the playhead is highlighted and kept in view; a click on a row selects its event. The class
// filter (#class-filter) shows one class's events, which needs every chunk first.

import { el, formatDuration, run, setChildren } from "./common.js";
import { upperBound } from "./replay-index.js";

const ROW = 22;              // px per event row (console.css .ev height)
const OVERSCAN = 12;         // rows rendered above and below the visible ones

export class ReplayRows {
  /** `index`: the ReplayIndex; `list`: #events, `spacer`: the element in it that holds the rows, `total`: #event-total,
   *  `filter`: #class-filter; `noteClass`: the observer notes' class (vocabulary.js is muevald's, not a file here);
   *  `t0()`: the device time of the playhead's zero, `now()`: the playhead's; `onSelect(t, id)`: a row was clicked (its
   *  event's device time and id); `onError(error)`: the filter's chunks could not be loaded. */
  constructor({ index, list, spacer, total, filter, noteClass, t0, now, onSelect, onError }) {
    Object.assign(this, { index, list, spacer, total, filter, noteClass, t0, now, onSelect });
    this.visible = null;     // Int32Array of event indices shown (class filter), null = all
    this.wantedClass = null; // the filter's class while its chunks load
    this.current = -1;       // index of the last event at or before the playhead (-2: none yet, the next one is followed)
    list.addEventListener("scroll", () => requestAnimationFrame(() => this.render()));
    list.addEventListener("click", (click) => this.select(click.target.closest("[data-testid=event-row]")));
    filter.addEventListener("change", () => run(this.applyFilter().catch(onError)));
  }

  shownCount() { return this.visible ? this.visible.length : this.index.head.events; }
  shownEvent(position) { return this.visible ? this.visible[position] : position; }

  /** The row position of the last shown event at or before the playhead. */
  currentPosition() {
    const visible = this.visible;
    if (!visible) return this.current;
    return upperBound(null, this.now(), visible.length, (position) => this.index.eventTime(visible[position])) - 1;
  }

  render() {
    const { index, list } = this;
    if (!index.head) return;
    const count = this.shownCount();
    const first = Math.max(0, Math.floor(list.scrollTop / ROW) - OVERSCAN);
    const last = Math.min(count, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + OVERSCAN);
    if (first < last) index.want(index.chunkOfEvent(this.shownEvent(first)), index.chunkOfEvent(this.shownEvent(last - 1)));
    const t0 = this.t0();
    const rows = [];
    for (let position = first; position < last; position++) {
      const i = this.shownEvent(position);
      const chunk = index.chunks[index.chunkOfEvent(i)];
      let row;
      if (chunk) {
        const j = i - chunk.first;
        const className = index.classNames[chunk.c[j]] ?? "?";
        row = el("div", {
          class: `ev${i === this.current ? " current" : ""}${className === this.noteClass ? " note" : ""}`,
          "data-testid": "event-row",
          dataset: { index: String(i), eventId: String(chunk.id[j]), t: (chunk.t[j] - t0).toFixed(3) },
        },
        el("span", { class: "t" }, formatDuration(chunk.t[j] - t0, true)),
        el("span", {}, className),
        el("span", {}, chunk.s[j] ?? ""));
      } else {
        row = el("div", { class: "ev pending", dataset: { index: String(i) } }, el("span", { class: "t" }, "…"));
      }
      row.style.top = `${position * ROW}px`;
      rows.push(row);
    }
    this.spacer.replaceChildren(...rows);
  }

  /** The event at the playhead is `event`: when it is another, its row is highlighted and kept in view. */
  showCurrent(event) {
    if (event === this.current) return;
    this.current = event;
    this.followPlayhead();
  }

  /** Keeps the current event's row in view and highlighted. */
  followPlayhead() {
    const list = this.list;
    this.spacer.style.height = `${this.shownCount() * ROW}px`; // before scrolling: the list must be tall enough
    const position = this.currentPosition();
    if (position >= 0) {
      const top = position * ROW;
      if (top < list.scrollTop || top + ROW > list.scrollTop + list.clientHeight) {
        list.scrollTop = Math.max(0, top - list.clientHeight / 3);
      }
    }
    this.render();
  }

  /** A clicked row: its event, once its chunk is there. */
  select(row) {
    if (!row) return;
    const i = Number(row.dataset.index);
    const chunk = this.index.chunks[this.index.chunkOfEvent(i)];
    if (!chunk) return;
    this.onSelect(chunk.t[i - chunk.first], chunk.id[i - chunk.first]);
  }

  /** A class name in the filter; `number` is its value, as the chunks' class columns have it. */
  addClass(name, number) {
    this.filter.append(el("option", { value: String(number) }, name));
  }

  /** All events again, and the filter without classes: the index is read again and numbers them anew. */
  clearFilter() {
    setChildren(this.filter, el("option", { value: "" }, "All classes"));
    this.visible = null;
  }

  showEventTotal(text) {
    this.total.textContent = text ?? `${this.shownCount().toLocaleString("en-US")} events`;
  }

  /** Shows only the events of the chosen class: every chunk is needed for that, and loaded first. */
  async applyFilter() {
    const { index } = this;
    const wanted = this.filter.value === "" ? null : Number(this.filter.value);
    this.wantedClass = wanted;
    if (wanted !== null && index.chunks.some((chunk) => !chunk)) {
      this.showEventTotal("loading every event…");
      await index.ensureChunks(0, index.chunks.length - 1);
      if (this.wantedClass !== wanted) return;
    }
    if (wanted === null) {
      this.visible = null;
    } else {
      const positions = [];
      for (const chunk of index.chunks) chunk.c.forEach((c, j) => { if (c === wanted) positions.push(chunk.first + j); });
      this.visible = Int32Array.from(positions);
    }
    this.showEventTotal();
    this.list.scrollTop = 0;
    this.followPlayhead();
  }
}
