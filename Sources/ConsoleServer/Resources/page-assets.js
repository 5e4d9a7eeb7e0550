// Stylesheets kept apart by muevald (a page's rules are sent again with every snapshot and stored once, named by
// their SHA-256): texts cached by that name, so that seeking anywhere in an hour-long session fetches each one once.
// They come in a page answer's `assets` map, or one at a time from GET /api/sessions/ID/blobs/SHA (the live stream).

import { assetRefs, assetSHA } from "./page-records.js";

const LIMIT = 32 * 1024 * 1024;   // characters kept; the least recently used go first (fetched again if named again)

export class AssetCache {
  /** `fetchText(sha)`: an asset's text from the server (a promise), for those no answer carried. */
  constructor({ fetchText = null, limit = LIMIT } = {}) {
    Object.assign(this, { fetchText, limit });
    this.texts = new Map();      // sha → css text, least recently used first
    this.size = 0;
    this.loading = new Map();    // sha → its fetch
  }

  /** Adds a page answer's `assets` ({sha: text}). */
  add(map) {
    for (const [sha, text] of Object.entries(map ?? {})) if (typeof text === "string") this.put(sha.toLowerCase(), text);
  }

  put(sha, text) {
    if (this.texts.has(sha)) return;
    this.texts.set(sha, text);
    this.size += text.length;
    while (this.size > this.limit && this.texts.size > 1) {
      const [oldest, old] = this.texts.entries().next().value;
      this.texts.delete(oldest);
      this.size -= old.length;
    }
  }

  has(sha) { return this.texts.has(sha); }

  /** A record's css value as text: itself, or the asset it names (marked used); "" for one not (yet) here. */
  css(value) {
    if (typeof value === "string") return value;
    const sha = assetSHA(value);
    const text = sha === null ? undefined : this.texts.get(sha);
    if (text === undefined) return "";
    this.texts.delete(sha);
    this.texts.set(sha, text);
    return text;
  }

  /** The assets these records name that are not here. */
  missing(records) {
    const out = new Set();
    for (const record of records) for (const sha of assetRefs(record)) if (!this.texts.has(sha)) out.add(sha);
    return [...out];
  }

  /** Fetches what these records name and is missing (each once, however many ask); resolves when all are here or
   *  failed (a stylesheet that failed is applied as empty: the page without those rules). */
  async ensure(records) {
    const wanted = this.missing(records);
    if (!wanted.length || !this.fetchText) return;
    await Promise.all(wanted.map((sha) => {
      if (!this.loading.has(sha)) {
        this.loading.set(sha, Promise.resolve(this.fetchText(sha))
          .then((text) => { if (typeof text === "string") this.put(sha, text); }, () => {})
          .finally(() => this.loading.delete(sha)));
      }
      return this.loading.get(sha);
    }));
  }
}
