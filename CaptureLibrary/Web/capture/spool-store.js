// Where the spool's messages live: IndexedDB, or memory where a browser refuses IndexedDB (some locked-down WebViews).
// Both number what they add themselves, so that seqs are assigned with no read before the write.

import { SPOOL_TASK_CHARS } from "./constants.js";
import { pageHidden } from "./idle.js";

const request = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });

/** Seqs start at microseconds since 1970, as MuEvalCapture's: a device id that outlived its store (kept in
 * localStorage) never reuses a seq that muevald would take for a duplicate. */
export const firstSeq = (now = Date.now()) => now * 1000;

/** The database `name`: the store "spool" (key: seq, autoIncrement: assigned as a message is added, unique across
 * the device's tabs, going on after reloads) and "meta" (the device's id, the dropped count). */
export class IndexedDBStore {
  constructor(db) { this.db = db; }

  /** The store, or null where IndexedDB is missing or refused. */
  static async open(name) {
    try {
      const r = indexedDB.open(name, 1);
      r.onupgradeneeded = () => {
        const spool = r.result.createObjectStore("spool", { keyPath: "seq", autoIncrement: true });
        r.result.createObjectStore("meta");
        const first = firstSeq();  // a key set moves the generator on
        spool.add({ seq: first });
        spool.delete(first);
      };
      return new IndexedDBStore(await request(r));
    } catch {
      return null;
    }
  }

  /** Everything stored (this tab's and any other's), in seq order, and the dropped count. */
  async load() {
    const tx = this.db.transaction(["spool", "meta"]);
    const [entries, dropped] = await Promise.all([request(tx.objectStore("spool").getAll()), request(tx.objectStore("meta").get("dropped"))]);
    return { entries, dropped: dropped ?? 0 };
  }

  /** Adds `add` (each gets its `seq`), deletes `remove`, keeps `dropped`, in one transaction; resolves once durable.
   * An add copies its message on the main thread (about 2 ms per 32K characters on a phone throttled 4×: a view with
   * its tree and a page snapshot, 740K characters, took 50 ms together), so a visible page adds at most
   * SPOOL_TASK_CHARS (at least one message) per task, the next ones when the last of those succeeded; a hidden page,
   * perhaps on its way out, issues everything at once. */
  commit(add, remove, dropped) {
    return new Promise((resolve, reject) => {
      const tx = this.db.transaction(["spool", "meta"], "readwrite");
      const spool = tx.objectStore("spool");
      tx.oncomplete = () => resolve();
      tx.onerror = tx.onabort = () => reject(tx.error);
      for (const seq of remove) spool.delete(seq);
      if (dropped != null) tx.objectStore("meta").put(dropped, "dropped");
      const perTask = pageHidden() ? Infinity : SPOOL_TASK_CHARS;
      let next = 0;
      const addSome = () => {
        let request = null;
        for (let chars = 0; next < add.length && (!request || chars < perTask); next++) {
          const entry = add[next], added = spool.add(entry);
          added.onsuccess = () => { entry.seq = added.result; };
          chars += entry.head.length + entry.tail.length;
          request = added;
        }
        if (next < add.length) request.addEventListener("success", addSome);
        else tx.commit?.();
      };
      addSome();
    });
  }

  /** Deletes settled messages; nothing waits for it (a message deleted twice is no harm). */
  delete(seqs) {
    if (!seqs.length) return;
    const spool = this.db.transaction("spool", "readwrite").objectStore("spool");
    for (const seq of seqs) spool.delete(seq);
  }

  async meta(key, value) {
    const store = this.db.transaction("meta", value === undefined ? "readonly" : "readwrite").objectStore("meta");
    return request(value === undefined ? store.get(key) : store.put(value, key));
  }
}

/** The same in memory: delivery is still exactly once while the page lives, but a reload loses what was not delivered. */
export class MemoryStore {
  constructor(first = firstSeq()) {
    this.nextSeq = first;
    this.entries = new Map();
    this.values = new Map();
  }

  async load() {
    return { entries: [...this.entries.values()], dropped: this.values.get("dropped") ?? 0 };
  }

  async commit(add, remove, dropped) {
    for (const seq of remove) this.entries.delete(seq);
    for (const entry of add) {
      entry.seq = this.nextSeq++;
      this.entries.set(entry.seq, { ...entry });
    }
    if (dropped != null) this.values.set("dropped", dropped);
  }

  delete(seqs) {
    for (const seq of seqs) this.entries.delete(seq);
  }

  async meta(key, value) {
    if (value === undefined) return this.values.get(key);
    this.values.set(key, value);
    return value;
  }
}
