// page-timeline.js with page-assets.js: the page at any moment of a session, loaded a window at a time; seeking
// backward or within what is loaded asks for nothing again; seeking far asks for the snapshot in force there; `more`
// answers are followed; stylesheets are fetched once by their SHA-256.

import assert from "node:assert/strict";
import { test } from "node:test";
import { AssetCache } from "../../Sources/ConsoleServer/Resources/page-assets.js";
import { PageTimeline } from "../../Sources/ConsoleServer/Resources/page-timeline.js";
import { bodyOf } from "./frame-dom.js";
import { PATH, pageServer } from "./page-server.js";
import { frame, mutations, snapshot } from "./fixtures.js";

const SHA = "ab".repeat(32);

/** A session of `seconds`: snapshots at `snapshots` (s 1, 2, …), and each second a change of the paragraph's text to
 *  "t=SECOND" (ids ascending, as stored). */
function session(seconds, { snapshots = [0, 200], css } = {}) {
  const records = [];
  let id = 1, s = 0, n = 0;
  for (let t = 0; t < seconds; t++) {
    if (snapshots.includes(t)) {
      s += 1;
      n = 0;
      records.push(snapshot([{ i: 10, t: "p", c: [{ i: 11, x: `t=${t}` }] }], { s, t, id: id++, css }));
    } else if (s > 0) {
      records.push(mutations(++n, { text: [[11, `t=${t}`]] }, { s, t, id: id++ }));
    }
  }
  return records;
}

function timeline(records, { server = {}, horizon = 400, fetchText } = {}) {
  const assets = new AssetCache({ fetchText });
  const { doc, builder } = frame({ css: (value) => assets.css(value) });
  const { fetchJSON, log } = pageServer(records, server);
  const shown = [];
  const line = new PageTimeline({ fetchJSON, path: PATH, builder, assets, horizon: () => horizon,
    onUpdate: (t) => shown.push(t), onError: (error) => { throw error; } });
  return { doc, builder, line, log, shown, assets, settled: async () => { while (line.loading) await line.loading; } };
}

test("the first seek loads the snapshot in force and a window after it; playing on asks for the next window ahead of time", async () => {
  const page = timeline(session(400));
  assert.equal(await page.line.start(10), true);
  assert.equal(bodyOf(page.doc), "<p>t=10</p>");
  assert.deepEqual(page.log, [{ at: "10.000", until: "70.000" }]);
  for (let t = 10; t <= 45; t += 0.5) page.line.show(t);
  assert.equal(bodyOf(page.doc), "<p>t=45</p>");
  assert.equal(page.log.length, 1, "nothing asked for while the window lasts");
  page.line.show(55);
  assert.deepEqual(page.log[1], { after: "71", until: "130.000" }, "the next window, after the last record (t 70), 20 s ahead");
  await page.settled();
  page.line.show(100);
  assert.equal(bodyOf(page.doc), "<p>t=100</p>");
});

test("seeking backward rebuilds from the snapshot in force, from what is loaded; far forward asks for the snapshot there", async () => {
  const page = timeline(session(400));
  await page.line.start(30);
  page.line.show(5);
  assert.equal(bodyOf(page.doc), "<p>t=5</p>");
  assert.equal(page.log.length, 1, "backward: nothing asked for");
  assert.equal(page.builder.s, 1);

  page.line.show(300);
  assert.equal(page.line.show(300), false, "not loaded yet");
  await page.settled();
  assert.deepEqual(page.log[1], { at: "300.000", until: "360.000" });
  assert.equal(bodyOf(page.doc), "<p>t=300</p>", "shown once loaded, without another call");
  assert.equal(page.builder.s, 2, "built from the snapshot at 200");

  page.line.show(20);
  assert.equal(bodyOf(page.doc), "<p>t=20</p>");
  page.line.show(250);
  assert.equal(bodyOf(page.doc), "<p>t=250</p>");
  assert.equal(page.log.length, 2, "both stretches were loaded: nothing asked for again");
  page.line.show(210.5);
  assert.equal(bodyOf(page.doc), "<p>t=210</p>", "between records: the last one before");
});

test("a stretch rebuilds from a later snapshot it holds rather than applying every change before it", async () => {
  const page = timeline(session(400, { snapshots: [0, 20] }));
  await page.line.start(5);
  let built = 0;
  const apply = page.builder.apply.bind(page.builder);
  page.builder.apply = (record) => { built += record.class === "DOMSnapshot" ? 1 : 0; return apply(record); };
  page.line.show(40);
  assert.equal(bodyOf(page.doc), "<p>t=40</p>");
  assert.equal(built, 1, "the snapshot at 20");
  assert.equal(page.builder.applied.t, 40);
});

test("before the session's first snapshot the page is shown as first recorded (what the server answers for such a time)", async () => {
  const page = timeline(session(400, { snapshots: [50] }));
  assert.equal(await page.line.start(10), true);
  assert.equal(bodyOf(page.doc), "<p>t=50</p>");
  assert.equal(page.builder.applied.t, 50);
  let applied = 0;
  const apply = page.builder.apply.bind(page.builder);
  page.builder.apply = (r) => { applied++; return apply(r); };
  page.line.show(11);
  page.line.show(49);
  assert.equal(applied, 0, "nothing built again while the playhead stays before it");
  page.line.show(60);
  assert.equal(bodyOf(page.doc), "<p>t=60</p>");
  page.line.show(0);
  assert.equal(bodyOf(page.doc), "<p>t=50</p>");
  assert.equal(page.log.filter((query) => query.at !== undefined).length, 1, "one snapshot asked for");
});

test("an answer that says `more` is followed with after= until the window is whole; the moment is shown from the first part", async () => {
  const page = timeline(session(400), { server: { cap: 25 } });
  const requestsWhenShown = [];
  page.line.onUpdate = () => requestsWhenShown.push(page.log.length);
  await page.line.start(10);
  assert.deepEqual(page.log.slice(1), [{ after: "25", until: "70.000" }, { after: "50", until: "70.000" }]);
  assert.equal(requestsWhenShown[0], 1, "shown once the first answer had it");
  page.line.show(69);
  assert.equal(bodyOf(page.doc), "<p>t=69</p>");
});

test("a session without page records answers none: the console keeps its wireframe", async () => {
  const page = timeline([]);
  assert.equal(await page.line.start(10), false);
});

test("the playhead moving while a load is under way: the latest time is shown once it is there", async () => {
  const page = timeline(session(400));
  await page.line.start(10);
  page.line.show(250);
  page.line.show(260);
  page.line.show(270);
  await page.settled();
  assert.equal(page.log.length, 2, "one load at a time");
  assert.equal(bodyOf(page.doc), "<p>t=270</p>");
  assert.equal(page.shown.at(-1), 270);
});

test("an hour of changes: any moment is shown correctly, each record loaded once", async () => {
  const hour = session(3600, { snapshots: [0, 600, 1200, 1800, 2400, 3000] });
  const page = timeline(hour, { horizon: 3600 });
  await page.line.start(0);
  for (const t of [3599, 1234.5, 61, 2999, 3000, 600, 1799]) {
    page.line.show(t);
    await page.settled();
    assert.equal(bodyOf(page.doc), `<p>t=${Math.floor(t)}</p>`, `at ${t}`);
  }
  const loaded = page.log.length;
  for (const t of [3599, 1234.5, 61]) page.line.show(t);
  assert.equal(page.log.length, loaded, "moments seen before need no request");
});

test("stylesheets come with the answer and are cached by their SHA-256; one the answer lacks is fetched once", async () => {
  const records = session(400, { css: { $asset: SHA } });
  const fetched = [];
  const page = timeline(records, { server: { assets: { [SHA]: "p { color: red }" } }, fetchText: (sha) => { fetched.push(sha); return "x"; } });
  await page.line.start(10);
  assert.equal(page.doc.documentElement.childNodes.at(-1).textContent, "p { color: red }");
  assert.deepEqual(fetched, []);

  const other = "cd".repeat(32);
  const missing = session(400, { css: { $asset: other } });
  const second = timeline(missing, { fetchText: async (sha) => { fetched.push(sha); return "h1 { margin: 0 }"; } });
  await second.line.start(10);
  second.line.show(250);
  await second.settled();
  assert.equal(second.doc.documentElement.childNodes.at(-1).textContent, "h1 { margin: 0 }");
  assert.deepEqual(fetched, [other], "once, for both snapshots that name it");
});

test("the asset cache: texts by SHA, referenced css resolved, the least recently used dropped over its limit", () => {
  const cache = new AssetCache({ limit: 10 });
  cache.add({ [SHA]: "123456" });
  assert.equal(cache.css({ $asset: SHA.toUpperCase() }), "123456");
  assert.equal(cache.css("inline"), "inline");
  assert.equal(cache.css({ $asset: "not a sha" }), "");
  assert.equal(cache.css({ $asset: "ef".repeat(32) }), "");
  cache.add({ ["ef".repeat(32)]: "abcdef" });
  assert.equal(cache.has(SHA), false, "over the limit: the oldest went");
  assert.deepEqual(cache.missing([snapshot([], { css: { $asset: SHA } })]), [SHA]);
});

test("seeking back into a long run of changes after one snapshot starts from the nearest copy of the page", async () => {
  // 10,000 changes, 20 a second, after one snapshot.
  const records = [snapshot([{ i: 10, t: "p", c: [{ i: 11, x: "start" }] }], { t: 0, id: 1 })];
  for (let n = 1; n <= 10000; n++) records.push(mutations(n, { text: [[11, `n=${n}`]] }, { t: n / 20, id: n + 1 }));
  const page = timeline(records, { horizon: 500 });
  await page.line.start(0);
  for (let t = 30; t <= 500; t += 30) { page.line.show(t); await page.settled(); }
  page.line.show(500);
  assert.equal(bodyOf(page.doc), "<p>n=10000</p>");
  let applied = 0;
  const apply = page.builder.apply.bind(page.builder);
  page.builder.apply = (r) => { applied++; return apply(r); };
  page.line.show(7500 / 20);
  assert.equal(bodyOf(page.doc), "<p>n=7500</p>");
  assert.ok(applied < 2000, `${applied} records applied, not the 7,500 since the snapshot`);
  applied = 0;
  page.line.show(5);
  assert.equal(bodyOf(page.doc), "<p>n=100</p>");
  assert.equal(applied, 101, "before the first copy: from the snapshot");
});
