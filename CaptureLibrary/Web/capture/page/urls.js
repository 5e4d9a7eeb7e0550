// URLs in a page recording, made absolute (the replay has no base URL of its own, and `<base>` is never sent) and
// `javascript:` ones dropped on the phone already (the server drops them again by its allowlist).

const SCRIPT_SCHEMES = new Set(["javascript:", "vbscript:"]);

/** `value` resolved against `base`; a fragment (`#icon`, an SVG reference into the page itself) as it is; undefined for
 * a script URL or one that does not parse. */
export function absoluteURL(value, base) {
  const text = value.trim();
  if (text.startsWith("#")) return text;
  try {
    const url = new URL(text, base);
    return SCRIPT_SCHEMES.has(url.protocol) ? undefined : url.href;
  } catch {
    return undefined;
  }
}

/** A `srcset`: each candidate's URL absolute, its descriptor kept. A URL runs to white space (a `data:` URL's commas
 * are inside it), a candidate ends at a comma. */
export const absoluteSrcset = (value, base) =>
  value.replace(/(^|,)(\s*)(\S+)/g, (_, comma, space, url) => comma + space + (absoluteURL(url.replace(/,+$/, ""), base) ?? ""));

/** CSS text with every `url(…)` absolute (a script URL becomes `url("")`). Cheap when there is none: one search. */
export function absoluteCSS(text, base) {
  if (!/url\(/i.test(text)) return text;
  return text.replace(/url\(\s*(['"]?)(.*?)\1\s*\)/gi, (_, quote, url) => `url("${(absoluteURL(url, base) ?? "").replace(/"/g, "%22")}")`);
}
