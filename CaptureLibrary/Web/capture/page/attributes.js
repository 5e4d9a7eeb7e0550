// What an element's attributes become in a page recording (docs/WEB-CAPTURE.md, "Page recording"): event handlers and
// script URLs dropped, form state dropped (a field's value never leaves the phone, nor its length; nor which option is
// selected or which box checked), text a person reads masked as dom.js masks a control's title, URLs absolute. What is
// left is sent as it is (class, id, data-*): the server sanitises again by an allowlist.

import { masked } from "../dom.js";
import { absoluteCSS, absoluteSrcset, absoluteURL } from "./urls.js";

/** Attributes whose value is text a person reads: masked as labels, as dom.js's controlTitle reads them. */
const TEXT = new Set(["title", "alt", "aria-label", "aria-description", "placeholder", "aria-placeholder", "label"]);
/** Attributes holding a URL, and lists of them. */
const URL_ATTRIBUTES = new Set(["src", "href", "xlink:href", "poster", "background", "cite", "longdesc", "data"]);
const SRCSETS = new Set(["srcset", "imagesrcset"]);
/** Never sent: markup as a string, fetches the replay would make by itself (ping, form targets), a CSP nonce. */
const DROPPED = new Set(["srcdoc", "ping", "action", "formaction", "nonce"]);
/** A form's state: what the tester typed or chose. */
const FORM_STATE = new Set(["value", "checked", "selected"]);
const FORM_TAGS = new Set(["input", "textarea", "select", "option", "button"]);
/** Inputs whose value is their label, not anything typed. */
const LABEL_VALUES = new Set(["button", "submit", "reset"]);

/** The value attribute `name` of `el` is sent with, or undefined (not sent). `mode`: the mask at the element (its own
 * data-mueval-mask counts); `base`: the document's base URL. */
export function attributeValue(el, name, value, mode, base) {
  const key = name.toLowerCase();
  if (key.startsWith("on") || DROPPED.has(key)) return undefined;
  const tag = el.localName;
  if (FORM_STATE.has(key) && FORM_TAGS.has(tag)) {
    const labelValue = key === "value" && tag === "input" && LABEL_VALUES.has((el.getAttribute("type") || "").toLowerCase());
    return labelValue ? masked(value, mode, true) ?? "" : undefined;
  }
  if (TEXT.has(key)) return masked(value, mode, true) ?? "";
  if (key === "style") return absoluteCSS(value, base);
  if (SRCSETS.has(key)) return absoluteSrcset(value, base);
  if (!URL_ATTRIBUTES.has(key)) return value;
  // Where a link goes can name what the masked text around it hides (mailto:, /users/jane): under a mask it is "#",
  // which renders the same.
  if ((tag === "a" || tag === "area") && key.endsWith("href") && mode !== "none" && !value.trim().startsWith("#")) return "#";
  return absoluteURL(value, base);
}

/** An element's attributes as sent ({name: value}), or undefined when none is. */
export function attributesOf(el, mode, base) {
  let out;
  for (const { name, value } of el.attributes) {
    const sent = attributeValue(el, name, value, mode, base);
    if (sent !== undefined) (out ??= {})[name] = sent;
  }
  return out;
}
