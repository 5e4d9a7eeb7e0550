// The page's changes (MutationObserver), gathered and turned into one record per animation frame: nodes removed
// (`rm`), nodes added (`add`), attributes (`attr`) and text (`text`) changed. Each entry says what the node is *now*,
// not what happened to it, so that applying an entry twice, or to a snapshot that already has it, changes nothing;
// which is what lets the snapshot be taken in idle slices while the page goes on changing (the changes of that time
// are sent after it). Stylesheets whose rules changed (`css`) are read in idle time by the recorder, not here.
//
// Cost per frame: one pass over the frame's mutation records; per added node its serialisation (serializer.js); per
// changed attribute or text one walk to the document (its mask). A frame whose work passes its unit budget is
// answered with WHOLESALE: the page changed wholesale, and a new snapshot (in idle slices) is cheaper than the change.

import { attributeValue } from "./attributes.js";
import { ELEMENT, TEXT, parentOf } from "./serializer.js";

export const WHOLESALE = Symbol("wholesale");

const OBSERVED = { subtree: true, childList: true, attributes: true, characterData: true };
/** Attributes whose change changes how the element and everything in it is recorded: it is recorded again, whole. */
const RERECORDED = new Set(["data-mueval-mask", "data-mueval-unmask", "data-mueval-block", "contenteditable", "role", "type", "rel"]);

class OverBudget extends Error {}

const isSheetOwner = (node) => node.nodeType === ELEMENT && (node.localName === "style" || node.localName === "link");

export class Mutations {
  /** `serializer`: the recording's; `changed()`: called when records arrive (the recorder asks for a frame);
   * `maxRecords`: more records than this before a frame (a hidden page has none) are a wholesale change, not kept. */
  constructor(serializer, changed, maxRecords) {
    this.serializer = serializer;
    this.records = [];
    this.overflowed = false;
    this.observer = new MutationObserver((records) => {
      if (this.overflowed) return;
      for (const record of records) this.records.push(record);
      if (this.records.length > maxRecords) this.discard(true);
      changed();
    });
  }

  /** Observes a document or an open shadow root (a document's observer does not see into them). */
  observe(root) { this.observer.observe(root, OBSERVED); }

  stop() {
    this.observer.disconnect();
    this.records = [];
  }

  /** Forgets what changed so far: a snapshot about to be taken has it (`overflowed`: one must be). */
  discard(overflowed = false) {
    this.observer.takeRecords();
    this.records = [];
    this.overflowed = overflowed;
  }

  /** The changes since the last call: {record ({rm, add, attr, text}, or null when nothing recorded changed), sheets
   * (style and link elements to read again)}, or WHOLESALE when they need more than `budget` units. */
  take(budget) {
    if (this.overflowed) return WHOLESALE;
    const records = this.records.concat(this.observer.takeRecords());
    this.records = [];
    const s = this.serializer, sheets = new Set(s.changedSheets());
    const added = new Set(), removed = new Set(), attributes = new Map(), texts = new Set();
    for (const r of records) {
      const target = r.target;
      if (r.type === "characterData") {
        if (target.parentNode && isSheetOwner(target.parentNode)) sheets.add(target.parentNode); else texts.add(target);
      } else if (r.type === "attributes") {
        if (RERECORDED.has(r.attributeName)) added.add(target);
        else if (!attributes.has(target)) attributes.set(target, new Set([r.attributeName]));
        else attributes.get(target).add(r.attributeName);
      } else if (isSheetOwner(target)) {
        sheets.add(target);
      } else {
        for (const node of r.addedNodes) added.add(node);
        for (const node of r.removedNodes) removed.add(node);
      }
    }
    if (added.size > budget) return WHOLESALE;
    const units = { left: budget };
    try {
      const gone = [], add = this.added(added, units, gone);
      const emitted = new Set(add.map((entry) => entry.node));
      const record = {
        rm: [...removed].filter((n) => !emitted.has(n) && s.known(n) !== undefined).map((n) => s.known(n)).concat(gone),
        add: add.map(({ parent, before, json }) => ({ p: parent, b: before, n: json })),
        attr: this.attributes(attributes, units),
        text: this.texts(texts, units),
      };
      for (const key in record) if (!record[key].length) delete record[key];
      return { record: Object.keys(record).length ? record : null, sheets: [...sheets].filter((el) => s.known(el) !== undefined) };
    } catch (error) {
      if (error instanceof OverBudget) return WHOLESALE;
      throw error;
    }
  }

  /** Runs a serialiser's generator, counting its units against `units.left`. */
  spend(generator, units) {
    for (let r = generator.next(); ; r = generator.next()) {
      if (r.done) return r.value;
      if (--units.left < 0) throw new OverBudget();
    }
  }

  /** The added nodes that are recorded now, the outermost of them: each with its parent's id (an element or a shadow
   * root) and the id of the recorded sibling it goes before (null: last). A node whose id the replay has already is
   * moved there (or replaced: its attributes or mask changed); one recorded before and no longer (a link that is no
   * stylesheet now) goes into `gone`, forgotten. */
  added(added, units, gone) {
    const s = this.serializer, out = [], roots = new Map();
    for (const node of added) {
      const ctx = node.isConnected && node.parentNode && !insideAny(node, added) && s.context(node.parentNode);
      if (ctx) roots.set(node, ctx);
    }
    // A sibling added in this frame is a position only once it was sent: the replay applies the entries in order.
    const sent = new Set();
    for (const [node, ctx] of roots) {
      const json = this.spend(s.node(node, ctx), units);
      if (!json) {
        if (s.known(node) !== undefined) gone.push(s.forget(node));
        continue;
      }
      let before = node.nextSibling;
      while (before && (s.known(before) === undefined || (roots.has(before) && !sent.has(before)))) before = before.nextSibling;
      sent.add(node);
      out.push({ node, parent: s.known(node.parentNode), before: before ? s.known(before) : null, json });
    }
    return out;
  }

  /** `[[id, name, value or null]]`: the attributes' values as sent now (null: removed); one never sent is left out. */
  attributes(changed, units) {
    const s = this.serializer, out = [];
    for (const [el, names] of changed) {
      const id = s.known(el), ctx = id !== undefined && !s.boxes.has(el) && s.context(el.parentNode);
      if (!ctx) continue;
      const mode = s.inner(el, ctx).mode;
      for (const name of names) {
        if (--units.left < 0) throw new OverBudget();
        const value = el.getAttribute(name);
        const sent = value == null ? null : attributeValue(el, name, value, mode, el.ownerDocument?.baseURI);
        if (sent !== undefined) out.push([id, name, sent]);
      }
    }
    return out;
  }

  /** `[[id, text]]`: text nodes' text as sent now, masked in their place. */
  texts(changed, units) {
    const s = this.serializer, out = [];
    for (const node of changed) {
      const id = s.known(node), ctx = id !== undefined && node.nodeType === TEXT && node.parentNode && s.context(node.parentNode);
      if (!ctx) continue;
      if (--units.left < 0) throw new OverBudget();
      out.push([id, s.text(node.data, ctx)]);
    }
    return out;
  }
}

/** Whether an ancestor of `node` (across shadow roots) is in `nodes`: then `node` is recorded as part of it. */
function insideAny(node, nodes) {
  for (let at = parentOf(node); at; at = parentOf(at)) if (nodes.has(at)) return true;
  return false;
}
