// The page recording's tests' harness: a DomRecorder over the fake DOM whose records are kept as the capture would
// send them (through JSON), and a replay of those records on plain objects, to compare with a fresh snapshot of the
// page: what a replay rebuilds must be what the page is. Not a test file itself.

import { PAGE } from "../../CaptureLibrary/Web/capture/constants.js";
import { DomRecorder } from "../../CaptureLibrary/Web/capture/page/dom-recorder.js";
import { h, install } from "./fake-dom.js";

export const tick = () => new Promise((resolve) => setTimeout(resolve, 2));

/** Starts recording a page `build(doc)` made; resolves after the first snapshot. `each(recorder)` runs after each of
 * its idle slices. */
export async function recording(build = () => {}, { mask = "inputs", skip = () => false, limits = {}, each } = {}) {
  const env = install();
  build(env.doc);
  const records = [], spool = { dropped: 0, room: true };
  const recorder = new DomRecorder({
    mask, skip, spool: () => spool, limits: { ...PAGE, ...limits },
    emit: (cls, json, tier) => records.push({ cls, tier, json, record: JSON.parse(json) }),
    problem: (text) => { throw new Error(text); },
  });
  recorder.start();
  const idsAtStart = recorder.serializer.next - 1;
  await env.idle(50, () => each?.(recorder));
  return {
    ...env, recorder, records, spool, idsAtStart,
    /** Lets the observer report, runs the frame and the idle work after it. */
    async settle() { await tick(); env.frame(); await env.idle(); },
    of: (cls) => records.filter((r) => r.cls === cls).map((r) => r.record),
    /** The page as the records rebuild it, and the page as a fresh snapshot (same ids) sees it. */
    compare() {
      return { replayed: replay(records.map((r) => r.record)), live: freshSnapshot(recorder) };
    },
  };
}

function freshSnapshot(recorder) {
  const generator = recorder.serializer.document(document);
  for (let r = generator.next(); ; r = generator.next()) if (r.done) return r.value;
}

/** Applies snapshot and mutation records in order, as a replay would; returns the tree in the snapshot's shape. */
export function replay(list) {
  let root = null;
  const nodes = new Map(), parents = new Map();
  const register = (node, parent) => {
    nodes.set(node.i, node);
    parents.set(node.i, parent);
    for (const child of node.c || []) register(child, node);
    if (node.r) register(node.r, node);
  };
  const detach = (id) => {
    const parent = parents.get(id), node = nodes.get(id);
    if (!parent || !node || !parent.c) return;
    const at = parent.c.indexOf(node);
    if (at >= 0) parent.c.splice(at, 1);
    if (!parent.c.length) delete parent.c;
    parents.delete(id);
  };
  for (const record of list) {
    if (record.root) {
      root = structuredClone(record.root);
      nodes.clear();
      register(root, null);
      continue;
    }
    for (const id of record.rm || []) detach(id);
    for (const { p, b, n } of record.add || []) {
      const parent = nodes.get(p);
      if (!parent) continue;
      detach(n.i);
      const node = structuredClone(n);
      register(node, parent);
      parent.c ??= [];
      const at = b == null ? -1 : parent.c.findIndex((c) => c.i === b);
      parent.c.splice(at < 0 ? parent.c.length : at, 0, node);
    }
    for (const [id, name, value] of record.attr || []) {
      const node = nodes.get(id);
      if (value === null) { delete node.a[name]; if (!Object.keys(node.a).length) delete node.a; } else (node.a ??= {})[name] = value;
    }
    for (const [id, text] of record.text || []) nodes.get(id).x = text;
    for (const [id, css] of record.css || []) nodes.get(id).css = css;
  }
  return root;
}

/** A page of 60 rows recorded in slices of 20 while it changes under the walk (a walked node moved to the unwalked
 * end, an unwalked one into the walked part, a removal, an attribute, a text, an insertion), settled: for the recorder's
 * tests and the console builder's, which must both end at the page as it is. */
export async function recordingChangedWhileWalked() {
  const rows = [];
  let slices = 0;
  const page = await recording((doc) => {
    for (let i = 0; i < 60; i++) doc.body.append(h(doc, "div", { id: `r${i}` }, h(doc, "span", {}, `row ${i}`)));
    rows.push(...doc.body.childNodes);
  }, { mask: "none", limits: { sliceUnits: 20 }, each: () => {
    slices++;
    const doc = globalThis.document;
    if (slices === 1) doc.body.appendChild(rows[0]);
    if (slices === 2) doc.body.insertBefore(rows[59], rows[1]);
    if (slices === 3) { rows[30].remove(); rows[2].setAttribute("class", "x"); rows[40].childNodes[0].childNodes[0].data = "changed"; }
    if (slices === 4) doc.body.insertBefore(h(doc, "p", {}, "new"), rows[10]);
  } });
  await page.settle();
  return { page, slices };
}
