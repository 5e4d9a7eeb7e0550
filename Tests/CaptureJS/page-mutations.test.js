// capture/page/mutations.js through the DomRecorder: a frame's changes as one DOMMutations record whose entries say
// what each node is now, so that applying the records to the snapshot rebuilds the page (checked against a fresh
// snapshot by the harness's replay), with the snapshot's ids and the snapshot's masking.

import assert from "node:assert/strict";
import { test } from "node:test";
import { h } from "./fake-dom.js";
import { recording, recordingChangedWhileWalked } from "./page-harness.js";

test("ids stay the node's: changes name the nodes of the snapshot, an added node its parent and the sibling after it", async () => {
  let one, two;
  const page = await recording((doc) => doc.body.append(one = h(doc, "p", {}, "one"), two = h(doc, "p", {}, "two")), { mask: "none" });
  const [snapshot] = page.of("DOMSnapshot");
  const body = snapshot.root.c[0].c[1];
  assert.deepEqual(body.c.map((c) => c.i), [page.recorder.serializer.known(one), page.recorder.serializer.known(two)]);
  const added = h(page.doc, "div", { class: "new" }, "three");
  page.doc.body.insertBefore(added, two);
  one.setAttribute("class", "done");
  one.childNodes[0].data = "one!";
  await page.settle();
  const [changes] = page.of("DOMMutations");
  assert.equal(changes.s, 1);
  assert.equal(changes.n, 1);
  assert.deepEqual(changes.add, [{ p: body.i, b: body.c[1].i, n: { i: changes.add[0].n.i, t: "div", a: { class: "new" }, c: [{ i: changes.add[0].n.c[0].i, x: "three" }] } }]);
  assert.deepEqual(changes.attr, [[body.c[0].i, "class", "done"]]);
  assert.deepEqual(changes.text, [[body.c[0].c[0].i, "one!"]]);
  const { replayed, live } = page.compare();
  assert.deepEqual(replayed, live);
});

test("removed nodes by id; a moved node keeps its id and is moved, not removed", async () => {
  let a, b, c;
  const page = await recording((doc) => doc.body.append(a = h(doc, "p", {}, "a"), b = h(doc, "p", {}, "b"), c = h(doc, "p", {}, "c")));
  const known = (n) => page.recorder.serializer.known(n);
  a.remove();
  page.doc.body.appendChild(b);
  await page.settle();
  const [changes] = page.of("DOMMutations");
  assert.deepEqual(changes.rm, [known(a)]);
  assert.deepEqual(changes.add.map((e) => [e.n.i, e.b]), [[known(b), null]]);
  // Into a new section: removed from the body, recorded again inside the section with its id.
  const section = h(page.doc, "section");
  section.appendChild(c);
  page.doc.body.appendChild(section);
  await page.settle();
  const second = page.of("DOMMutations")[1];
  assert.equal(second.add[0].n.c[0].i, known(c));
  assert.deepEqual(page.compare().replayed, page.compare().live);
});

test("siblings added in one frame, anywhere, rebuild in the page's order", async () => {
  let list;
  const page = await recording((doc) => doc.body.append(list = h(doc, "ul", {}, h(doc, "li", {}, "x"))));
  const [x] = list.childNodes;
  const li = (t) => h(page.doc, "li", {}, t);
  list.insertBefore(li("b"), x);
  list.appendChild(li("d"));
  list.insertBefore(li("a"), list.childNodes[0]);
  list.insertBefore(li("c"), x);
  list.appendChild(li("e"));
  await page.settle();
  const { replayed, live } = page.compare();
  assert.deepEqual(replayed, live);
  assert.equal(page.of("DOMMutations").length, 1, "one record for the frame");
});

test("changes made while the snapshot is walked in slices are sent after it, and the replay is the page", async () => {
  const { page, slices: slice } = await recordingChangedWhileWalked();
  assert.ok(slice > 4, `${slice} slices`);
  const { replayed, live } = page.compare();
  assert.deepEqual(replayed, live);
  const ids = JSON.stringify(page.of("DOMSnapshot")[0].root).match(/"i":\d+/g);
  assert.equal(new Set(ids).size, ids.length, "a node moved during the walk is in the snapshot once");
});

test("changes are masked as the snapshot is: text shaped, values never, blocked and editable content never", async () => {
  let para, field, area, editor, section;
  const page = await recording((doc) => doc.body.append(para = h(doc, "p", {}, "start"), field = h(doc, "input", { type: "email" }),
    area = h(doc, "textarea", {}, ""), editor = h(doc, "div", { contenteditable: "" }, h(doc, "p", {}, "")),
    section = h(doc, "section", {}, h(doc, "h2", {}, "Heading kept"))));
  para.childNodes[0].data = "Secret 42";
  field.setAttribute("value", "typed@secret.example");
  field.value = "typed@secret.example";
  area.append("secret draft");
  editor.childNodes[0].append("secret note");
  para.appendChild(h(page.doc, "input", { value: "secret value", type: "text" }));
  await page.settle();
  section.setAttribute("data-mueval-mask", "");
  await page.settle();
  const json = page.records.map((r) => r.json).join("\n");
  assert.ok(!/secret|Secret|typed/.test(json), json);
  const [first, second] = page.of("DOMMutations");
  assert.deepEqual(first.text, [[page.recorder.serializer.known(para.childNodes[0]), "Xxxxxx 99"]]);
  assert.equal(second.add[0].n.c[0].c[0].x, "Xxxxxxx xxxx", "a section newly masked is recorded again, shaped");
  section.setAttribute("data-mueval-block", "");
  await page.settle();
  assert.deepEqual(Object.keys(page.of("DOMMutations")[2].add[0].n).sort(), ["h", "i", "t", "w"], "newly blocked: a box");
  section.childNodes[0].childNodes[0].data = "inside the block";
  await page.settle();
  assert.ok(!page.records.some((r) => r.json.includes("inside the block")));
});

test("a frame over its budget is a wholesale change: a new snapshot instead, the replay still the page", async () => {
  const page = await recording((doc) => doc.body.append(h(doc, "main", {}, "old")), { limits: { frameUnits: 30, snapshotGapMs: 0 } });
  const main = page.doc.body.childNodes[0];
  main.remove();
  const next = h(page.doc, "main");
  for (let i = 0; i < 40; i++) next.append(h(page.doc, "p", {}, `p${i}`));
  page.doc.body.appendChild(next);
  await page.settle();
  await page.settle();
  assert.deepEqual(page.records.map((r) => r.cls), ["DOMSnapshot", "DOMSnapshot"]);
  assert.equal(page.of("DOMSnapshot")[1].s, 2);
  next.childNodes[0].remove();
  await page.settle();
  assert.deepEqual(page.of("DOMMutations").map((r) => [r.s, r.n]), [[2, 1]], "changes follow the new snapshot");
  assert.deepEqual(page.compare().replayed, page.compare().live);
});

test("a node recorded before and no longer (a link that is no stylesheet now) is removed and forgotten", async () => {
  let link, p;
  const page = await recording((doc) => {
    doc.head.append(link = h(doc, "link", { rel: "stylesheet", href: "/a.css" }));
    doc.body.append(p = h(doc, "p", {}, "x"));
  });
  const id = page.recorder.serializer.known(link);
  link.setAttribute("rel", "preload");
  await page.settle();
  assert.deepEqual(page.of("DOMMutations")[0].rm, [id]);
  assert.equal(page.recorder.serializer.known(link), undefined);
  page.doc.head.insertBefore(h(page.doc, "style"), link);
  await page.settle();
  assert.equal(page.of("DOMMutations")[1].add[0].b, null, "the forgotten node is no position");
  assert.deepEqual(page.compare().replayed, page.compare().live);
  void p;
});

test("changes inside an open shadow root are observed, placed in the root and masked by the host's mask", async () => {
  let root;
  const page = await recording((doc) => {
    const host = h(doc, "note-card", { "data-mueval-mask": "" });
    root = host.attachShadow({ mode: "open" });
    root.append(h(doc, "h3", {}, "Title"));
    doc.body.append(host);
  }, { mask: "none" });
  root.append(h(page.doc, "p", {}, "Private 12"));
  root.childNodes[0].childNodes[0].data = "Renamed";
  await page.settle();
  const [changes] = page.of("DOMMutations");
  assert.equal(changes.add[0].p, page.recorder.serializer.known(root));
  assert.equal(changes.add[0].n.c[0].x, "Xxxxxxx 99");
  assert.deepEqual(changes.text.map(([, text]) => text), ["Xxxxxxx"]);
  assert.deepEqual(page.compare().replayed, page.compare().live);
});
