// Page records as the console gets them (docs/CONSOLE.md, "The page replayed"): from GET /api/sessions/ID/page as
// `{id, t, class, dom}` with `dom` parsed, and on the live WebSocket as stored events whose payload holds `dom` as a
// JSON string (and `assets`, the stylesheets it names as `$data` references). Stylesheets stored apart are named in a
// record as `{"$asset": SHA}` where their text would be: assetRefs lists them, so that they are fetched first.

/** The event classes of a page recording (muevald's PageRecordClass; not in vocabulary.js's EventClass). */
export const PageClass = Object.freeze({
  snapshot: "DOMSnapshot", mutations: "DOMMutations", scroll: "DOMScroll", viewport: "DOMViewport", focus: "DOMFocus",
});
const CLASSES = new Set(Object.values(PageClass));

export const isPageClass = (name) => CLASSES.has(name);

/** A live event (`{id, class, timestamp, payload: {dom}}`) as a record, or null: another class, or a record that
 *  could not be stored (`invalid`, no `dom`): the replay sees a gap there. */
export function recordOfEvent(event) {
  if (!event || !CLASSES.has(event.class)) return null;
  let dom = event.payload?.dom;
  if (typeof dom === "string") {
    try { dom = JSON.parse(dom); } catch { return null; }
  }
  if (!dom || typeof dom !== "object" || Array.isArray(dom)) return null;
  return { id: event.id, t: event.timestamp, class: event.class, dom };
}

/** The SHA-256 an asset reference names (lowercase hex), or null for anything else (css as text). */
export function assetSHA(value) {
  if (!value || typeof value !== "object" || typeof value.$asset !== "string") return null;
  return /^[0-9a-fA-F]{64}$/.test(value.$asset) ? value.$asset.toLowerCase() : null;
}

/** Every asset the record's css values name: the document's and shadow roots' css, style and link elements' css in
 *  the snapshot's tree and in added nodes, and a mutation's `css` entries. A walk without recursion. */
export function assetRefs(record) {
  const found = new Set();
  const dom = record?.dom;
  if (!dom || typeof dom !== "object") return found;
  const note = (value) => { const sha = assetSHA(value); if (sha) found.add(sha); };
  const stack = [];
  if (dom.root) stack.push(dom.root);
  for (const entry of Array.isArray(dom.add) ? dom.add : []) if (entry?.n) stack.push(entry.n);
  for (const entry of Array.isArray(dom.css) ? dom.css : []) if (Array.isArray(entry)) note(entry[1]);
  while (stack.length) {
    const node = stack.pop();
    if (!node || typeof node !== "object") continue;
    note(node.css);
    if (Array.isArray(node.c)) for (const child of node.c) stack.push(child);
    if (node.r) stack.push(node.r);
  }
  return found;
}
