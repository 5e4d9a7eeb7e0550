// The live page's page mode (docs/CONSOLE.md, "The page replayed"): the tester's page as it is now, rebuilt in a
// sandboxed frame where the wireframe canvas was. When the live socket says hello (at first, and after each
// reconnection) the page is loaded from the server as it is now (GET /api/sessions/ID/page at a time after anything
// stored); page records arriving on the socket meanwhile wait, then every new one is applied as it comes, its
// stylesheets fetched first when the stream names them only by SHA-256. A session without page records keeps the
// wireframe until a snapshot arrives.

import { api, showError } from "./common.js";
import { PageClass, recordOfEvent } from "./page-records.js";
import { openPageView } from "./page-view.js";

/** "Now" for the server is the device's clock, which may run ahead of this one: asking this far ahead gets all. */
const CLOCK_SLACK = 3600;

export class LivePage {
  /** `container`, `before`: where the view goes; `onShown(view)`: the page is shown from now on (the live page draws
   *  touches on `view.overlay`). `fetchJSON` and `open` are the API and openPageView (tests give others). */
  constructor({ sessionID, container, before = null, onShown = () => {}, fetchJSON = (path) => api(path, { quiet: true }),
                open = () => openPageView(container, sessionID, { before }), now = () => Date.now() / 1000 }) {
    Object.assign(this, { onShown, fetchJSON, open, now });
    this.path = `/api/sessions/${encodeURIComponent(sessionID)}/page`;
    this.page = null;        // {view, builder, assets} once shown
    this.loading = null;     // the load of the page as it is now
    this.again = false;      // another hello came during it
    this.waiting = [];       // records that arrived during it
    this.lastID = null;      // the last record applied: older ones arriving late are skipped
    this.chain = Promise.resolve();
  }

  /** The socket (re)connected: what was missed is loaded from the server. */
  hello() {
    if (this.loading) { this.again = true; return this.loading; }
    this.loading = this.load().catch((error) => showError(`Cannot load the page: ${error.message}`)).finally(() => {
      this.loading = null;
      const waiting = this.waiting;
      this.waiting = [];
      if (this.again) { this.again = false; this.waiting = waiting; this.hello(); } else this.feed(waiting);
    });
    return this.loading;
  }

  async load() {
    const until = (this.now() + CLOCK_SLACK).toFixed(3);
    let answer = await this.fetchJSON(`${this.path}?at=${until}&until=${until}`);
    const records = [...(answer.records ?? [])];
    if (!records.length && !this.page) return;      // no page recorded (yet): the wireframe stays
    const stylesheets = [answer.assets];
    while (answer.more && answer.records?.length) {
      answer = await this.fetchJSON(`${this.path}?after=${encodeURIComponent(records.at(-1).id)}&until=${until}`);
      records.push(...(answer.records ?? []));
      stylesheets.push(answer.assets);
    }
    if (!this.page) {
      const page = await this.open();
      if (!page) return;
      this.page = page;
      this.onShown(page.view);
    }
    const { builder, assets } = this.page;
    if (answer.remoteAssets !== undefined) builder.setRemoteAssets(answer.remoteAssets);
    for (const map of stylesheets) assets.add(map);
    // After the records being applied from the socket, in order: the ids keep anything from being applied twice.
    const applied = this.chain.then(() => this.apply(records));
    this.chain = applied.catch(() => {});   // a failure is the load's (shown by hello), not the next batch's
    await applied;
  }

  /** The live stream's events; page records among them are applied in order (after a load under way). */
  events(events) {
    const records = events.map(recordOfEvent).filter(Boolean);
    if (records.length) this.feed(records);
  }

  feed(records) {
    if (this.loading) { this.waiting.push(...records); return; }
    const fresh = records.filter((record) => this.lastID === null || record.id > this.lastID);
    if (!fresh.length) return;
    if (!this.page) {
      // The page recording begins now (or began before this page was opened): load it from the server.
      if (fresh.some((record) => record.class === PageClass.snapshot)) this.hello();
      return;
    }
    this.chain = this.chain.then(() => this.apply(fresh)).catch((error) => showError(`Cannot show the page: ${error.message}`));
  }

  /** Applies records in one pass (stylesheets fetched first), then scroll, focus and viewport once. */
  async apply(records) {
    const { view, builder, assets } = this.page;
    await assets.ensure(records);
    for (const record of records) {
      if (this.lastID !== null && record.id <= this.lastID) continue;
      builder.apply(record);
      this.lastID = record.id;
    }
    builder.settle();
    view.mark(builder.applied, builder.applied?.t, builder.frozen);
  }
}
