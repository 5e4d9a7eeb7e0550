// Reading the DOM: what an element is in UIKit's terms (what the analysis' checks know), what it is called, and its
// text under the masking policy. Plain functions of an element's attributes, so that the tests give them plain objects.

/** Elements the tree never enters. */
export const SKIPPED_TAGS = new Set(["script", "style", "template", "noscript", "head", "meta", "link", "br", "wbr", "source", "track"]);
/** Elements whose text labels something: kept under the "inputs" mask. */
export const LABEL_TAGS = new Set(["h1", "h2", "h3", "h4", "h5", "h6", "label", "legend", "th", "caption", "figcaption", "summary", "option", "dt"]);
/** Classes the tree does not look into. */
export const LEAF_CLASSES = new Set(["UIButton", "UITextField", "UISearchBar", "UITextView", "UISwitch", "UISlider", "UIImageView", "UIWebView"]);
/** What a finger may aim at: a tap on none of these is a tap on nothing (`recognized` false). */
export const INTERACTIVE = "a[href],button,input,select,textarea,summary,label,[role=button],[role=link],[role=tab],[role=menuitem]," +
  "[role=checkbox],[role=switch],[role=slider],[onclick],[tabindex],[contenteditable]";
/** What a click acts on: a control (an `action` event). */
export const CONTROLS = "a[href],button,input,select,summary,[role=button],[role=link],[role=tab],[role=menuitem]";

const BUTTON_INPUTS = new Set(["button", "submit", "reset", "image", "file", "color"]);

/** Rounded to `step` (half a CSS pixel by default: what a finger can tell apart). */
export const round = (value, step = 0.5) => Math.round(value / step) * step;

/** A DOM element as {className (a UIKit class, null for a plain container), tag, role}, or null (never shown). */
export function classify(el) {
  const tag = el.localName, role = el.getAttribute("role"), type = (el.getAttribute("type") || "").toLowerCase();
  const kind = (className) => ({ className, tag, role: role || undefined });
  switch (role) {
    case "button": case "link": case "menuitem": case "option": return kind("UIButton");
    case "tab": return kind("UITabBarButton");
    case "checkbox": case "switch": case "radio": return kind("UISwitch");
    case "slider": return kind("UISlider");
    case "searchbox": return kind("UISearchBar");
    case "textbox": return kind(el.getAttribute("aria-multiline") === "true" ? "UITextView" : "UITextField");
    case "img": return kind("UIImageView");
  }
  if (el.isContentEditable && !el.parentElement?.isContentEditable) return kind("UITextView");
  switch (tag) {
    case "button": case "summary": case "select": return kind("UIButton");
    case "a":
      if (!el.hasAttribute("href")) break;
      // A link inside running text is read, not aimed at: no hit target of its own.
      return kind([...(el.parentElement?.childNodes || [])].some((n) => n.nodeType === 3 && n.data.trim()) ? "UILabel" : "UIButton");
    case "input":
      if (BUTTON_INPUTS.has(type)) return kind("UIButton");
      if (type === "checkbox" || type === "radio") return kind("UISwitch");
      if (type === "range") return kind("UISlider");
      if (type === "search") return kind("UISearchBar");
      return type === "hidden" ? null : kind("UITextField");
    case "textarea": return kind("UITextView");
    case "img": case "svg": case "canvas": case "video": case "picture": return kind("UIImageView");
    case "iframe": return kind("UIWebView");
    case "ul": case "ol": case "table": return kind("UITableView");
    case "li": case "tr": return kind("UITableViewCell");
  }
  return kind(null);
}

/** The masking mode under an element: its own data-mueval-unmask ("none") or data-mueval-mask ("all"), else `inherited`. */
export function maskOf(el, inherited) {
  if (el.hasAttribute("data-mueval-unmask")) return "none";
  if (el.hasAttribute("data-mueval-mask")) return "all";
  return inherited;
}

/** Classes whose text is read, not a control's title. */
const READ_CLASSES = new Set(["UILabel", "UITableViewCell", "UITableView"]);

/** Whether an element's own text labels something (a control's title, a heading, a LABEL_TAGS element): such text is
 * kept under the "inputs" mask. */
export function labels(el) {
  if (LABEL_TAGS.has(el.localName) || el.getAttribute("role") === "heading") return true;
  const kind = classify(el);
  return !!kind?.className && !READ_CLASSES.has(kind.className);
}

/** Text replaced by its shape: letters → x (X), digits → 9, the rest (spaces, punctuation) kept. */
export const shape = (text) => text.replace(/[\p{L}\p{N}]/gu, (c) => (/\p{Lu}/u.test(c) ? "X" : /\p{L}/u.test(c) ? "x" : "9"));

/** Text under the masking mode: `label` is a control's label or a heading (kept under "inputs"). */
export const masked = (text, mode, label) => (!text ? undefined : mode === "none" || (mode === "inputs" && label) ? text : shape(text));

/** White space collapsed, at most 200 characters. */
export const collapse = (text) => text.replace(/\s+/g, " ").trim().slice(0, 200);

/** An element's own text (its text nodes, not its children's). */
export const ownText = (el) => collapse([...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.data).join(" "));

/** What a control is called: its label, never its value (an editor's text, a contenteditable's or a textbox role's,
 * is what was typed into it). */
export function controlTitle(el) {
  const aria = el.getAttribute("aria-label") || el.getAttribute("title") || el.getAttribute("alt");
  if (aria) return collapse(aria);
  const label = el.labels?.[0] ? collapse(el.labels[0].textContent) : "";
  if (el.localName === "input") return ["button", "submit", "reset"].includes(el.type) ? collapse(el.value || el.type) : label;
  if (el.localName === "select" || el.localName === "textarea") return label;
  if (el.isContentEditable || ["textbox", "searchbox"].includes(el.getAttribute("role"))) return label;
  return collapse(el.textContent);
}

/** A rectangle in CSS pixels, rounded. */
export const frameOf = (rect) => ({ height: round(rect.height), width: round(rect.width), x: round(rect.left), y: round(rect.top) });

/** `{className, tag, id, title, frame}` of an element, as a touch's `target` or an action's `sender` names it. */
export function describe(el, mode, withFrame = true) {
  const kind = classify(el) || { className: "UIView" };
  const m = maskOf(el.closest("[data-mueval-mask],[data-mueval-unmask]") || el, mode);
  const control = !!kind.className && !READ_CLASSES.has(kind.className);
  return {
    className: kind.className || "UIView", tag: kind.tag, id: el.id || undefined,
    title: masked(control ? controlTitle(el) : ownText(el), m, control || LABEL_TAGS.has(el.localName)),
    frame: withFrame ? frameOf(el.getBoundingClientRect()) : undefined,
  };
}
