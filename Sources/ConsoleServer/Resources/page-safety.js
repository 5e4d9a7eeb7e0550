// The page replay's own wall (docs/CONSOLE.md, "The page replayed"): muevald sanitises every page record by an
// allowlist before storing and again before serving it, and the frame's sandbox and CSP stop scripts; this is the
// third check, in the builder itself, so that a record that slipped past the server (an old file, a bug) still
// creates no element that runs, embeds, redirects or fetches on its own, and no attribute that does.
//
// Pure functions of strings: the builder (page-nodes.js) asks before it creates an element or sets an attribute.

export const HTML_NS = "http://www.w3.org/1999/xhtml";
export const SVG_NS = "http://www.w3.org/2000/svg";
export const XLINK_NS = "http://www.w3.org/1999/xlink";

/** Never created, whatever a record says (nor anything in them): what runs, embeds another document or plug-in,
 *  redirects, or sets a URL by animation (SVG's `set` and `animate` can set `href` to a script URL). */
const FORBIDDEN_TAGS = new Set([
  "script", "iframe", "frame", "frameset", "object", "embed", "applet", "base", "meta", "noscript", "template",
  "portal", "fencedframe", "param", "xmp", "plaintext", "math",
  "animate", "animatemotion", "animatetransform", "set", "discard", "handler", "listener",
]);

/** Attributes dropped whatever their value: markup as a string, form targets, fetches nobody asked for, what moves
 *  the focus out of the console's note field (`autofocus`) or binds its keys, a nonce. */
const DROPPED_ATTRIBUTES = new Set([
  "srcdoc", "action", "formaction", "formtarget", "formmethod", "formenctype", "http-equiv", "ping", "nonce",
  "integrity", "autofocus", "accesskey", "attributename", "is", "popovertarget", "popovertargetaction", "target",
  "xlink:actuate", "xlink:show",
]);

/** Attributes holding a URL, and lists of them. */
const URL_ATTRIBUTES = new Set([
  "href", "src", "xlink:href", "poster", "background", "cite", "longdesc", "data", "lowsrc", "dynsrc", "codebase",
  "manifest", "usemap", "profile", "itemtype", "icon",
]);
const SRCSET_ATTRIBUTES = new Set(["srcset", "imagesrcset"]);
/** Attributes whose URL the browser fetches as it renders: only from the origins `replay.remote_assets` allows. */
const FETCHED = new Set(["src", "srcset", "imagesrcset", "poster", "background", "lowsrc", "dynsrc"]);

/** Pixel images a `data:` URL may carry (as the server's PageURLs): SVG is a document and can hold script. */
const DATA_IMAGES = new Set(["image/png", "image/jpeg", "image/jpg", "image/gif", "image/webp", "image/avif", "image/bmp",
  "image/x-icon", "image/vnd.microsoft.icon"]);

/** XML's Name in ASCII, as the server's allowlist: setAttribute refuses the rest (it would throw). */
const ATTRIBUTE_NAME = /^[A-Za-z_:][A-Za-z0-9_:.-]{0,127}$/;

/** Whether an element of this tag (any namespace, any case) may be created. */
export function tagAllowed(tag) {
  return typeof tag === "string" && tag.length > 0 && !FORBIDDEN_TAGS.has(tag.toLowerCase());
}

/** A URL as a browser reads it: tabs and newlines anywhere and control characters and spaces around it ignored
 *  (`java\nscript:` is javascript:). */
const clean = (value) => String(value).replace(/[\t\n\r]/g, "").replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "");

/** The kind of URL: "fragment", "http", "image" (a pixel data: URL), "contact" (mailto:, tel:) or null (anything else:
 *  javascript:, data:text/html, data:image/svg+xml, blob:, file:, a relative URL, which the phone made absolute). */
export function urlKind(value) {
  const text = clean(value);
  if (text.startsWith("#")) return "fragment";
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(text)?.[1]?.toLowerCase();
  if ((scheme === "http" || scheme === "https") && text.slice(scheme.length + 1).startsWith("//")) return "http";
  if (scheme === "data") return DATA_IMAGES.has(text.slice(5).split(/[;,]/)[0].toLowerCase()) ? "image" : null;
  if (scheme === "mailto" || scheme === "tel") return "contact";
  return null;
}

/** What the lab's browser may fetch (`remoteAssets` of GET /api/sessions/ID/page): "all" (any http(s) origin), or a
 *  list of origins ("https://app.example.org"); anything else allows none. */
export class RemoteAssets {
  constructor(setting) {
    this.all = setting === "all";
    this.origins = new Set(Array.isArray(setting) ? setting.map((origin) => originOf(origin)).filter(Boolean) : []);
  }

  /** Whether an http(s) URL may be fetched. */
  allows(url) {
    if (this.all) return true;
    const origin = originOf(url);
    return origin !== null && this.origins.has(origin);
  }
}

function originOf(url) {
  try {
    const parsed = new URL(clean(url));
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.origin : null;
  } catch {
    return null;
  }
}

/** Whether a URL a page fetches to draw itself may be used: a fragment, a pixel data: URL, or http(s) on an allowed
 *  origin. */
export function fetchable(url, remote) {
  const kind = urlKind(url);
  return kind === "fragment" || kind === "image" || (kind === "http" && remote.allows(url));
}

/** A srcset whose every candidate is fetchable, else null (a candidate's URL runs to white space). */
function srcsetValue(value, remote) {
  const candidates = String(value).split(/,\s+/).map((candidate) => candidate.trim()).filter(Boolean);
  if (!candidates.length) return null;
  return candidates.every((candidate) => fetchable(candidate.split(/\s+/)[0], remote)) ? value : null;
}

/**
 * The value attribute `name` may be set to on an element of `tag` in namespace `ns`, or null (not set: removed).
 * `remote`: a RemoteAssets. Handlers, dropped names and unsafe URLs go; what is fetched must be on an allowed origin.
 */
export function attributeValue(ns, tag, name, value, remote) {
  if (typeof name !== "string" || !ATTRIBUTE_NAME.test(name) || value === null || value === undefined) return null;
  const key = name.toLowerCase();
  if (key.startsWith("on") || DROPPED_ATTRIBUTES.has(key) || key.startsWith("xmlns")) return null;
  const text = String(value);
  if (SRCSET_ATTRIBUTES.has(key)) return srcsetValue(text, remote);
  if (!URL_ATTRIBUTES.has(key)) return text;
  const kind = urlKind(text);
  if (kind === null) return null;
  const link = (tag === "a" || tag === "area") && key.endsWith("href");
  if (link) return kind === "image" ? null : text;   // never followed (the frame is inert), kept for how a link looks
  if (kind === "contact") return null;
  // SVG's href (image, use, feImage, pattern…) fetches; an HTML element's other URLs that are not in FETCHED do not.
  const fetched = FETCHED.has(key) || (ns === SVG_NS && key.endsWith("href"));
  return !fetched || fetchable(text, remote) ? text : null;
}

/** Whether the element shows an image that `remote` refuses (one named, none usable): the builder draws an empty box
 *  there instead, so that no request is made. `attributes`: the record's `{name: value}`. */
export function blockedImage(ns, tag, attributes, remote) {
  const usable = (url) => typeof url === "string" && url !== "" && fetchable(url, remote);
  const named = (url) => typeof url === "string" && url !== "";
  if (ns === HTML_NS && tag === "img") {
    const { src, srcset } = attributes;
    if (!named(src) && !named(srcset)) return false;
    return !usable(src) && !(named(srcset) && srcsetValue(srcset, remote) !== null);
  }
  if (ns === SVG_NS && tag === "image") {
    const href = attributes.href ?? attributes["xlink:href"];
    return named(href) && !usable(href);
  }
  return false;
}
