// A replay index file as muevald writes it (docs/CONSOLE.md, "The replay index": a 64-byte preamble, the head, the
// chunks), and a stand-in for GET /api/sessions/ID/replay/index answering byte ranges of it with its ETag, If-Match
// checked, with a log of what was asked. Not a test file.

export const INDEX_URL = "/api/sessions/7/replay/index";
export const T0 = 1767225600;       // device time of the first event

const encoder = new TextEncoder();

/** Chunks of `count` events, `perChunk` each: event i at `at(i)`, id 1000 + i, class `className(i)`, summary
 *  `summary(i)`; `extra(k)` adds to chunk k (screenshots, touches, views, and the entry's screenshot and view). */
export function chunksOf(count, { perChunk = 10, at = (i) => T0 + i, className = (i) => (i % 10 === 9 ? "Note" : "Tap"),
  summary = (i) => `event ${i}`, extra = () => ({}) } = {}) {
  const chunks = [];
  for (let first = 0; first < count; first += perChunk) {
    const events = [];
    for (let i = first; i < Math.min(count, first + perChunk); i++) {
      events.push({ id: 1000 + i, t: at(i), class: className(i), s: summary(i) });
    }
    chunks.push({ events, ...extra(chunks.length) });
  }
  return chunks;
}

/** The file's bytes. `classes`: the head's (all the chunks' names by default); `pad`: characters of an unknown field
 *  that lengthen the head (past the first read, none of the chunks comes with it). */
export function indexFile(chunks, { version = 2, classes, notes = [], problems = [], gaps = [], pad = 0,
  session = { id: "7", name: "Checkout", state: "stopped", started: T0 }, device = null } = {}) {
  const names = [...new Set(chunks.flatMap((chunk) => chunk.events.map((e) => e.class)))];
  const parts = [];
  const entries = [];
  let offset = 0;
  let first = 0;
  for (const chunk of chunks) {
    const own = [...new Set(chunk.events.map((e) => e.class))];
    const bytes = encoder.encode(JSON.stringify({
      first, classes: own, id: chunk.events.map((e) => e.id), t: chunk.events.map((e) => e.t),
      c: chunk.events.map((e) => own.indexOf(e.class)), s: chunk.events.map((e) => e.s),
      screenshots: chunk.screenshots ?? [], touches: chunk.touches ?? [], views: chunk.views ?? [],
    }));
    const times = chunk.events.map((e) => e.t);
    entries.push({ offset, bytes: bytes.length, first, count: chunk.events.length, t: Math.min(...times),
      end: Math.max(...times), screenshot: chunk.screenshot ?? null, view: chunk.view ?? null });
    parts.push(bytes);
    offset += bytes.length;
    first += chunk.events.length;
  }
  const times = chunks.flatMap((chunk) => chunk.events.map((e) => e.t));
  const head = encoder.encode(JSON.stringify({
    version, session, device, start: times.length ? Math.min(...times) : T0, end: times.length ? Math.max(...times) : T0,
    events: first, classes: classes ?? names, classesComplete: true, chunks: entries, problems, gaps, notes,
    ...(pad ? { pad: "x".repeat(pad) } : {}),
  }));
  const preamble = encoder.encode(`mueval-replay-index ${version} ${first} ${head.length}`.padEnd(63) + "\n");
  const file = new Uint8Array(64 + head.length + offset);
  file.set(preamble);
  file.set(head, 64);
  let at = 64 + head.length;
  for (const part of parts) { file.set(part, at); at += part.length; }
  return file;
}

/** Answers ranges of `file` as muevald does: at most 4 MiB, 206 with the ETag; 412 when If-Match names another
 *  version (`replace` makes the file again); `failWith`: a status answered to everything, with a JSON error. */
export function indexServer(file) {
  const server = { file, version: 1, log: [], failWith: null };
  server.replace = (next) => { server.file = next; server.version += 1; };
  server.fetch = async (url, init) => {
    if (url !== INDEX_URL || init.credentials !== "same-origin") throw new Error(`asked for ${url}`);
    const { Range: range, "If-Match": ifMatch } = init.headers;
    server.log.push(ifMatch === undefined ? { range } : { range, ifMatch });
    if (server.failWith) return new Response(JSON.stringify({ error: "the session is gone" }), { status: server.failWith });
    const etag = `"v${server.version}"`;
    if (ifMatch !== undefined && ifMatch !== etag) return new Response("", { status: 412 });
    const [from, to] = range.replace("bytes=", "").split("-").map(Number);
    const end = Math.min(to + 1, server.file.length, from + 4 * 1024 * 1024);
    return new Response(server.file.slice(from, end), { status: 206, headers: { ETag: etag } });
  };
  return server;
}

/** Until every load under way (and any it led to) has ended, then a turn for what waits on them. */
export async function settled(index) {
  const waited = new Set();
  for (;;) {
    const loads = [...new Set(index.loading.values())].filter((load) => !waited.has(load));
    if (!loads.length) break;
    for (const load of loads) waited.add(load);
    await Promise.allSettled(loads);
  }
  await new Promise((resolve) => setImmediate(resolve));
}
