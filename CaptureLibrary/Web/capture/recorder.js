// Recording: an event or a media chunk becomes a message, queued for BATCH_MS and then spooled with the others of that
// time in one transaction (a tap's touches, gesture and click: one write, one send, one ack).

import { BATCH_MS, KEEP, SPOOL_REPORT_BELOW } from "./constants.js";
import { encodeFields } from "./plist.js";

export class Recorder {
  /** `spool`: where messages go; `clock`: the device clock; `on`: {spooled(seqs), problem(text)}. */
  constructor({ spool, clock, on }) {
    Object.assign(this, { spool, clock, on });
    this.queue = [];
    this.writing = 0;
    this.flushing = null;
    this.droppedReported = spool.dropped;
  }

  /** An event of `cls` with `fields`; resolves once it is durable. `lean`: its fields without the heavy parts, for
   * when the spool is full (a view without its screenshot). */
  record(cls, fields, tier = KEEP, lean) {
    return this.recordEncoded(cls, encodeFields(fields), tier, lean && encodeFields(lean));
  }

  /** The same with the fields already encoded (encodeFields' text, or fieldsSteps' done in idle slices: a large event). */
  recordEncoded(cls, fields, tier = KEEP, lean) {
    return this.enqueue("event", encodeFields({ class: cls, timestamp: this.clock.now() }), fields, tier, lean);
  }

  /** A message whose seq goes between `head` and `tail`, spooled with the others of the next BATCH_MS. */
  enqueue(name, head, tail, tier, lean) {
    this.queue.push({ name, head, tail, tier, lean });
    return (this.flushing ??= new Promise((resolve) => setTimeout(resolve, BATCH_MS)).then(() => this.flush()));
  }

  /** Messages recorded and not yet in the spool. */
  get queued() { return this.queue.length + this.writing; }

  /** Writes the queue to the spool now (a hidden or leaving page calls it: no timer may run after that). */
  flush() {
    this.flushing = null;
    const items = this.queue;
    this.queue = [];
    this.writing += items.length;
    const written = this.spool.write(items)
      .finally(() => { this.writing -= items.length; })
      .then((messages) => this.on.spooled(messages.map((m) => m.seq)))
      .catch((error) => this.on.problem(`the spool cannot be written: ${error}`));
    this.reportDropped();
    return written;
  }

  /** The spool dropped samples for room: said once the spell is over, with the running total. */
  reportDropped() {
    const dropped = this.spool.dropped;
    if (dropped > this.droppedReported && this.spool.bytes < this.spool.maxBytes * SPOOL_REPORT_BELOW) {
      const since = dropped - this.droppedReported;
      this.droppedReported = dropped;
      this.record("DeviceSensorEvent", { sensor: "captureQueue", dropped, droppedSince: since, maxSpoolBytes: this.spool.maxBytes });
    }
  }
}
