// The replay index as the Replay page reads it (docs/CONSOLE.md, "The replay index"): a file read by byte ranges, its
// head first (times, the chunk table, marks), then the chunks of events the playhead and the rows in view need, a few
// ranges at most at a time. Every range asks for the file the head came from (If-Match): one made again meanwhile
// answers 412 (StaleIndex), and the page reads the head again. What the page draws is answered from what is loaded:
// the event at a time, an event's time, the screenshot, view and touches in effect at a moment.

const FIRST_READ = 256 * 1024;      // bytes of the index asked for first: the head, and often the first chunks
const READ_LIMIT = 4 * 1024 * 1024; // bytes per range asked for (muevald answers at most 4 MiB)
const IDLE_LANDING = 0.5;           // skipping a gap lands this long before the next event

const decoder = new TextDecoder();

/** First index whose value is greater than x (arrays ascending). */
export function upperBound(values, x, count = values.length, at = (i) => values[i]) {
  let low = 0;
  let high = count;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (at(mid) <= x) low = mid + 1; else high = mid;
  }
  return low;
}

/** The head changed under the page (the index was made again): it reads the head again. */
export class StaleIndex extends Error {}

export class ReplayIndex {
  /** `url`: GET /api/sessions/ID/replay/index; `onClass(name, number)`: a class name seen for the first time, and the
   *  number the chunks' class columns now use for it; `onLoaded()`, `onError(error)`: what `want` asked for is there,
   *  or could not be loaded. `fetch` is the browser's (tests give another). */
  constructor({ url, onClass = () => {}, onLoaded = () => {}, onError = () => {},
                fetch = (...args) => globalThis.fetch(...args) }) {
    Object.assign(this, { url, onClass, onLoaded, onError, fetch });
    this.head = null;          // the index's head, null until read
    this.etag = null;          // the file the head came from: every range asks for the same one
    this.base = 0;             // where the chunks begin in the file
    this.chunks = [];          // chunk number → {first, id, t, c (into classNames), s, screenshots, touches, views} once loaded
    this.loading = new Map();  // chunk number → the promise loading it
    this.chunkFirst = [];      // chunk number → its first event's index
    this.chunkT = [];          // chunk number → its earliest time
    this.classNames = [];      // every class name seen, the filter's values index it
    this.classNumbers = new Map();
  }

  /** Bytes [from, to) of the index file, of the version whose head the page holds (If-Match). */
  async readRange(from, to) {
    const headers = { Range: `bytes=${from}-${to - 1}` };
    if (this.etag) headers["If-Match"] = this.etag;
    const response = await this.fetch(this.url, { credentials: "same-origin", headers });
    if (response.status === 401) { location.reload(); throw new Error("Not logged in"); }
    if (response.status === 412) throw new StaleIndex("the replay index was made again");
    if (response.status !== 206 && response.status !== 200) {
      const text = await response.text();
      let message = `${response.status} ${response.statusText}`;
      try { message = JSON.parse(text).error ?? message; } catch { /* not JSON */ }
      throw new Error(message);
    }
    return { bytes: new Uint8Array(await response.arrayBuffer()), etag: response.headers.get("ETag") };
  }

  /** Reads the preamble and the head (and whatever chunks came with it); resets what was loaded. */
  async loadHead() {
    this.etag = null;
    const first = await this.readRange(0, FIRST_READ);
    const words = decoder.decode(first.bytes.subarray(0, 64)).trim().split(/\s+/);
    if (words[0] !== "mueval-replay-index" || words[1] !== "2") throw new Error("the replay index is of an unknown version");
    const headBytes = Number(words[3]);
    this.etag = first.etag;
    this.base = 64 + headBytes;
    let bytes = first.bytes;
    if (bytes.length < this.base) {
      const more = await this.readRange(bytes.length, this.base);
      const whole = new Uint8Array(this.base);
      whole.set(bytes);
      whole.set(more.bytes, bytes.length);
      bytes = whole;
    }
    const head = this.head = JSON.parse(decoder.decode(bytes.subarray(64, this.base)));
    this.chunks = new Array(head.chunks.length).fill(null);
    this.loading = new Map();
    this.chunkFirst = head.chunks.map((chunk) => chunk.first);
    this.chunkT = head.chunks.map((chunk) => chunk.t);
    this.classNames = [];
    this.classNumbers = new Map();
    for (const name of head.classes) this.classNumber(name);
    // The chunks that came whole with the head need no request of their own.
    head.chunks.forEach((entry, k) => {
      const at = this.base + entry.offset;
      if (at + entry.bytes <= bytes.length) this.addChunk(k, bytes.subarray(at, at + entry.bytes));
    });
  }

  classNumber(name) {
    let number = this.classNumbers.get(name);
    if (number === undefined) {
      number = this.classNames.length;
      this.classNames.push(name);
      this.classNumbers.set(name, number);
      this.onClass(name, number);
    }
    return number;
  }

  addChunk(k, bytes) {
    const chunk = JSON.parse(decoder.decode(bytes));
    const numbers = chunk.classes.map((name) => this.classNumber(name));
    chunk.c = Int32Array.from(chunk.c, (c) => numbers[c] ?? -1);
    this.chunks[k] = chunk;
  }

  /** Loads chunks from..to (inclusive) that are not loaded, a few ranges at most; resolves when they are. */
  ensureChunks(from, to) {
    from = Math.max(0, from);
    to = Math.min(this.chunks.length - 1, to);
    const waits = [];
    let batch = [];
    const flush = () => {
      if (!batch.length) return;
      const numbers = batch;
      batch = [];
      const start = this.head.chunks[numbers[0]].offset;
      const end = this.head.chunks[numbers[numbers.length - 1]].offset + this.head.chunks[numbers[numbers.length - 1]].bytes;
      const promise = this.readRange(this.base + start, this.base + end).then(({ bytes }) => {
        for (const k of numbers) {
          const entry = this.head.chunks[k];
          this.addChunk(k, bytes.subarray(entry.offset - start, entry.offset - start + entry.bytes));
          this.loading.delete(k);
        }
      }, (error) => {
        for (const k of numbers) this.loading.delete(k);
        throw error;
      });
      for (const k of numbers) this.loading.set(k, promise);
      waits.push(promise);
    };
    for (let k = from; k <= to; k++) {
      if (this.chunks[k]) { flush(); continue; }
      if (this.loading.has(k)) { flush(); waits.push(this.loading.get(k)); continue; }
      const entry = this.head.chunks[k];
      if (batch.length && entry.offset + entry.bytes - this.head.chunks[batch[0]].offset > READ_LIMIT) flush();
      batch.push(k);
    }
    flush();
    return Promise.all(waits);
  }

  /** Loads chunks in the background; `onLoaded` once they are there, when any had to be asked for. */
  want(from, to) {
    const before = this.loading.size;
    const done = this.ensureChunks(from, to);
    // Waiting only on loads another call started: that call reports their failure; this one must not leave it unhandled.
    if (this.loading.size === before) return void done.catch(() => {});
    done.then(() => this.onLoaded(), (error) => this.onError(error));
  }

  /** The chunk holding event `i`. */
  chunkOfEvent(i) { return upperBound(this.chunkFirst, i) - 1; }

  /** The chunk where the playhead at device time `now` is: the last that begins at or before it. */
  chunkOfTime(now) { return Math.max(0, upperBound(this.chunkT, now) - 1); }

  /** Event `i`'s device time, or undefined while its chunk loads. */
  eventTime(i) {
    const chunk = this.chunks[this.chunkOfEvent(i)];
    return chunk ? chunk.t[i - chunk.first] : undefined;
  }

  /** Index of the last event at or before device time `now` (-1: none); the chunk's first while it loads. */
  eventAt(now) {
    if (!this.chunks.length || now < this.chunkT[0]) return -1;
    const k = this.chunkOfTime(now);
    const chunk = this.chunks[k];
    if (!chunk) return this.chunkFirst[k];
    return chunk.first + upperBound(chunk.t, now) - 1;
  }

  /** The last item of `key` (screenshots, views) at or before `now`, else what was in effect where its chunk began. */
  lastAt(key, now) {
    const k = this.chunkOfTime(now);
    const items = this.chunks[k]?.[key] ?? [];
    const found = upperBound(items, now, items.length, (i) => items[i].t) - 1;
    if (found >= 0) return items[found];
    const entry = this.head.chunks[k];
    const before = key === "screenshots" ? entry?.screenshot : entry?.view;
    return before && before.t <= now ? before : null;
  }

  /** The screenshots to fetch ahead of `now` (two; undefined where none is known): the playhead chunk's next ones,
   *  else the next chunk's. */
  nextScreenshots(now) {
    const k = this.chunkOfTime(now);
    const shots = this.chunks[k]?.screenshots ?? [];
    const next = upperBound(shots, now, shots.length, (i) => shots[i].t);
    return [0, 1].map((ahead) => shots[next + ahead]?.sha ?? this.chunks[k + 1]?.screenshots[ahead]?.sha);
  }

  /** Touches in (from, now]: of the playhead's chunk and the one before it. */
  touchesBetween(from, now) {
    const k = this.chunkOfTime(now);
    const touches = [];
    for (const chunk of [this.chunks[k - 1], this.chunks[k]]) {
      for (const touch of chunk?.touches ?? []) if (touch.t > from && touch.t <= now) touches.push(touch);
    }
    return touches;
  }

  /** Where skipping idle time lands from device time `now`: just before the next event when no event came for more
   *  than `limit` seconds around `now`; null to play on (also while the chunks of the events around are loading). */
  idleLanding(now, limit) {
    const following = this.eventAt(now) + 1;
    if (following <= 0 || following >= this.head.events) return null;
    const previous = this.eventTime(following - 1);
    const upcoming = this.eventTime(following);
    if (previous === undefined || upcoming === undefined) return null;
    if (upcoming - previous > limit && now > previous + IDLE_LANDING && upcoming - now > IDLE_LANDING) {
      return upcoming - IDLE_LANDING;
    }
    return null;
  }
}
