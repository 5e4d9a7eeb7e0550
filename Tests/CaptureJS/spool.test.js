// spool.js with spool-store.js's MemoryStore: the bound and drop policy (admit), the spool's numbering, and the wire
// text. Sizes are chosen so that each message costs a round number of bytes against the bound.

import assert from "node:assert/strict";
import { test } from "node:test";
import { KEEP, SAMPLE, SPOOL_ENTRY_OVERHEAD } from "../../CaptureLibrary/Web/capture/constants.js";
import { Spool, admit, messageBytes, messageXML } from "../../CaptureLibrary/Web/capture/spool.js";
import { MemoryStore } from "../../CaptureLibrary/Web/capture/spool-store.js";

const FIRST = 1_700_000_000_000_000;

/** A message costing `bytes` against the bound (its text is bytes − the overhead), named by `label` in its head. */
function item(label, tier, bytes, lean) {
  const body = bytes - SPOOL_ENTRY_OVERHEAD;
  const head = `<key>l</key><string>${label}</string>`.padEnd(Math.ceil(body / 2), " ");
  return { name: "event", head, tail: "t".repeat(body - head.length), tier, lean };
}
const labels = (spool) => [...spool.messages.values()].map((m) => /<string>(\w+)</.exec(m.head)[1]);

test("messageBytes counts the text and the entry's overhead", () => {
  assert.equal(messageBytes(item("a", KEEP, 100)), 100);
  assert.equal(messageBytes({ head: "abc", tail: "de" }), 5 + SPOOL_ENTRY_OVERHEAD);
});

test("messageXML puts the seq between head and tail", () => {
  assert.equal(messageXML({ name: "event", head: "<key>class</key><string>X</string>", tail: "<key>x</key><integer>1</integer>", seq: 42 }),
    "<event><key>class</key><string>X</string><key>seq</key><integer>42</integer><key>x</key><integer>1</integer></event>\n");
  assert.equal(messageXML({ name: "media", head: "", tail: "", seq: FIRST }), `<media><key>seq</key><integer>${FIRST}</integer></media>\n`);
});

test("under the bound everything is kept and numbered in order from the store's first seq", async () => {
  const spool = new Spool(new MemoryStore(FIRST), 1000);
  const written = await spool.write([item("a", KEEP, 100), item("b", SAMPLE, 100), item("c", KEEP, 100)]);
  assert.deepEqual(written.map((m) => m.seq), [FIRST, FIRST + 1, FIRST + 2]);
  assert.deepEqual(spool.seqs(), [FIRST, FIRST + 1, FIRST + 2]);
  assert.deepEqual(labels(spool), ["a", "b", "c"]);
  assert.equal(spool.bytes, 300);
  assert.equal(spool.dropped, 0);
  await spool.write([item("d", SAMPLE, 100)]);
  assert.deepEqual(spool.seqs().at(-1), FIRST + 3, "the next write goes on from there");
  assert.match(spool.xml(FIRST + 1), new RegExp(`^<event><key>l</key><string>b</string> *<key>seq</key><integer>${FIRST + 1}</integer>t+</event>\\n$`));
  assert.equal(await spool.write([]).then((w) => w.length), 0);
});

test("a sample that does not fit is dropped and counted, the store keeps the count", async () => {
  const store = new MemoryStore(FIRST);
  const spool = new Spool(store, 1000);
  await spool.write([item("a", KEEP, 900)]);
  const written = await spool.write([item("s1", SAMPLE, 200), item("s2", SAMPLE, 100), item("s3", SAMPLE, 100)]);
  assert.deepEqual(written.map((m) => m.seq), [FIRST + 1], "s2 fits exactly; s1 and then s3 do not");
  assert.deepEqual(labels(spool), ["a", "s2"]);
  assert.equal(spool.bytes, 1000);
  assert.equal(spool.dropped, 2);
  assert.equal(await store.meta("dropped"), 2);
});

test("a message to keep evicts the newest spooled samples first, and only samples", async () => {
  const spool = new Spool(new MemoryStore(FIRST), 1000);
  await spool.write([item("k1", KEEP, 200), item("old", SAMPLE, 200), item("k2", KEEP, 200), item("mid", SAMPLE, 200), item("new", SAMPLE, 200)]);
  await spool.write([item("k3", KEEP, 300)]);
  assert.deepEqual(labels(spool), ["k1", "old", "k2", "k3"], "two of the newest samples made room for 300 bytes");
  assert.equal(spool.bytes, 900);
  assert.equal(spool.dropped, 2);
  assert.deepEqual(spool.seqs(), [FIRST, FIRST + 1, FIRST + 2, FIRST + 5]);
});

test("admit: the plan names the evicted seqs and the bytes after", () => {
  const spooled = [{ ...item("k", KEEP, 400), seq: 1 }, { ...item("s", SAMPLE, 300), seq: 2 }, { ...item("t", SAMPLE, 300), seq: 3 }];
  const plan = admit(spooled, 1000, 1000, [item("n", KEEP, 250)]);
  assert.deepEqual(plan.evict, [3]);
  assert.equal(plan.dropped, 1);
  assert.equal(plan.bytes, 950);
  assert.equal(plan.keep.length, 1);
  assert.equal(plan.keep[0].tier, KEEP);
  assert.deepEqual(admit(spooled, 1000, 1000, [item("x", SAMPLE, 100)]), { keep: [], evict: [], dropped: 1, bytes: 1000 },
    "a sample never evicts another");
});

test("a message to keep with `lean` gives up its heavy tail when eviction is not enough", async () => {
  const spool = new Spool(new MemoryStore(FIRST), 1000);
  await spool.write([item("k", KEEP, 700), item("s", SAMPLE, 100)]);
  const view = item("view", KEEP, 600, "<key>uiState</key><dict/>");
  const [written] = await spool.write([view]);
  assert.deepEqual(labels(spool), ["k", "view"]);
  assert.equal(written.tail, "<key>uiState</key><dict/>", "the screenshot left out");
  assert.equal(spool.bytes, 700 + messageBytes({ head: view.head, tail: view.lean }));
  assert.equal(spool.dropped, 1, "the sample evicted first");
  assert.match(spool.xml(written.seq), /<integer>\d+<\/integer><key>uiState<\/key><dict\/><\/event>/);
});

test("a message to keep that fits keeps its heavy tail", async () => {
  const spool = new Spool(new MemoryStore(FIRST), 1000);
  const view = item("view", KEEP, 600, "<key>lean</key>");
  const [written] = await spool.write([view]);
  assert.equal(written.tail, view.tail);
});

test("messages to keep are never dropped: they go in over the bound", async () => {
  const spool = new Spool(new MemoryStore(FIRST), 1000);
  await spool.write([item("a", KEEP, 900)]);
  await spool.write([item("b", KEEP, 300), item("c", KEEP, 300, "<key>lean</key>")]);
  assert.deepEqual(labels(spool), ["a", "b", "c"]);
  assert.ok(spool.bytes > 1000, `${spool.bytes} bytes`);
  assert.equal(spool.dropped, 0);
});

test("remove frees the bytes and deletes from the store", async () => {
  const store = new MemoryStore(FIRST);
  const spool = new Spool(store, 1000);
  await spool.write([item("a", KEEP, 100), item("b", SAMPLE, 200), item("c", KEEP, 300)]);
  spool.remove([FIRST + 1, FIRST + 7]);
  assert.deepEqual(spool.seqs(), [FIRST, FIRST + 2]);
  assert.equal(spool.bytes, 400);
  assert.equal(spool.xml(FIRST + 1), undefined, "settled: nothing to send");
  assert.deepEqual((await store.load()).entries.map((e) => e.seq), [FIRST, FIRST + 2]);
});

test("reload restores what the store holds, another tab's writes included, in seq order", async () => {
  const store = new MemoryStore(FIRST);
  const first = new Spool(store, 1000);
  await first.write([item("a", KEEP, 900)]);
  await first.write([item("s", SAMPLE, 200)]);  // dropped: counted in the store
  const other = new Spool(store, 1000);         // another tab, or the page after a reload
  await other.reload();
  await other.write([item("b", KEEP, 100)]);
  await first.reload();
  assert.deepEqual(first.seqs(), [FIRST, FIRST + 1]);
  assert.deepEqual(labels(first), ["a", "b"]);
  assert.equal(first.bytes, 1000);
  assert.equal(first.dropped, 1);
  assert.equal(first.xml(FIRST + 1), other.xml(FIRST + 1));
});

test("MemoryStore numbers from its first seq and keeps meta values", async () => {
  const store = new MemoryStore(5);
  const entries = [{ name: "event", head: "", tail: "" }, { name: "event", head: "", tail: "" }];
  await store.commit(entries, [], null);
  assert.deepEqual(entries.map((e) => e.seq), [5, 6]);
  await store.commit([], [5], 3);
  assert.deepEqual(await store.load(), { entries: [{ name: "event", head: "", tail: "", seq: 6 }], dropped: 3 });
  assert.deepEqual(await store.meta("device", { id: "web-1" }), { id: "web-1" });
  assert.deepEqual(await store.meta("device"), { id: "web-1" });
});

// The recorder does not wait for one write before the next (a hidden page's flush may come while the timer's write
// is still committing), so two writes may overlap; the bound must hold for samples all the same.
test("two overlapping writes keep the bound for samples and count each eviction once", async () => {
    const spool = new Spool(new MemoryStore(FIRST), 1000);
    await spool.write([item("k", KEEP, 800)]);
    await Promise.all([spool.write([item("s1", SAMPLE, 150)]), spool.write([item("s2", SAMPLE, 150)])]);
    assert.ok(spool.bytes <= 1000, `samples over the bound: ${spool.bytes} bytes`);
    const other = new Spool(new MemoryStore(FIRST), 1000);
    await other.write([item("k", KEEP, 700), item("s", SAMPLE, 300)]);
    await Promise.all([other.write([item("a", KEEP, 200)]), other.write([item("b", KEEP, 200)])]);
    assert.equal(other.dropped, 1, "one sample was evicted");
  });
