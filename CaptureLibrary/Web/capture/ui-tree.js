// The UI state tree of the page (thesis Listing 4.2 as the simulator writes it): a UIWindow of the viewport with the
// elements that matter (controls, images, text, lists, containers of several), frames in CSS pixels, text under the
// mask, fontSize from the computed style (docs/WEB-CAPTURE.md, "The UI state tree").

import { MAX_TREE_NODES } from "./constants.js";
import { LABEL_TAGS, LEAF_CLASSES, SKIPPED_TAGS, classify, collapse, controlTitle, frameOf, masked, maskOf, ownText, round } from "./dom.js";

const TRANSPARENT = "rgba(0, 0, 0, 0)";

/**
 * A generator: it yields between elements, so that the caller spreads the walk over idle time (`inIdle`), and returns
 * the tree. `mode`: the mask; `skip`: an element left out with everything in it (the overlay); `backgrounds`: a Map
 * it fills with node → background colour, for the wireframe (not sent).
 */
export function* uiTree(mode, skip, backgrounds) {
  const walk = { mode, skip, backgrounds, budget: MAX_TREE_NODES };
  const subviews = yield* children(walk, document.body, mode, false);
  const tree = { className: "UIWindow", frame: { height: innerHeight, width: innerWidth, x: 0, y: 0 }, subviews };
  const body = getComputedStyle(document.body).backgroundColor;
  backgrounds.set(tree, body === TRANSPARENT ? getComputedStyle(document.documentElement).backgroundColor : body);
  return tree;
}

function* children(walk, el, mode, inText) {
  const out = [];
  for (const child of [...el.children, ...(el.shadowRoot?.children || [])]) {
    if (child === walk.skip || SKIPPED_TAGS.has(child.localName) || walk.budget <= 0) continue;
    const node = yield* element(walk, child, mode, inText);
    if (Array.isArray(node)) out.push(...node); else if (node) out.push(node);
  }
  return out;
}

/** A node, the nodes of its children in its place (a container that is not worth one), or null. */
function* element(walk, el, inherited, inText) {
  yield;
  const kind = classify(el);
  if (!kind) return null;
  const style = getComputedStyle(el);
  if (style.display === "none" || el.hidden) return null;
  const mode = maskOf(el, inherited);
  const leaf = LEAF_CLASSES.has(kind.className);
  // A block of running text is one label: its whole text, its inline elements not listed again.
  const label = !leaf && !inText && ownText(el) ? collapse(el.textContent) : "";
  const subviews = leaf ? [] : yield* children(walk, el, mode, inText || !!label);
  if (style.visibility === "hidden") return subviews;
  const className = kind.className || (label ? "UILabel" : "UIView");
  const hasBackground = style.backgroundColor !== TRANSPARENT || style.borderTopWidth !== "0px";
  if ((inText && !leaf) || (className === "UIView" && subviews.length < 2 && !hasBackground && !el.id)) return subviews;
  const rect = el.getBoundingClientRect();
  if (rect.width === 0 && rect.height === 0 && !subviews.length) return null;
  walk.budget--;
  const node = { className, tag: kind.tag, role: kind.role, id: el.id || undefined, frame: frameOf(rect) };
  if (leaf && kind.className !== "UIImageView" && kind.className !== "UIWebView") {
    node.title = masked(controlTitle(el), mode, true);
    const placeholder = el.getAttribute("placeholder") ?? el.getAttribute("aria-placeholder");
    if (placeholder != null) node.placeholder = masked(collapse(placeholder), mode, true);
  } else if (label) node.text = masked(label, mode, LABEL_TAGS.has(kind.tag) || kind.role === "heading");
  if (node.title || node.text || node.placeholder) node.fontSize = round(parseFloat(style.fontSize) || 0, 0.1);
  if (el.getAttribute("data-mueval-view")) node.viewController = el.getAttribute("data-mueval-view");
  node.subviews = subviews;
  if (hasBackground) walk.backgrounds.set(node, style.backgroundColor);
  return node;
}
