// Checkpoints of a replayed page (docs/CONSOLE.md, "The page replayed"): a copy of the built document with what the
// builder knows of each node (its id, whether it is a stylesheet, a box, an image not fetched, a parent's own <style>),
// so that seeking back into a long stretch of changes after one snapshot starts from the nearest checkpoint instead of
// replaying every change since the snapshot (an hour of changes is a second of work; a checkpoint's copy a few ms).
//
// Copies are made node by node with cloneNode(false) (attributes, no children), never through markup; open shadow
// roots are attached again on the copy, which cloneNode does not do.

import { PageNodes } from "./page-nodes.js";

/** A copy of `node` and everything in it, owned by the same document, registered in `to` as `node` is in `from`
 *  (two PageNodes). */
export function copyTree(node, from, to) {
  const clone = node.cloneNode(false);
  note(node, clone, from, to);
  copyChildren(node, clone, from, to);
  if (node.nodeType === 1 && node.shadowRoot) {
    let root = null;
    try { root = clone.attachShadow({ mode: "open" }); } catch { /* the copy of a host always takes one */ }
    if (root) {
      note(node.shadowRoot, root, from, to);
      copyChildren(node.shadowRoot, root, from, to);
    }
  }
  return clone;
}

function copyChildren(node, clone, from, to) {
  const tail = from.tails.get(node);
  for (const child of node.childNodes) {
    const copy = copyTree(child, from, to);
    clone.appendChild(copy);
    if (child === tail) to.tails.set(clone, copy);
  }
}

function note(node, clone, from, to) {
  const id = from.ids.get(node);
  if (id !== undefined && from.byID.get(id) === node) to.register(id, clone);
  if (from.sheets.has(node)) to.sheets.add(clone);
  if (from.boxes.has(node)) to.boxes.add(clone);
  const image = from.images.get(node);
  if (image) to.images.set(clone, { ...image });
}

/** The builder's page and state now (scroll, focus and viewport waiting for settle() included), or null before a
 *  snapshot. */
export function checkpoint(builder) {
  if (!builder.built) return null;
  const doc = builder.doc;
  const nodes = new PageNodes(doc, { remote: builder.nodes.remote, css: builder.nodes.css });
  nodes.register(builder.nodes.ids.get(doc), doc);
  // The copy is of the page's own styles: the focus outline is put back after it, and drawn again on restoring.
  const focused = builder.focus?.el;
  const focus = builder.pending.focus !== undefined ? builder.pending.focus : builder.focusID();
  builder.dropFocus();
  const html = doc.documentElement ? copyTree(doc.documentElement, builder.nodes, nodes) : null;
  if (focused) builder.outline(focused);
  const { pending } = builder;
  return {
    html, nodes,
    state: {
      s: builder.s, n: builder.n, frozen: builder.frozen, applied: builder.applied, documentCSS: builder.documentCSS,
      viewport: pending.viewport ?? builder.viewport,
      scroll: new Map([...builder.positions, ...pending.scroll]),
      focus,
    },
  };
}

/** The builder as it was at `saved` (a checkpoint); the checkpoint stays usable. Scroll, focus and viewport wait
 *  for settle(), as after a snapshot. */
export function restore(builder, saved) {
  builder.clear();
  const nodes = builder.nodes;
  nodes.register(saved.nodes.ids.get(builder.doc), builder.doc);
  if (saved.html) builder.doc.appendChild(copyTree(saved.html, saved.nodes, nodes));
  const { state } = saved;
  Object.assign(builder, { s: state.s, n: state.n, frozen: state.frozen, applied: state.applied, documentCSS: state.documentCSS, built: true });
  builder.pending = { scroll: new Map(state.scroll), focus: state.focus, viewport: state.viewport };
}
