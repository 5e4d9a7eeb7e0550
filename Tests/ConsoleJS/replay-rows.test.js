// replay-rows.js: the Replay page's event list made a window at a time (the rows in view and a few around, their
// chunks asked for, pending until they come), the row at the playhead highlighted and brought into view, a click
// selecting a row's event, and the class filter, which loads every chunk first. On the fake DOM standing for the
// console's page, with the index read from a stand-in for muevald.

import "./console-globals.js";
import assert from "node:assert/strict";
import { test } from "node:test";
import { ReplayIndex, StaleIndex } from "../../Sources/ConsoleServer/Resources/replay-index.js";
import { ReplayRows } from "../../Sources/ConsoleServer/Resources/replay-rows.js";
import { FrameDocument } from "./frame-dom.js";
import { INDEX_URL, T0, chunksOf, indexFile, indexServer, settled } from "./replay-server.js";

// common.js's el() makes the rows in the page's document, and tells nodes from text by the DOM's Node class.
globalThis.document = new FrameDocument();
globalThis.Node = Object.getPrototypeOf(FrameDocument);
globalThis.requestAnimationFrame = (draw) => draw(0);

const ROW = 22;                 // console.css .ev height
const IN_VIEW = 10;             // rows the list shows
const LONG_HEAD = 300 * 1024;   // a head past the first read: no chunk comes with it

/** One of the console's elements: the fake DOM leaves replaceChildren out (the page builder never uses it). */
function element(tag) {
  const node = document.createElement(tag);
  node.replaceChildren = (...nodes) => { node.textContent = ""; node.append(...nodes); };
  return node;
}

/** #events: its scroll position and height as the test sets them (the fake DOM refuses layout reads). */
function listBox() {
  const listeners = {};
  return { scrollTop: 0, clientHeight: IN_VIEW * ROW, addEventListener: (type, fn) => { listeners[type] = fn; },
    fire: (type, event) => listeners[type](event) };
}

/** 1,000 events a second apart, every tenth a note, ten a chunk, none loaded with the head. */
async function eventList() {
  const server = indexServer(indexFile(chunksOf(1000), { pad: LONG_HEAD }));
  const clock = { now: T0 };
  const selected = [];
  const errors = [];
  const parts = { list: listBox(), spacer: element("div"), total: element("span"), filter: element("select") };
  const index = new ReplayIndex({ url: INDEX_URL, fetch: server.fetch, onClass: (name, number) => rows.addClass(name, number),
    onLoaded: () => rows.render() });
  const rows = new ReplayRows({ index, ...parts, noteClass: "Note", t0: () => T0, now: () => clock.now,
    onSelect: (t, id) => selected.push([t, id]), onError: (error) => errors.push(error) });
  rows.clearFilter();
  await index.loadHead();
  server.log.length = 0;
  const shown = () => parts.spacer.childNodes.map((row) => ({
    index: Number(row.getAttribute("data-index")), class: row.getAttribute("class"), top: row.style.top }));
  return { server, index, rows, clock, selected, errors, ...parts, shown };
}

test("only the rows in view and a few around are made, each in its place; their chunks asked for, pending until they come", async () => {
  const { server, index, rows, list, spacer, shown } = await eventList();
  rows.render();
  assert.deepEqual(shown().map((r) => r.index), [...Array(22).keys()], "ten in view and twelve below");
  assert.ok(shown().every((r) => r.class === "ev pending"));
  assert.equal(server.log.length, 1, "chunks 0-2 in one range");
  await settled(index);
  const first = spacer.childNodes[0];
  assert.equal(first.getAttribute("data-testid"), "event-row");
  assert.equal(first.getAttribute("data-event-id"), "1000");
  assert.equal(first.getAttribute("data-t"), "0.000");
  assert.equal(first.textContent, "0:00.0Tapevent 0");
  assert.equal(shown()[9].class, "ev note", "the observer note's row");
  assert.equal(shown()[21].top, `${21 * ROW}px`);

  list.scrollTop = 500 * ROW;
  list.fire("scroll");
  assert.deepEqual(shown().map((r) => r.index), [...Array(34).keys()].map((k) => 488 + k), "twelve above, ten, twelve below");
  assert.equal(server.log.length, 2, "chunks 48-52 in one range");
  await settled(index);
  assert.ok(shown().every((r) => !r.class.includes("pending")));
  assert.equal(spacer.childNodes[12].getAttribute("data-t"), "500.000");
});

test("the event at the playhead: its row highlighted and brought into view, a third of the list above it", async () => {
  const { index, rows, list, spacer, shown } = await eventList();
  rows.showCurrent(300);
  assert.equal(spacer.style.height, `${1000 * ROW}px`, "as tall as every row");
  assert.equal(list.scrollTop, 300 * ROW - (IN_VIEW * ROW) / 3);
  await settled(index);
  assert.deepEqual(shown().filter((r) => r.class.includes("current")).map((r) => r.index), [300]);

  list.scrollTop = 295 * ROW;
  rows.showCurrent(301);
  assert.equal(list.scrollTop, 295 * ROW, "in view already: the list stays");
  assert.deepEqual(shown().filter((r) => r.class.includes("current")).map((r) => r.index), [301]);
  const before = spacer.childNodes;
  rows.showCurrent(301);
  assert.equal(spacer.childNodes, before, "the same event: nothing is made again");
  rows.showCurrent(-1);
  assert.equal(list.scrollTop, 295 * ROW, "before the first event: the list stays");
});

test("a click on a row selects its event, its device time and id; a pending row or no row selects nothing", async () => {
  const { index, rows, list, spacer, selected } = await eventList();
  rows.render();
  const click = (row) => list.fire("click", { target: { closest: (selector) => {
    assert.equal(selector, "[data-testid=event-row]");
    return row;
  } } });
  click(spacer.childNodes[5]);
  assert.deepEqual(selected, [], "its chunk is on its way");
  await settled(index);
  click(spacer.childNodes[5]);
  click(null);
  assert.deepEqual(selected, [[T0 + 5, 1005]]);
});

test("the class filter: every chunk loaded first, then only that class's events, the playhead's row found by time", async () => {
  const { index, rows, clock, filter, total, spacer, list, shown } = await eventList();
  assert.deepEqual(filter.childNodes.map((o) => [o.value, o.textContent]), [["", "All classes"], ["0", "Tap"], ["1", "Note"]]);
  clock.now = T0 + 505;
  filter.value = "1";
  filter.dispatch("change");
  assert.equal(total.textContent, "loading every event…");
  await settled(index);
  assert.ok(index.chunks.every(Boolean));
  assert.equal(total.textContent, "100 events");
  assert.equal(spacer.style.height, `${100 * ROW}px`);
  assert.equal(list.scrollTop, 49 * ROW - (IN_VIEW * ROW) / 3, "the 50th note (event 499) is the last before the playhead");
  assert.ok(shown().every((r) => r.class === "ev note" && r.index % 10 === 9));
  assert.equal(shown()[0].index, 339, "from the 34th note: 45 rows scrolled past, twelve above them");

  filter.value = "";
  filter.dispatch("change");
  await settled(index);
  assert.equal(total.textContent, "1,000 events");
  assert.equal(spacer.style.height, `${1000 * ROW}px`);
});

test("a filter changed while its chunks load: the last one chosen is shown", async () => {
  const first = await eventList();
  first.filter.value = "1";
  first.filter.dispatch("change");
  first.filter.value = "0";
  first.filter.dispatch("change");
  await settled(first.index);
  assert.equal(first.total.textContent, "900 events");
  assert.ok(first.shown().every((r) => r.index % 10 !== 9));

  const second = await eventList();
  second.filter.value = "1";
  second.filter.dispatch("change");
  second.filter.value = "";
  second.filter.dispatch("change");
  assert.equal(second.total.textContent, "1,000 events", "All classes needs no chunk");
  await settled(second.index);
  assert.equal(second.total.textContent, "1,000 events", "the notes, loaded since, are not shown");
  assert.equal(second.rows.visible, null);
});

test("the filter's chunks could not be loaded: onError has why; clearFilter shows every event and only All classes", async () => {
  const { server, index, rows, filter, errors } = await eventList();
  server.replace(indexFile(chunksOf(20)));
  filter.value = "1";
  filter.dispatch("change");
  await settled(index);
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof StaleIndex);
  rows.clearFilter();
  assert.deepEqual(filter.childNodes.map((o) => o.value), [""]);
  assert.equal(rows.visible, null);
  await index.loadHead();
  assert.deepEqual(filter.childNodes.map((o) => o.textContent), ["All classes", "Tap", "Note"], "numbered anew");
});
