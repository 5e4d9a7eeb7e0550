// The spool: every message is written here before it is sent and deleted once the server settled it (docs/WEB-CAPTURE.md,
// "The spool's bound and policy"). A message is {name, head, tail, tier, seq}: its seq goes between head and tail as
// it is sent, so that the store assigns it with no read before the write and a page on its way out (pagehide)
// still gets everything in.

import { SAMPLE, SPOOL_ENTRY_OVERHEAD } from "./constants.js";
import { IndexedDBStore, MemoryStore } from "./spool-store.js";

/** What a message costs against the bound. */
export const messageBytes = (m) => m.head.length + m.tail.length + SPOOL_ENTRY_OVERHEAD;

/** A spooled message as it goes on the wire. */
export const messageXML = (m) => `<${m.name}>${m.head}<key>seq</key><integer>${m.seq}</integer>${m.tail}</${m.name}>\n`;

/**
 * The bound and drop policy, decided before anything is written. `spooled`: what the spool holds, in seq order;
 * `items`: new messages ({name, head, tail, tier, lean}). A sample that does not fit is dropped; a message to keep
 * evicts the newest spooled samples, then gives up its heavy part (`lean`: a view without its screenshot), then goes
 * in over the bound (such messages are small). Returns {keep (the messages to add, lean where they had to be),
 * evict (seqs), dropped (how many samples in all), bytes (the spool's bytes after)}. `spooled` (any iterable) is read
 * only when something must be evicted: a spool that has room costs a write nothing per message it holds.
 */
export function admit(spooled, bytes, maxBytes, items) {
  const keep = [], evict = [];
  let dropped = 0, samples = null;
  const fits = (n) => bytes + n <= maxBytes;
  for (const item of items) {
    let size = messageBytes(item);
    if (!fits(size) && item.tier === SAMPLE) { dropped++; continue; }
    if (!fits(size)) samples ??= [...spooled].filter((m) => m.tier === SAMPLE);
    while (!fits(size) && samples?.length) {
      const victim = samples.pop();
      evict.push(victim.seq);
      bytes -= messageBytes(victim);
      dropped++;
    }
    let tail = item.tail;
    if (!fits(size) && item.lean != null) {
      tail = item.lean;
      size = messageBytes({ head: item.head, tail });
    }
    bytes += size;
    keep.push({ name: item.name, head: item.head, tail, tier: item.tier });
  }
  return { keep, evict, dropped, bytes };
}

export class Spool {
  /** `store`: an IndexedDBStore or a MemoryStore. */
  constructor(store, maxBytes) {
    this.store = store;
    this.maxBytes = maxBytes;
    this.messages = new Map();  // seq → message, in seq order
    this.spooledBytes = 0;      // of `messages`
    this.reserved = 0;          // of writes not yet committed
    this.dropped = 0;
  }

  /** What the spool holds and is about to hold, against the bound. */
  get bytes() { return this.spooledBytes + this.reserved; }

  /** The spool of database `name`: IndexedDB, else memory. */
  static async open(name, maxBytes) {
    const spool = new Spool((await IndexedDBStore.open(name)) ?? new MemoryStore(), maxBytes);
    await spool.reload();
    return spool;
  }

  get size() { return this.messages.size; }

  /** Spooled seqs, ascending. */
  seqs() { return [...this.messages.keys()]; }

  /** The wire text of a spooled message, or undefined once it is settled. */
  xml(seq) {
    const m = this.messages.get(seq);
    return m && messageXML(m);
  }

  /** What the store holds now (another tab, or the page before a reload, may have added to it). */
  async reload() {
    const { entries, dropped } = await this.store.load();
    entries.sort((a, b) => a.seq - b.seq);
    this.messages = new Map(entries.map((m) => [m.seq, m]));
    this.spooledBytes = entries.reduce((n, m) => n + messageBytes(m), 0);
    this.dropped = Math.max(this.dropped, dropped);
  }

  /** Spools `items` under the bound; resolves with the messages written, numbered, once they are durable. The plan
   * takes effect at once (bytes reserved, evicted samples forgotten), so that a write issued before the last one
   * committed plans from what that one left; the transaction itself is issued at once (a leaving page's last). */
  async write(items) {
    if (!items.length) return [];
    const plan = admit(this.messages.values(), this.bytes, this.maxBytes, items);
    this.dropped += plan.dropped;
    for (const seq of plan.evict) this.forget(seq);
    const reserved = plan.keep.reduce((n, m) => n + messageBytes(m), 0);
    this.reserved += reserved;
    try {
      await this.store.commit(plan.keep, plan.evict, plan.dropped ? this.dropped : null);
    } finally {
      this.reserved -= reserved;
    }
    for (const m of plan.keep) this.put(m);
    return plan.keep;
  }

  /** Settled (acknowledged, or refused for good): gone from the spool. */
  remove(seqs) {
    for (const seq of seqs) this.forget(seq);
    this.store.delete(seqs);
  }

  put(m) {
    if (this.messages.has(m.seq)) return;  // a reload found it already
    this.messages.set(m.seq, m);
    this.spooledBytes += messageBytes(m);
  }

  forget(seq) {
    const m = this.messages.get(seq);
    if (!m) return;
    this.spooledBytes -= messageBytes(m);
    this.messages.delete(seq);
  }

  /** A value kept beside the messages (the device's id and invitation live as long as what is spooled). */
  meta(key, value) { return this.store.meta(key, value); }
}
