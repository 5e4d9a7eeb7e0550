// Property-list values as docs/PROTOCOL.md writes them: the one XML escaping, values to elements, and the server's
// replies (<welcome>, <ack>, <error>) back to objects.

const ESCAPED = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;" };

/** The one escaping helper: markup characters, CR kept as a reference, characters XML cannot carry (control
 * characters other than tab and newline, U+FFFE, U+FFFF, lone surrogates) replaced by U+FFFD. Most texts (keys, class
 * names) have none of them: one test answers those. */
const SPECIAL = /[&<>\r\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff\ud800-\udfff]/;
export const escapeXML = (value) => {
  const text = String(value);
  return !SPECIAL.test(text) ? text : text
    .replace(/[&<>\r\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, (c) => ESCAPED[c] ?? "\ufffd")
    .replace(/[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]/g, (c) => (c.length === 2 ? c : "\ufffd"));
};

/** Bytes as base64, in slices (String.fromCharCode takes a bounded number of arguments). */
export function base64(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

/** A JavaScript value as a plist element: whole numbers as <integer>, others as <real>, bytes as <data>. */
export const encodeValue = (value) => finish(valueSteps(value));

/** `<key>`/value pairs of an object's own fields; null, undefined and function fields are left out. */
export const encodeFields = (object) => finish(fieldsSteps(object));

/** encodeFields in steps: a generator that yields before each dict and array it writes, so that a large event (a view's
 * UI state tree) is encoded in idle slices (idle.js's inIdle); it returns encodeFields' text. */
export function* fieldsSteps(object) {
  let text = "";
  for (const key in object) {
    const value = object[key];
    if (value != null && typeof value !== "function") text += `<key>${escapeXML(key)}</key>${yield* valueSteps(value)}`;
  }
  return text;
}

function* valueSteps(value) {
  if (typeof value === "string") return `<string>${escapeXML(value)}</string>`;
  if (typeof value === "boolean") return value ? "<true/>" : "<false/>";
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "<real>nan</real>";
    if (!Number.isFinite(value)) return value > 0 ? "<real>inf</real>" : "<real>-inf</real>";
    return Number.isSafeInteger(value) ? `<integer>${value}</integer>` : `<real>${value}</real>`;
  }
  if (value instanceof Uint8Array) return `<data>${base64(value)}</data>`;
  if (value instanceof Date) return `<date>${value.toISOString()}</date>`;
  if (Array.isArray(value)) {
    yield;
    let text = "";
    for (const item of value) text += yield* valueSteps(item);
    return value.length ? `<array>${text}</array>` : "<array/>";
  }
  if (value && typeof value === "object") {
    yield;
    return `<dict>${yield* fieldsSteps(value)}</dict>`;
  }
  return `<string>${escapeXML(value)}</string>`;
}

/** A generator run to its end at once. */
const finish = (steps) => {
  for (let r = steps.next(); ; r = steps.next()) if (r.done) return r.value;
};

// ---------------------------------------------------------------- reading the server's replies

// Written here rather than with DOMParser: the replies are a handful of plist shapes, a document per ack would cost
// more than the ack, and the reader then runs (and is tested) where there is no DOM.

const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const unescapeXML = (text) => text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, name) => {
  if (name[0] !== "#") return ENTITIES[name.toLowerCase()];
  const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
  return code <= 0x10ffff ? String.fromCodePoint(code) : "\ufffd";
});

/** Tags and text of one message, as a cursor over tokens. */
function tokens(xml) {
  const list = [];
  for (const m of xml.matchAll(/<(\/?)([A-Za-z]+)\s*(\/?)>|([^<]+)/g)) {
    if (m[4] !== undefined) list.push({ text: m[4] });
    else list.push({ name: m[2], close: m[1] === "/", empty: m[3] === "/" });
  }
  let at = 0;
  return { peek: () => list[at], next: () => list[at++] };
}

class PlistSyntaxError extends Error {}

function text(cursor, name) {
  let value = "";
  for (let t = cursor.next(); ; t = cursor.next()) {
    if (!t) throw new PlistSyntaxError(`<${name}> is not closed`);
    if (t.text !== undefined) value += t.text;
    else if (t.close && t.name === name) return unescapeXML(value);
    else throw new PlistSyntaxError(`<${t.name}> inside <${name}>`);
  }
}

function value(cursor) {
  let t = cursor.next();
  while (t?.text !== undefined && !t.text.trim()) t = cursor.next();
  if (!t || t.close || t.text !== undefined) throw new PlistSyntaxError("a value was expected");
  if (t.empty) {
    switch (t.name) {
      case "true": return true;
      case "false": return false;
      case "array": return [];
      case "dict": return {};
      case "string": return "";
      default: throw new PlistSyntaxError(`<${t.name}/> is no value`);
    }
  }
  switch (t.name) {
    case "integer": case "real": {
      const s = text(cursor, t.name).trim();
      return s === "nan" ? NaN : s === "inf" ? Infinity : s === "-inf" ? -Infinity : Number(s);
    }
    case "string": case "date": case "data": return text(cursor, t.name);
    case "array": {
      const out = [];
      while (!closes(cursor, "array")) out.push(value(cursor));
      return out;
    }
    case "dict": return fields(cursor, "dict");
    default: throw new PlistSyntaxError(`<${t.name}> is no value`);
  }
}

/** Whether the next token (blank text skipped) closes `name`; consumes it if so. */
function closes(cursor, name) {
  while (cursor.peek()?.text !== undefined && !cursor.peek().text.trim()) cursor.next();
  const t = cursor.peek();
  if (!t) throw new PlistSyntaxError(`<${name}> is not closed`);
  if (t.close && t.name === name) { cursor.next(); return true; }
  return false;
}

/** `<key>`/value pairs up to the closing tag of `name`. */
function fields(cursor, name) {
  const out = {};
  while (!closes(cursor, name)) {
    const key = cursor.next();
    if (key?.name !== "key" || key.close || key.empty) throw new PlistSyntaxError(`a <key> was expected in <${name}>`);
    out[text(cursor, "key")] = value(cursor);
  }
  return out;
}

/** The server's replies in one text frame: each message read on its own, so that a bad one spoils none other.
 * An ack in muevald's exact form (most replies) is read with one regular expression. */
export function parseReplies(frame) {
  const out = [];
  for (const m of frame.matchAll(/<(welcome|ack|error)\b[^>]*?(?:\/>|>[\s\S]*?<\/\1>)/g)) {
    const ack = /^<ack><key>seq<\/key><integer>(\d+)<\/integer><\/ack>$/.exec(m[0]);
    if (ack) { out.push({ type: "ack", seq: Number(ack[1]) }); continue; }
    if (m[0].endsWith("/>")) { out.push({ type: m[1] }); continue; }
    try {
      const cursor = tokens(m[0]);
      cursor.next();  // the message's own tag
      out.push({ type: m[1], ...fields(cursor, m[1]) });
    } catch (error) {
      if (!(error instanceof PlistSyntaxError)) throw error;
    }
  }
  return out;
}
