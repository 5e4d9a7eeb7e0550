// page-live.js: on the live page the page is loaded as it is now at each hello, then page records from the live
// socket are applied as they come (their stylesheets fetched first), none twice, none lost while a load runs.

import "./console-globals.js";
import assert from "node:assert/strict";
import { test } from "node:test";
import { AssetCache } from "../../Sources/ConsoleServer/Resources/page-assets.js";
import { LivePage } from "../../Sources/ConsoleServer/Resources/page-live.js";
import { recordOfEvent } from "../../Sources/ConsoleServer/Resources/page-records.js";
import { bodyOf } from "./frame-dom.js";
import { frame, mutations, record, snapshot } from "./fixtures.js";
import { PATH, pageServer } from "./page-server.js";

const SHA = "12".repeat(32);
const NOW = 1767225600;

/** A stored page record as the live socket sends it: `dom` as a JSON string, stylesheets as `$data` references. */
const live = (r, assets = []) => ({ id: r.id, class: r.class, device: "web-1", timestamp: r.t, received: r.t, timestampEstimated: false,
  payload: { class: r.class, timestamp: r.t, dom: JSON.stringify(r.dom), ...(assets.length ? { assets } : {}) }, summary: "" });

const text = (n, value, t, id) => mutations(n, { text: [[11, value]] }, { t, id });

function livePage(stored, { fetchText = async () => "" } = {}) {
  const server = pageServer(stored);
  const opened = [], marks = [];
  const page = new LivePage({
    sessionID: "7", fetchJSON: server.fetchJSON, now: () => NOW,
    open: async () => {
      const assets = new AssetCache({ fetchText });
      const { doc, builder } = frame({ css: (value) => assets.css(value) });
      const view = { overlay: {}, mark: (applied, at, frozen) => marks.push({ applied: applied?.id, at, frozen }) };
      opened.push(doc);
      return { view, builder, assets, doc };
    },
    onShown: (view) => { page.shown = view; },
  });
  return { page, server, opened, marks, body: () => bodyOf(opened[0]), settled: async () => { await page.loading; await page.chain; } };
}

const stored = () => [
  snapshot([{ i: 10, t: "p", c: [{ i: 11, x: "loaded" }] }], { t: NOW - 10, id: 1 }),
  text(1, "changed before the page was opened", NOW - 5, 2),
];

test("a session without page records: the hello asks once, nothing is opened, the wireframe stays", async () => {
  const { page, server, opened, settled } = livePage([]);
  page.hello();
  await settled();
  assert.equal(opened.length, 0);
  assert.deepEqual(server.log, [{ at: String(NOW + 3600) + ".000", until: String(NOW + 3600) + ".000" }],
    "the page as it is now, asked for ahead of a device clock that may run fast");
  page.events([{ id: 5, class: "UserInputEvent", timestamp: NOW, payload: {} }]);
  assert.equal(opened.length, 0);
});

test("the page as it is now at the hello, then records from the socket as they come, each once", async () => {
  const { page, opened, marks, body, settled } = livePage(stored());
  page.hello();
  await settled();
  assert.equal(opened.length, 1);
  assert.ok(page.shown, "the live page is told to show it");
  assert.equal(body(), "<p>changed before the page was opened</p>");
  page.events([live(stored()[1]), live(text(2, "live", NOW, 3))]);
  await settled();
  assert.equal(body(), "<p>live</p>");
  assert.deepEqual(marks.at(-1), { applied: 3, at: NOW, frozen: false });
  page.events([live(text(2, "again", NOW, 3))]);
  await settled();
  assert.equal(body(), "<p>live</p>", "a record applied already is not applied again");
});

test("records arriving while the page loads wait for it; a reconnection's hello loads what was missed", async () => {
  const records = stored();
  const { page, body, settled, server } = livePage(records);
  page.hello();
  page.events([live(text(2, "during the load", NOW, 3))]);
  await settled();
  assert.equal(body(), "<p>during the load</p>");
  records.push(text(3, "while the socket was down", NOW + 1, 4));
  page.hello();
  await settled();
  assert.equal(body(), "<p>while the socket was down</p>");
  assert.equal(server.log.length, 2);
});

test("a snapshot arriving on a page not shown yet opens it (the recording began after the live page opened)", async () => {
  const records = [];
  const { page, opened, body, settled } = livePage(records);
  page.hello();
  await settled();
  assert.equal(opened.length, 0);
  records.push(...stored());
  page.events([live(records[0]), live(records[1])]);
  await settled();
  assert.equal(opened.length, 1);
  assert.equal(body(), "<p>changed before the page was opened</p>");
});

test("stylesheets the socket names only by SHA-256 are fetched, once, before the record is applied", async () => {
  const fetched = [];
  const { page, opened, settled } = livePage(stored(), { fetchText: async (sha) => { fetched.push(sha); return "p { color: red }"; } });
  page.hello();
  await settled();
  const next = snapshot([{ i: 10, t: "p", c: [{ i: 11, x: "styled" }] }], { s: 2, t: NOW, id: 3, css: { $asset: SHA } });
  const again = snapshot([{ i: 10, t: "p", c: [{ i: 11, x: "styled again" }] }], { s: 3, t: NOW, id: 4, css: { $asset: SHA } });
  page.events([live(next, [{ $data: SHA, $size: 16 }])]);
  page.events([live(again, [{ $data: SHA, $size: 16 }])]);
  await settled();
  const html = opened[0].documentElement;
  assert.equal(html.childNodes.at(-1).textContent, "p { color: red }");
  assert.deepEqual(fetched, [SHA]);
});

test("a record the server could not store (no dom) is a gap: the page stays as before it until the next snapshot", async () => {
  const { page, body, marks, settled } = livePage(stored());
  page.hello();
  await settled();
  const invalid = { id: 3, class: "DOMMutations", timestamp: NOW, payload: { invalid: "its dom field is not a DOMMutations record" } };
  assert.equal(recordOfEvent(invalid), null);
  page.events([invalid, live(text(3, "after the gap", NOW, 4))]);
  await settled();
  assert.equal(body(), "<p>changed before the page was opened</p>");
  assert.equal(marks.at(-1).frozen, true);
  page.events([live(record("DOMSnapshot", { s: 2, n: 0, root: snapshot([{ i: 10, t: "p", c: [{ i: 11, x: "healed" }] }]).dom.root }, NOW, 5))]);
  await settled();
  assert.equal(body(), "<p>healed</p>");
  assert.equal(marks.at(-1).frozen, false);
});

test("records as the live socket sends them: dom parsed from its string, other classes and broken JSON left out", () => {
  const r = live(text(4, "x", NOW, 9));
  assert.deepEqual(recordOfEvent(r), { id: 9, t: NOW, class: "DOMMutations", dom: { s: 1, n: 4, text: [[11, "x"]] } });
  assert.equal(recordOfEvent({ ...r, payload: { dom: "{not json" } }), null);
  assert.equal(recordOfEvent({ ...r, class: "UserInputEvent" }), null);
  assert.equal(PATH, "/api/sessions/7/page");
});
