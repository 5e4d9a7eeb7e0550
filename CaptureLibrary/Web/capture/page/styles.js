// Stylesheets through the CSSOM: a readable sheet's rules as text, so that the replay needs no network for them and
// has the rules a CSS-in-JS library inserted with insertRule (which leave their <style> element empty). A sheet of
// another origin without CORS cannot be read by the page: it is sent as its URL. Reading is a generator yielding once
// per rule: a framework's thousands of rules (each `cssText` is the browser serialising the rule again, a few µs)
// spread over idle slices like the nodes.

import { absoluteCSS } from "./urls.js";

/** The sheet's rules, or null when the page may not read them (another origin without CORS, not loaded yet). */
export function rulesOf(sheet) {
  try {
    return sheet?.cssRules ?? null;
  } catch {
    return null;
  }
}

/** How many rules a sheet has now (-1: unreadable): a change of it is what insertRule and deleteRule leave behind. */
export const ruleCount = (sheet) => rulesOf(sheet)?.length ?? -1;

/** A readable sheet's text, or null: its rules' text, URLs absolute against the sheet's own; an @import of a readable
 * sheet replaced by that sheet's rules (in an @media block for its media), an unreadable one kept as its URL. */
export function* sheetText(sheet, base, depth = 0) {
  const rules = rulesOf(sheet);
  if (!rules) return null;
  const own = sheet.href || base;
  let text = "";
  for (const rule of rules) {
    yield;
    const imported = rule.styleSheet && depth < 4 ? yield* sheetText(rule.styleSheet, own, depth + 1) : null;
    const media = rule.media?.mediaText;
    if (imported == null) text += absoluteCSS(rule.cssText, own);
    else text += media ? `@media ${media}{${imported}}` : imported;
  }
  return text;
}

/** The text of a document's or shadow root's constructed sheets (`adoptedStyleSheets`, Lit's components), or undefined. */
export function* adoptedText(holder, base) {
  const sheets = holder.adoptedStyleSheets;
  if (!sheets?.length) return undefined;
  let text = "";
  for (const sheet of sheets) text += (yield* sheetText(sheet, base)) ?? "";
  return text;
}
