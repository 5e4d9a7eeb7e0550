// capture/page/dom-recorder.js: the snapshot in idle slices bounded by a unit budget, new snapshots when the page
// changes wholesale (a route pushed or popped) and to heal dropped records, scroll, viewport, focus and stylesheets,
// and the promise of "Page recording": strings typed into fields or masked never appear in any record, in any mode.

import assert from "node:assert/strict";
import { test } from "node:test";
import { KEEP, PAGE, SAMPLE } from "../../CaptureLibrary/Web/capture/constants.js";
import { h, sheet } from "./fake-dom.js";
import { recording, tick } from "./page-harness.js";

const rows = (doc, count) => {
  for (let i = 0; i < count; i++) doc.body.append(h(doc, "div", { class: "row" }, h(doc, "span", {}, `item ${i}`), " text"));
};

test("the snapshot is walked in idle slices of at most PAGE.sliceUnits nodes, none of it in start()", async () => {
  const perSlice = [];
  let last = 0;
  const page = await recording((doc) => rows(doc, 1000), { each: (recorder) => {
    perSlice.push(recorder.serializer.next - 1 - last);
    last = recorder.serializer.next - 1;
  } });
  assert.equal(page.idsAtStart, 0, "start() walks nothing");
  assert.equal(last, 4004, "every node, once: the document, html, head, body and four per row");
  for (const units of perSlice) assert.ok(units <= PAGE.sliceUnits, `a slice did ${units} nodes`);
  assert.ok(perSlice.length >= Math.ceil(4004 / PAGE.sliceUnits), `${perSlice.length} slices`);
  const [snapshot] = page.records;
  assert.equal(snapshot.cls, "DOMSnapshot");
  assert.equal(snapshot.tier, KEEP, "a snapshot is never dropped for room");
});

test("stylesheets count as units too: a framework's thousands of rules are spread over slices", async () => {
  const perSlice = [];
  let rules = 0, last = 0;
  const many = Array.from({ length: 1000 }, (_, i) => ({ get cssText() { rules++; return `.c${i} { color: red }`; } }));
  await recording((doc) => {
    const style = h(doc, "style");
    style.sheet = sheet(many);
    doc.head.append(style);
  }, { each: () => { perSlice.push(rules - last); last = rules; } });
  assert.equal(rules, 1000);
  for (const count of perSlice) assert.ok(count <= PAGE.sliceUnits, `a slice read ${count} rules`);
});

test("changes before the first snapshot wait for it; records carry the snapshot's number and their own", async () => {
  const page = await recording((doc) => rows(doc, 3), { mask: "none" });
  page.doc.body.append(h(page.doc, "p", {}, "later"));
  await page.settle();
  page.doc.body.childNodes[0].remove();
  await page.settle();
  assert.deepEqual(page.records.map((r) => [r.cls, r.record.s, r.record.n, r.tier]),
    [["DOMSnapshot", 1, 0, KEEP], ["DOMMutations", 1, 1, SAMPLE], ["DOMMutations", 1, 2, SAMPLE]]);
});

test("a route pushed or popped is a new snapshot; a replaced one is not", async () => {
  const page = await recording((doc) => rows(doc, 2));
  page.recorder.navigated("replace");
  await page.settle();
  assert.equal(page.of("DOMSnapshot").length, 1);
  page.recorder.navigated("push");
  await page.settle();
  page.recorder.navigated("pop");
  await page.settle();
  assert.deepEqual(page.of("DOMSnapshot").map((s) => s.s), [1, 2, 3]);
});

test("a route changed while the snapshot is walked needs no second snapshot: its changes follow the first", async () => {
  let slices = 0;
  const page = await recording((doc) => rows(doc, 100), { limits: { sliceUnits: 50, snapshotGapMs: 0 }, each: (recorder) => {
    if (++slices !== 2) return;
    const doc = globalThis.document;
    doc.body.childNodes[0].remove();
    doc.body.append(h(doc, "h1", {}, "Next page"));
    recorder.navigated("push");
  } });
  await page.settle();
  await page.settle();
  assert.equal(page.of("DOMSnapshot").length, 1);
  assert.equal(page.of("DOMMutations").length, 1);
  assert.deepEqual(page.compare().replayed, page.compare().live);
});

test("dropped records are healed by a snapshot once the spool has room again", async () => {
  const page = await recording((doc) => rows(doc, 2), { limits: { snapshotGapMs: 0 } });
  page.spool.dropped = 4;
  page.spool.room = false;
  page.recorder.heal();
  page.doc.body.append(h(page.doc, "p"));
  await page.settle();
  assert.equal(page.of("DOMSnapshot").length, 1, "no snapshot into a full spool");
  page.spool.room = true;
  page.recorder.heal();
  await page.settle();
  assert.equal(page.of("DOMSnapshot").length, 2);
  page.recorder.heal();
  await page.settle();
  assert.equal(page.of("DOMSnapshot").length, 2, "healed once for those drops");
  page.recorder.navigated("push");
  await new Promise((resolve) => setTimeout(resolve, 2));
  page.spool.dropped = 9;
  page.recorder.heal();
  await page.settle();
  await page.settle();
  assert.equal(page.of("DOMSnapshot").length, 3, "drops before a snapshot being taken are healed by it");
});

test("scroll positions, the viewport and focus: in the snapshot, then when they change, once per frame", async () => {
  let list, field;
  const page = await recording((doc) => doc.body.append(list = h(doc, "ul", {}, h(doc, "li", {}, "a")), field = h(doc, "input")));
  const known = (n) => page.recorder.serializer.known(n);
  const [snapshot] = page.of("DOMSnapshot");
  assert.deepEqual(snapshot.viewport, { w: 390, h: 844, o: "portrait" });
  assert.deepEqual(snapshot.scroll, [[1, 0, 0]]);
  assert.equal(snapshot.focus, null);
  Object.assign(list, { scrollTop: 120.3, scrollLeft: 0 });
  page.doc.fire("scroll", list);
  globalThis.scrollY = 300;
  page.doc.fire("scroll", page.doc);
  page.doc.fire("scroll", page.doc);
  Object.assign(globalThis, { innerWidth: 844, innerHeight: 390 });
  page.win.fire("resize");
  page.doc.activeElement = field;
  page.doc.fire("focusin", field);
  await page.settle();
  assert.deepEqual(page.of("DOMScroll").map((r) => r.scroll), [[[known(list), 0, 120.5], [1, 0, 300]]]);
  assert.deepEqual(page.of("DOMViewport").map(({ w, h, o }) => ({ w, h, o })), [{ w: 844, h: 390, o: "landscape" }]);
  assert.deepEqual(page.of("DOMFocus").map((r) => r.focus), [known(field)]);
  page.recorder.navigated("push");
  await page.settle();
  assert.deepEqual(page.of("DOMSnapshot")[1].scroll, [[1, 0, 300], [known(list), 0, 120.5]], "elements that scrolled are in the next snapshot");
  assert.equal(page.of("DOMSnapshot")[1].focus, known(field));
});

test("a frame with changes but no resize reads no viewport (innerWidth in a frame forces the page's layout early)", async () => {
  const page = await recording((doc) => rows(doc, 2));
  let reads = 0;
  Object.defineProperty(globalThis, "innerWidth", { get: () => ++reads && 390, configurable: true });
  try {
    page.doc.body.append(h(page.doc, "p"));
    await page.settle();
    assert.equal(page.of("DOMMutations").length, 1);
    assert.equal(reads, 0);
  } finally {
    Object.defineProperty(globalThis, "innerWidth", { value: 390, writable: true, configurable: true, enumerable: true });
  }
});

test("rules inserted with insertRule (no mutation) are read again in idle time and sent", async () => {
  let style;
  const rules = ["a { color: red }"];
  const page = await recording((doc) => {
    style = h(doc, "style");
    style.sheet = sheet(rules);
    doc.head.append(style);
  });
  style.sheet.insertRule(".new { color: blue }");
  page.doc.body.append(h(page.doc, "div", { class: "new" }));  // the component that needed the rule
  await page.settle();
  const css = page.of("DOMMutations").flatMap((r) => r.css || []);
  assert.deepEqual(css, [[page.recorder.serializer.known(style), "a { color: red }.new { color: blue }"]]);
});

test("a stylesheet that loads after the snapshot is sent when it has (another origin's stays its URL)", async () => {
  let own, foreign;
  const page = await recording((doc) => doc.head.append(own = h(doc, "link", { rel: "stylesheet", href: "/late.css" }),
    foreign = h(doc, "link", { rel: "stylesheet", href: "https://cdn.example/x.css" })));
  own.sheet = sheet(["p { margin: 0 }"], { href: "https://app.example.org/late.css" });
  foreign.sheet = sheet(["p { margin: 1px }"], { href: "https://cdn.example/x.css", readable: false });
  page.doc.body.append(h(page.doc, "p"));
  await page.settle();
  assert.deepEqual(page.of("DOMMutations").flatMap((r) => r.css || []), [[page.recorder.serializer.known(own), "p { margin: 0 }"]]);
});

test("more changes than a frame could take piling up (a hidden page has no frames) are a new snapshot, not kept", async () => {
  const page = await recording((doc) => rows(doc, 2), { limits: { frameUnits: 10, snapshotGapMs: 0 } });
  for (let i = 0; i < 50; i++) page.doc.body.append(h(page.doc, "p"));
  await page.settle();
  assert.equal(page.recorder.mutations.records.length, 0);
  await page.settle();
  assert.deepEqual(page.records.map((r) => r.cls), ["DOMSnapshot", "DOMSnapshot"]);
});

test("stop(): what changed is sent, nothing after", async () => {
  const page = await recording((doc) => rows(doc, 2));
  page.doc.body.append(h(page.doc, "p"));
  await tick();
  page.recorder.stop();
  assert.equal(page.of("DOMMutations").length, 1);
  page.doc.body.append(h(page.doc, "p"));
  page.doc.fire("scroll", page.doc);
  await page.settle();
  assert.equal(page.records.length, 2);
});

test("stop() during the walk finishes it: the snapshot is sent, with what changed meanwhile, then nothing", async () => {
  let slices = 0, stopped;
  const page = await recording((doc) => rows(doc, 500), { mask: "none", limits: { sliceUnits: 50 }, each: (recorder) => {
    if (++slices !== 2) return;
    globalThis.document.body.append(h(globalThis.document, "p", {}, "during the walk"));
    stopped = recorder.stop();
  } });
  await stopped;
  assert.deepEqual(page.records.map((r) => [r.cls, r.record.s, r.record.n]), [["DOMSnapshot", 1, 0], ["DOMMutations", 1, 1]]);
  assert.deepEqual(page.compare().replayed, page.compare().live);
  page.doc.body.append(h(page.doc, "p"));
  await page.settle();
  assert.equal(page.records.length, 2);
});

test("stop() right after a route change sends that route's snapshot before it resolves (a snapshot is never dropped)", async () => {
  const page = await recording((doc) => rows(doc, 3), { mask: "none" });
  page.doc.body.append(h(page.doc, "h1", {}, "Next page"));
  page.recorder.navigated("push");
  const stopped = page.recorder.stop();
  await page.settle();
  await stopped;
  assert.deepEqual(page.records.map((r) => [r.cls, r.record.s, r.record.n]), [["DOMSnapshot", 1, 0], ["DOMSnapshot", 2, 0]]);
  assert.ok(page.records[1].json.includes("Next page"));
  page.doc.body.append(h(page.doc, "p"));
  await page.settle();
  assert.equal(page.records.length, 2, "nothing after");
});

test("stop() with a frame too large for one record pending sends a last snapshot instead", async () => {
  const page = await recording((doc) => rows(doc, 2), { mask: "none", limits: { frameUnits: 10 } });
  for (let i = 0; i < 20; i++) page.doc.body.append(h(page.doc, "p", {}, `late ${i}`));
  await tick();
  const stopped = page.recorder.stop();
  await page.settle();
  await stopped;
  assert.deepEqual(page.records.map((r) => [r.cls, r.record.s]), [["DOMSnapshot", 1], ["DOMSnapshot", 2]]);
  assert.ok(page.records[1].json.includes("late 19"));
});

test("the snapshot's JSON is written in idle slices of its own, of PAGE.writeUnits objects and arrays", async () => {
  const sizes = [];
  const page = await recording((doc) => rows(doc, 300), { limits: { writeUnits: 100 }, each: (r) => sizes.push(r.serializer.next) });
  const after = sizes.length - 1 - sizes.indexOf(Math.max(...sizes));
  assert.ok(after > 10, `${after} slices after the walk's last: the JSON of 300 rows is over 1,000 units`);
  assert.equal(page.records[0].json, JSON.stringify(page.records[0].record), "JSON.stringify's text");
});

test("known strings typed into fields or masked never appear in any record, in any mode", async () => {
  const secrets = ["hunter2", "jane@example.org", "4111 1111", "My diary entry", "Balance 1200"];
  for (const mode of ["inputs", "all", "none"]) {
    let form, diary, balance;
    const page = await recording((doc) => {
      const email = h(doc, "input", { type: "email", value: secrets[1] });
      email.value = secrets[1];
      doc.body.append(form = h(doc, "form", {}, h(doc, "label", {}, "Password"), h(doc, "input", { type: "password", value: secrets[0] }), email,
        h(doc, "textarea", {}, secrets[4]), h(doc, "select", {}, h(doc, "option", { value: secrets[3], selected: "" }, "Card"))),
      diary = h(doc, "div", { contenteditable: "true" }, secrets[3]),
      balance = h(doc, "p", { "data-mueval-mask": "" }, secrets[4]),
      h(doc, "div", { "data-mueval-block": "" }, secrets[2]));
    }, { mask: mode });
    // Typing: frameworks write the value attribute, editors the text nodes; a masked text changes.
    form.childNodes[1].setAttribute("value", `${secrets[0]}!`);
    form.appendChild(h(page.doc, "input", { type: "text", value: secrets[2] }));
    diary.childNodes[0].data = `${secrets[3]} more`;
    diary.append(h(page.doc, "b", {}, secrets[1]));
    balance.childNodes[0].data = `${secrets[4]}.50`;
    await page.settle();
    const sent = page.records.map((r) => r.json).join("\n");
    assert.ok(page.records.length >= 2, mode);
    for (const secret of secrets) assert.ok(!sent.includes(secret), `${mode}: "${secret}" was sent`);
    assert.ok(sent.includes("Xxxxxxx 9999.99"), `${mode}: the masked text keeps its shape`);
  }
});
