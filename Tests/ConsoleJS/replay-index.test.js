// replay-index.js: the Replay page's index read by byte ranges: the head in the first read (a second one only for a
// long head), chunks asked for a few ranges at a time and never twice, every range of the version the head came from
// (412: StaleIndex); and the moment answered from what is loaded (the event at a time, the screenshot, view and
// touches in effect, where skipping idle time lands).

import assert from "node:assert/strict";
import { test } from "node:test";
import { ReplayIndex, StaleIndex, upperBound } from "../../Sources/ConsoleServer/Resources/replay-index.js";
import { INDEX_URL, T0, chunksOf, indexFile, indexServer, settled } from "./replay-server.js";

const LONG_HEAD = 300 * 1024;   // a head past the first read: no chunk comes with it

function opened(file, options = {}) {
  const server = indexServer(file);
  const index = new ReplayIndex({ url: INDEX_URL, fetch: server.fetch, ...options });
  return { server, index };
}

/** The range chunks k…l (inclusive) are at. */
const rangeOf = (index, k, l = k) =>
  `bytes=${index.base + index.head.chunks[k].offset}-${index.base + index.head.chunks[l].offset + index.head.chunks[l].bytes - 1}`;

test("upperBound: the first index whose value is greater, over values or an accessor", () => {
  assert.equal(upperBound([1, 2, 2, 3], 2), 3);
  assert.equal(upperBound([1, 2, 2, 3], 0), 0);
  assert.equal(upperBound([1, 2, 2, 3], 9), 4);
  assert.equal(upperBound([], 1), 0);
  assert.equal(upperBound(null, 25, 5, (i) => i * 10), 3);
});

test("the head and the chunks that came whole with it in one read; class names numbered as first seen, the head's first", async () => {
  const className = (i) => (i < 10 ? "Tap" : i % 2 ? "Scroll" : "Note");
  const seen = [];
  const { server, index } = opened(indexFile(chunksOf(30, { className }), { classes: ["Tap"] }),
    { onClass: (name, number) => seen.push([name, number]) });
  await index.loadHead();
  assert.deepEqual(server.log, [{ range: "bytes=0-262143" }]);
  assert.equal(index.head.events, 30);
  assert.equal(index.etag, '"v1"');
  assert.ok(index.chunks.every(Boolean), "all three came with the head");
  assert.deepEqual(seen, [["Tap", 0], ["Note", 1], ["Scroll", 2]]);
  for (let i = 0; i < 30; i++) {
    const chunk = index.chunks[index.chunkOfEvent(i)];
    assert.equal(index.classNames[chunk.c[i - chunk.first]], className(i), `event ${i}'s class`);
  }
});

test("a head longer than the first read: its rest in a second range, of the same version; no chunk came with it", async () => {
  const { server, index } = opened(indexFile(chunksOf(30), { pad: LONG_HEAD }));
  await index.loadHead();
  assert.deepEqual(server.log, [{ range: "bytes=0-262143" }, { range: `bytes=262144-${index.base - 1}`, ifMatch: '"v1"' }]);
  assert.equal(index.head.events, 30);
  assert.equal(index.chunks.length, 3);
  assert.ok(!index.chunks.some(Boolean));
});

test("an index of another version is refused", async () => {
  const { index } = opened(indexFile(chunksOf(10), { version: 3 }));
  await assert.rejects(index.loadHead(), /unknown version/);
  assert.equal(index.head, null);
});

test("chunks not loaded are asked for a run at a time; those loaded or on their way are not asked for again", async () => {
  const { server, index } = opened(indexFile(chunksOf(60), { pad: LONG_HEAD }));
  await index.loadHead();
  server.log.length = 0;
  const first = index.ensureChunks(1, 2);
  const second = index.ensureChunks(0, 4);
  assert.equal(index.loading.size, 5);
  await Promise.all([first, second]);
  assert.deepEqual(server.log.map((r) => r.range), [rangeOf(index, 1, 2), rangeOf(index, 0), rangeOf(index, 3, 4)]);
  assert.ok(server.log.every((r) => r.ifMatch === '"v1"'), "every range of the version the head came from");
  assert.equal(index.loading.size, 0);
  await index.ensureChunks(-3, 99);
  assert.deepEqual(server.log.slice(3).map((r) => r.range), [rangeOf(index, 5)], "only the last, the range clamped");
  assert.equal(index.eventTime(55), T0 + 55);
});

test("a range asks for 4 MiB at most", async () => {
  const { server, index } = opened(indexFile(chunksOf(4, { perChunk: 1, summary: () => "x".repeat(1536 * 1024) })));
  await index.loadHead();
  assert.ok(!index.chunks.some(Boolean));
  await index.ensureChunks(0, 3);
  assert.deepEqual(server.log.slice(1).map((r) => r.range), [rangeOf(index, 0, 1), rangeOf(index, 2, 3)]);
  assert.ok(index.chunks.every(Boolean));
});

test("the file made again meanwhile: the range answers 412, StaleIndex, nothing left loading; the new head read again", async () => {
  const { server, index } = opened(indexFile(chunksOf(30), { pad: LONG_HEAD }));
  await index.loadHead();
  server.replace(indexFile(chunksOf(50), { pad: LONG_HEAD }));
  await assert.rejects(index.ensureChunks(0, 1), StaleIndex);
  assert.equal(index.loading.size, 0);
  await index.loadHead();
  assert.equal(server.log.at(-2).ifMatch, undefined, "the head is asked for whatever its version");
  assert.equal(index.head.events, 50);
  await index.ensureChunks(4, 4);
  assert.equal(index.eventTime(49), T0 + 49);
});

test("want: onLoaded once what it asked for is there, not when nothing had to be asked for; onError with a failure", async () => {
  let loaded = 0;
  const errors = [];
  const { server, index } = opened(indexFile(chunksOf(30), { pad: LONG_HEAD }),
    { onLoaded: () => { loaded += 1; }, onError: (error) => errors.push(error) });
  await index.loadHead();
  index.want(0, 1);
  index.want(0, 1);
  await settled(index);
  assert.equal(loaded, 1, "the second found both on their way");
  index.want(0, 1);
  await settled(index);
  assert.equal(loaded, 1, "both were there");
  server.replace(indexFile(chunksOf(40), { pad: LONG_HEAD }));
  index.want(2, 2);
  await settled(index);
  assert.equal(loaded, 1);
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof StaleIndex);
});

test("want: a failed load that two calls waited on is reported once, and by neither as an unhandled rejection", async () => {
  const errors = [];
  const unhandled = [];
  const onUnhandled = (reason) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    const { server, index } = opened(indexFile(chunksOf(30), { pad: LONG_HEAD }), { onError: (error) => errors.push(error) });
    await index.loadHead();
    server.replace(indexFile(chunksOf(40), { pad: LONG_HEAD }));
    index.want(2, 2);
    index.want(2, 2);
    await settled(index);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(errors.length, 1);
    assert.deepEqual(unhandled, []);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});

test("401 reloads the page (the login page); another failure says the server's error", async () => {
  let reloads = 0;
  globalThis.location = { reload: () => { reloads += 1; } };
  try {
    const { server, index } = opened(indexFile(chunksOf(10)));
    server.failWith = 401;
    await assert.rejects(index.loadHead(), /Not logged in/);
    assert.equal(reloads, 1);
    server.failWith = 404;
    await assert.rejects(index.loadHead(), /the session is gone/);
  } finally {
    delete globalThis.location;
  }
});

test("the event at a time and an event's time, from what is loaded; while its chunk loads, the chunk's first and no time", async () => {
  const { index } = opened(indexFile(chunksOf(30, { at: (i) => T0 + 2 * i }), { pad: LONG_HEAD }));
  assert.equal(index.eventAt(T0), -1, "before the head: none");
  await index.loadHead();
  assert.equal(index.eventAt(T0 - 1), -1, "before the first event");
  assert.equal(index.eventAt(T0 + 25), 10, "chunk 1 (t 20…38) is not there: its first event");
  assert.equal(index.eventTime(12), undefined);
  assert.equal(index.chunkOfTime(T0 - 5), 0);
  await index.ensureChunks(0, 2);
  assert.equal(index.eventAt(T0 + 24), 12, "at");
  assert.equal(index.eventAt(T0 + 25), 12, "before");
  assert.equal(index.eventAt(T0 + 1000), 29);
  assert.equal(index.eventTime(12), T0 + 24);
  assert.equal(index.chunkOfEvent(29), 2);
});

test("screenshots and views: the last at or before the moment, else the one in force where its chunk begins; touches of its chunk and the one before", async () => {
  const shot = (t, sha) => ({ t: T0 + t, sha, event: 1000 + Math.floor(t) });
  const touch = (t) => ({ t: T0 + t, x: 10, y: 20, phase: "began" });
  const extra = (k) => [
    { screenshot: shot(0, "z"), screenshots: [shot(3, "a"), shot(7, "b")], views: [{ t: T0 + 1, view: "Home" }], touches: [touch(9.5)] },
    { screenshot: shot(7, "b"), view: { t: T0 + 1, view: "Home" }, screenshots: [shot(15, "c"), shot(17, "d")], touches: [touch(10.5)] },
    { screenshot: shot(17, "d"), view: { t: T0 + 1, view: "Home" }, touches: [touch(20.5)] },
  ][k];
  const { index } = opened(indexFile(chunksOf(30, { extra }), { pad: LONG_HEAD }));
  await index.loadHead();
  assert.equal(index.lastAt("screenshots", T0 + 16).sha, "b", "chunk 1 not there: the one in force where it begins");
  await index.ensureChunks(0, 2);
  assert.equal(index.lastAt("screenshots", T0 + 2).sha, "z", "none in chunk 0 yet: the one in force where it begins");
  assert.equal(index.lastAt("screenshots", T0 - 1), null, "before it: none");
  assert.equal(index.lastAt("screenshots", T0 + 5).sha, "a");
  assert.equal(index.lastAt("screenshots", T0 + 12).sha, "b", "none in chunk 1 yet: the one in force where it begins");
  assert.equal(index.lastAt("screenshots", T0 + 16).sha, "c");
  assert.equal(index.lastAt("views", T0 + 12).view, "Home");
  assert.equal(index.lastAt("views", T0 + 0.5), null);
  assert.deepEqual(index.nextScreenshots(T0 + 2), ["a", "b"]);
  assert.deepEqual(index.nextScreenshots(T0 + 8), ["c", "d"], "none left in chunk 0: the next chunk's");
  assert.deepEqual(index.touchesBetween(T0 + 9, T0 + 11).map((t) => t.t), [T0 + 9.5, T0 + 10.5]);
  assert.deepEqual(index.touchesBetween(T0 + 10.5, T0 + 21).map((t) => t.t), [T0 + 20.5], "(from, now]");
});

test("skipping idle time: past a gap longer than the limit, half a second before the next event; else play on", async () => {
  const at = (i) => (i < 5 ? T0 + i : T0 + 100 + i);   // events 4 (T0 + 4) and 5 (T0 + 105) a gap apart, in two chunks
  const { index } = opened(indexFile(chunksOf(10, { perChunk: 5, at }), { pad: LONG_HEAD }));
  await index.loadHead();
  await index.ensureChunks(0, 0);
  assert.equal(index.idleLanding(T0 + 10, 5), null, "the next event's chunk is on its way");
  await index.ensureChunks(1, 1);
  assert.equal(index.idleLanding(T0 + 10, 5), T0 + 104.5);
  assert.equal(index.idleLanding(T0 + 4.2, 5), null, "just after the last event");
  assert.equal(index.idleLanding(T0 + 104.7, 5), null, "already about to land");
  assert.equal(index.idleLanding(T0 + 10, 200), null, "a gap shorter than the limit");
  assert.equal(index.idleLanding(T0 - 10, 5), null, "before the first event");
  assert.equal(index.idleLanding(T0 + 500, 5), null, "after the last");
});
