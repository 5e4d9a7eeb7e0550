// The page at any moment of a session (docs/CONSOLE.md, "The page replayed"): records loaded a window at a time from
// GET /api/sessions/ID/page, kept in stretches ("segments") that each begin with the snapshot in force where they
// were asked for, and applied to the builder as the playhead moves. Playing forward applies the records up to the
// playhead; seeking backward, or within a stretch past a later snapshot, rebuilds from the last snapshot before it;
// seeking where nothing is loaded asks the server for the snapshot in force there (`at=`), and near the end of what is
// loaded for the records after it (`after=`), ahead of the playhead while playing.
//
// What is loaded is not asked for again: a few stretches are kept (the least recently shown go first), and
// stylesheets are cached by their SHA-256 (page-assets.js) across all of them. Once CHECKPOINT records were applied
// since the last snapshot or copy, a copy of the page is kept (page-checkpoint.js): seeking back into a long run of
// changes after one snapshot starts from the nearest copy, not from the snapshot (in Chromium on the loaded 2-core
// lab machine, a 3,000-element page restored and 2,000 changes applied took about 220 ms; rebuilt from its snapshot
// with an hour of changes, 36,000, about 900 ms).

import { PageClass } from "./page-records.js";
import { upperBound } from "./replay-index.js";

const WINDOW = 60;       // seconds of records asked for at once (the server answers at most about 4 MiB, then `more`)
const AHEAD = 20;        // the next window is asked for when the playhead is this close to the end of what is loaded
const FAR = 120;         // past the loaded records by more than this, the snapshot in force there is asked for instead
const BEHIND = 300;      // a stretch played on keeps this many seconds behind the playhead (from a snapshot on)
const SEGMENTS = 6;      // stretches kept
const RETRY_MS = 2000;   // after a failed or fruitless load, no new one for this long
const CHECKPOINT = 2000; // records applied since the last copy (or snapshot) before a copy of the page is kept
const CHECKPOINTS = 40;  // copies kept per stretch: the oldest go


export class PageTimeline {
  /** `fetchJSON(path)`: the API (a promise of the parsed answer); `path`: /api/sessions/ID/page; `builder`: the
   *  PageBuilder; `assets`: an AssetCache; `horizon()`: the latest device time the session has (nothing is asked for
   *  after it); `onUpdate(t)`: the page was drawn for time t; `onError(error)`: a load failed. */
  constructor({ fetchJSON, path, builder, assets, horizon = () => Infinity, onUpdate = () => {}, onError = () => {} }) {
    Object.assign(this, { fetchJSON, path, builder, assets, horizon, onUpdate, onError });
    this.segments = [];      // {records, times (never decreasing), snapshots, checkpoints ({index, saved}), at, until, used}
    this.current = null;     // the stretch the builder shows
    this.position = 0;       // in it, the next record to apply
    this.wanted = null;      // the time last asked for
    this.loading = null;     // the one load under way
    this.retryAt = 0;
    this.uses = 0;
  }

  /** Loads the page at `t`; resolves to whether the session has page records at all. */
  async start(t) {
    this.wanted = t;
    await this.run(() => this.fresh(t));
    return this.segments.some((segment) => segment.records.length > 0);
  }

  /** Shows the page at device time `t` from what is loaded, and loads what is missing or comes next (then shows it
   *  again). Returns whether it was shown now. */
  show(t) {
    this.wanted = t;
    const segment = this.covering(t);
    if (!segment) {
      this.request(t);
      return false;
    }
    this.render(segment, t);
    this.prefetch(segment, t);
    return true;
  }

  /** A stretch that knows the page at `t`: it begins at or before `t` (or at the session's first snapshot, when `t`
   *  is earlier) and was loaded up to `t` or up to the session's end. */
  covering(t) {
    // `at` before the first record: the server had no snapshot that early, so none is earlier than that one.
    const covers = (s) => s.records.length > 0 && (t >= s.times[0] || (s.at !== null && s.at < s.times[0])) &&
      (t <= s.until || s.until >= this.horizon());
    if (this.current && covers(this.current)) return this.current;
    return this.segments.find(covers) ?? null;
  }

  render(segment, t) {
    const { records, times, snapshots, checkpoints } = segment;
    // Records [0, end) happened at or before t; before the session's first snapshot, the page as first recorded.
    const first = segment.at !== null && snapshots[0] === 0 ? 1 : 0;
    const end = Math.max(upperBound(times, t), first);
    const snapshot = snapshots[upperBound(snapshots, end - 1) - 1] ?? -1;  // the last snapshot among them
    // The last copy of the page among them (records [0, index) applied), if it follows that snapshot.
    const indices = checkpoints.map((c) => c.index);
    const copy = checkpoints[upperBound(indices, end) - 1];
    const saved = copy && copy.index > snapshot ? copy : null;
    let from = this.current === segment && end >= this.position ? this.position : -1;
    segment.used = ++this.uses;
    this.current = segment;
    if (saved && saved.index > from) {                       // starting from it is less work than going on
      this.builder.restore(saved.saved);
      from = saved.index;
    } else if (snapshot >= 0 && snapshot >= from) {
      from = snapshot;                                       // rebuilding from it is never more work
    }
    if (from < 0) {
      this.builder.clear();                                  // no snapshot to start from (not what muevald sends)
      this.position = 0;
    } else {
      // Where the page was last rebuilt from or copied: a copy is kept once CHECKPOINT records follow it. One copy at
      // most per moment shown, of the page as shown (a copy costs a few ms: a long catch-up does not pay it often).
      let last = Math.max(snapshot, checkpoints[upperBound(indices, from) - 1]?.index ?? -1);
      for (let i = from; i < end; i++) {
        this.builder.apply(records[i]);
        if (records[i].class === PageClass.snapshot) last = i;
      }
      if (end - last >= CHECKPOINT) this.keep(segment, end);
      this.position = end;
    }
    this.builder.settle();
    this.onUpdate(t);
  }

  /** Keeps a copy of the page as it is with records [0, index) applied. */
  keep(segment, index) {
    const saved = this.builder.checkpoint();
    if (!saved) return;
    const at = upperBound(segment.checkpoints.map((c) => c.index), index);
    if (segment.checkpoints[at - 1]?.index !== index) segment.checkpoints.splice(at, 0, { index, saved });
    if (segment.checkpoints.length > CHECKPOINTS) segment.checkpoints.shift();
  }

  request(t) {
    if (this.loading || Date.now() < this.retryAt) return;
    const near = this.segments.find((s) => s.records.length > 0 && s.until < t && t - s.until <= FAR);
    this.run(near ? () => this.extend(near, t + WINDOW) : () => this.fresh(t));
  }

  /** While playing: the next window before the playhead reaches the end of this one. */
  prefetch(segment, t) {
    if (this.loading || segment.until - t > AHEAD || segment.until >= this.horizon() || Date.now() < this.retryAt) return;
    this.run(() => this.extend(segment, segment.until + WINDOW));
  }

  /** Runs one load at a time; then shows the time wanted now (the playhead moved meanwhile) if it is loaded. */
  run(task) {
    this.loading = (async () => {
      try {
        await task();
      } catch (error) {
        this.retryAt = Date.now() + RETRY_MS;
        this.onError(error);
      }
      this.loading = null;
      if (this.wanted === null) return;
      const segment = this.covering(this.wanted);
      if (segment) this.show(this.wanted);
      else this.retryAt = Math.max(this.retryAt, Date.now() + RETRY_MS);   // nothing there: ask again later, not at once
    })();
    return this.loading;
  }

  /** A new stretch: the snapshot in force at `t` and what follows it for a window. */
  async fresh(t) {
    const until = t + WINDOW;
    const answer = await this.fetchJSON(`${this.path}?at=${t.toFixed(3)}&until=${until.toFixed(3)}`);
    const segment = { records: [], times: [], snapshots: [], checkpoints: [], at: t, until: -Infinity, used: ++this.uses };
    this.segments.push(segment);
    this.evict();
    try {
      await this.take(segment, answer, until);
    } finally {
      if (!segment.records.length) this.segments.splice(this.segments.indexOf(segment), 1);   // nothing to keep
    }
  }

  /** The records after a stretch's last one, up to `until`. */
  async extend(segment, until) {
    this.trim(segment);
    const last = segment.records[segment.records.length - 1];
    const answer = await this.fetchJSON(`${this.path}?after=${encodeURIComponent(last.id)}&until=${until.toFixed(3)}`);
    await this.take(segment, answer, until);
  }

  /** Adds an answer (and those that follow while it says `more`) to a stretch: its stylesheets to the cache, its
   *  records in order; shows the time wanted as soon as the first part covers it. */
  async take(segment, answer, until) {
    for (;;) {
      if (answer?.remoteAssets !== undefined) this.builder.setRemoteAssets(answer.remoteAssets);
      this.assets.add(answer?.assets);
      const records = Array.isArray(answer?.records) ? answer.records : [];
      await this.assets.ensure(records);
      for (const record of records) this.append(segment, record);
      const last = segment.records[segment.records.length - 1];
      if (!answer?.more || !last || !records.length) {
        segment.until = Math.max(segment.until, Math.min(until, this.horizon()));
        return;
      }
      segment.until = Math.max(segment.until, segment.times[segment.times.length - 1]);
      // The moment wanted may be in what came: shown now, not once the window is whole.
      if (this.wanted !== null && this.covering(this.wanted) === segment) this.render(segment, this.wanted);
      answer = await this.fetchJSON(`${this.path}?after=${encodeURIComponent(last.id)}&until=${until.toFixed(3)}`);
    }
  }

  append(segment, record) {
    if (!record || typeof record !== "object") return;
    const previous = segment.times.length ? segment.times[segment.times.length - 1] : -Infinity;
    // A device clock that stepped back must not hide records from the search by time: times never decrease here.
    const t = Number.isFinite(record.t) ? Math.max(record.t, previous) : previous;
    if (record.class === PageClass.snapshot) segment.snapshots.push(segment.records.length);
    segment.records.push(record);
    segment.times.push(t);
  }

  /** A stretch played on for long keeps only what lies after the last snapshot BEHIND seconds before the playhead. */
  trim(segment) {
    if (this.wanted === null) return;
    const { snapshots, times } = segment;
    const k = snapshots[upperBound(snapshots.map((i) => times[i]), this.wanted - BEHIND) - 1];
    if (!k || (segment === this.current && k > this.position)) return;
    segment.records.splice(0, k);
    segment.times.splice(0, k);
    segment.snapshots = snapshots.filter((i) => i >= k).map((i) => i - k);
    segment.checkpoints = segment.checkpoints.filter((c) => c.index > k).map((c) => ({ ...c, index: c.index - k }));
    segment.at = null;
    if (segment === this.current) this.position -= k;
  }

  /** Keeps SEGMENTS stretches: the least recently shown go. */
  evict() {
    while (this.segments.length > SEGMENTS) {
      const victims = this.segments.filter((s) => s !== this.current).sort((a, b) => a.used - b.used);
      this.segments.splice(this.segments.indexOf(victims[0]), 1);
    }
  }
}
