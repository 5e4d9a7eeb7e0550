// Delivery as a state machine (as CaptureLibrary/Sources/MuEvalCapture/DeliveryStateMachine.swift is for the Swift
// library): told what happened (spooled, opened, welcomed, acknowledged, refused, closed), it says what to do next
// (`nextAction`). It holds seqs, never sockets, timers or bytes: `transport.js` carries its actions out with a
// WebSocket and the spool, the unit tests without either. Times are milliseconds on a monotonic clock.
//
// The rules (docs/WEB-CAPTURE.md, "Delivery"): after the welcome, a connection sends every spooled message in seq
// order; an <ack> settles what this connection sent up to its seq; an <error> with a seq alone refuses that message
// for good; one with `fromSeq` (a failed group commit) settles nothing: the socket is dropped and everything is sent
// again after a delay. A message spooled (by another tab) below what this connection already sent would be covered
// by an ack unsent: the connection is replaced. muevald stores each (device, seq) once, so resending is safe.

import { DELIVERY } from "./constants.js";

/** Where the link is: no socket, waiting to connect, connecting, open (hello due), greeted (hello sent, no welcome
 * yet: a refused hello stays here until a session takes the device), welcomed. */
export const Link = Object.freeze({ idle: "idle", waiting: "waiting", connecting: "connecting", open: "open", greeted: "greeted", welcomed: "welcomed" });

export class DeliveryStateMachine {
  constructor(limits = DELIVERY) {
    this.limits = limits;
    this.pending = [];           // spooled seqs not settled, ascending
    this.link = Link.idle;
    this.until = 0;              // waiting: when to connect; connecting: since when
    this.attempts = 0;
    this.welcome = null;
    this.stopped = false;
    this.statistics = { sent: 0, acked: 0, refused: 0, connections: 0, lastError: null };
    this.startConnection();
  }

  /** What one connection knows: the highest seq it sent, what it sent and awaits, whether the spool was read again. */
  startConnection() {
    this.highestSent = -1;
    this.inFlight = [];
    this.loaded = false;
    this.late = false;
    this.probing = false;
    this.lastHeard = 0;
    this.suspected = false;
    this.awaitingSince = null;   // since when an ack has been awaited for what is in flight
  }

  // ------------------------------------------------------------ the spool

  /** Messages now durable in the spool (this tab's writes, or what a reload found): they may be sent. */
  spooled(seqs) {
    for (const seq of seqs) {
      const at = this.position(seq);
      if (this.pending[at] === seq) continue;
      this.pending.splice(at, 0, seq);
      if (seq <= this.highestSent) this.late = true;
    }
  }

  /** The spool was read again for this connection (`seqs`: all it holds): sending may start. */
  reloaded(seqs) {
    this.spooled(seqs);
    this.loaded = true;
  }

  /** Seqs the spool no longer has (another tab's, settled there): nothing to send. */
  forget(seqs) {
    this.remove(seqs);
    this.inFlight = this.inFlight.filter((seq) => !seqs.includes(seq));
    if (!this.inFlight.length) this.awaitingSince = null;
  }

  /** Spooled and not yet settled. */
  get unsettled() { return this.pending.length; }

  // ------------------------------------------------------------ the socket

  /** The `connect` action was carried out: a socket is opening. */
  connecting(now) {
    this.link = Link.connecting;
    this.until = now;
    this.startConnection();
  }

  opened(now) {
    if (this.link !== Link.connecting) return;
    this.link = Link.open;
    this.lastHeard = now;
    this.statistics.connections++;
  }

  /** The socket closed (or could not open): nothing written on it is known to be stored. */
  closed(now, jitter = Math.random()) {
    if (this.link === Link.idle || this.link === Link.waiting) return;
    this.wait(now + this.backoff(jitter));
  }

  backoff(jitter) {
    const full = Math.min(this.limits.reconnectLastMs, this.limits.reconnectFirstMs * 2 ** Math.min(this.attempts++, 30));
    return full / 2 + Math.min(1, Math.max(0, jitter)) * full / 2;
  }

  /** Drops the connection (the action `disconnect` follows) and connects again at `until`. */
  wait(until) {
    this.link = Link.waiting;
    this.until = until;
    this.startConnection();
  }

  /** The page is back on screen: a closed socket connects at once, an open one is probed (it may have slept). */
  foreground() {
    this.attempts = 0;
    if (this.link === Link.waiting) this.until = -Infinity;
    else if (this.link === Link.welcomed) this.suspected = true;
  }

  /** A new socket at once (the network came back, the page came back from the back/forward cache, whose way in
   * closed its socket). */
  renew() {
    this.attempts = 0;
    this.renewing = true;
  }

  // ------------------------------------------------------------ the server

  heard(now) {
    this.lastHeard = now;
    this.probing = false;
  }

  /** A <welcome>: the session. Returns whether the session, its tasks or questionnaire changed. */
  welcomed(m) {
    const next = { session: m.session, sensors: m.sensors || [], tasks: m.tasks || [], questionnaire: m.questionnaire };
    const key = (w) => JSON.stringify([w?.session, w?.tasks, w?.questionnaire]);
    const changed = key(next) !== key(this.welcome);
    this.welcome = next;
    this.attempts = 0;
    this.statistics.lastError = null;
    if (this.link === Link.greeted || this.link === Link.open) this.link = Link.welcomed;
    return changed;
  }

  /** An <ack>: what this connection sent up to `seq` is settled. Returns the settled seqs (to delete). */
  acknowledged(seq) {
    let n = 0;
    while (n < this.inFlight.length && this.inFlight[n] <= seq) n++;
    const done = this.inFlight.splice(0, n);
    this.remove(done);
    if (done.length) this.awaitingSince = this.inFlight.length ? this.lastHeard : null;
    this.statistics.acked += done.length;
    return done;
  }

  /** An <error>. Returns {reason, settled}: the seqs refused for good (to delete). */
  refused(m, now) {
    const reason = m.reason ?? "the server refused a message";
    this.statistics.lastError = reason;
    if (m.fromSeq != null && this.link === Link.welcomed) {
      this.wait(now + this.limits.rangeRetryMs);
      return { reason, settled: [], disconnect: true };
    }
    if (m.seq == null || !this.inFlight.includes(m.seq)) return { reason, settled: [] };
    this.inFlight.splice(this.inFlight.indexOf(m.seq), 1);
    this.remove([m.seq]);
    if (!this.inFlight.length) this.awaitingSince = null;
    this.statistics.refused++;
    return { reason, settled: [m.seq] };
  }

  stop() { this.stopped = true; }

  // ------------------------------------------------------------ deciding

  /**
   * What to do now. `page`: {visible (a probe only on a visible page), bufferedBytes (the socket's own buffer)}.
   * Actions: {type: "connect"}, {type: "hello"}, {type: "send", seqs}, {type: "probe"} (the hello again, answered by
   * a welcome), {type: "disconnect", reason} (drop the socket; the machine already knows when to connect again),
   * {type: "wait", until} (nothing before then, or before the next event; until may be Infinity).
   */
  nextAction(now, page = { visible: true, bufferedBytes: 0 }) {
    const limits = this.limits;
    if (this.renewing) {
      this.renewing = false;
      if (this.link === Link.waiting || this.link === Link.idle) this.until = -Infinity;
      else if (!this.stopped) return this.drop(now, null);
    }
    switch (this.link) {
      case Link.idle:
        return this.stopped ? { type: "wait", until: Infinity } : { type: "connect" };
      case Link.waiting:
        if (this.stopped) return { type: "wait", until: Infinity };
        return now >= this.until ? { type: "connect" } : { type: "wait", until: this.until };
      case Link.connecting:
        if (now - this.until >= limits.connectTimeoutMs) return this.drop(now, "connecting took too long");
        return { type: "wait", until: this.until + limits.connectTimeoutMs };
      case Link.open:
        this.link = Link.greeted;
        return { type: "hello" };
      case Link.greeted:
        return { type: "wait", until: Infinity };
    }
    // Welcomed.
    const quiet = now - this.lastHeard;
    if (this.awaitingSince != null && now - this.awaitingSince >= limits.ackTimeoutMs) {
      return this.drop(now, `no acknowledgement for ${limits.ackTimeoutMs / 1000} s`);
    }
    if (this.probing && quiet >= limits.probeTimeoutMs) return this.drop(now, `no answer to a probe for ${limits.probeTimeoutMs / 1000} s`);
    if (this.late) return this.drop(now, "messages were spooled below what this connection sent");
    if (!this.probing && (quiet >= limits.probeAfterMs || this.suspected) && page.visible) {
      this.probing = true;
      this.suspected = false;
      this.lastHeard = now;
      return { type: "probe" };
    }
    const from = this.position(this.highestSent + 1);
    const unsent = this.loaded ? this.pending.slice(from, from + limits.batchMessages) : [];
    if (unsent.length && page.bufferedBytes > limits.maxBufferedBytes) return { type: "wait", until: now + limits.drainPollMs };
    if (unsent.length) {
      if (!this.inFlight.length) this.awaitingSince = now;
      this.inFlight.push(...unsent);
      this.highestSent = unsent[unsent.length - 1];
      this.statistics.sent += unsent.length;
      return { type: "send", seqs: unsent };
    }
    // A hidden page is not probed: its next look comes with the page's return (foreground) or another event.
    const deadlines = [this.probing ? this.lastHeard + limits.probeTimeoutMs : page.visible ? this.lastHeard + limits.probeAfterMs : Infinity];
    if (this.awaitingSince != null) deadlines.push(this.awaitingSince + limits.ackTimeoutMs);
    return { type: "wait", until: Math.min(...deadlines) };
  }

  /** Drops this connection and connects again at once (`reason`: why, kept as the last error; none for a renewal). */
  drop(now, reason) {
    if (reason) this.statistics.lastError = reason;
    this.attempts = 0;
    this.wait(now);
    return { type: "disconnect", reason };
  }

  // ------------------------------------------------------------ seqs

  /** Index of the first pending seq ≥ `seq` (binary search: pending is ascending). */
  position(seq) {
    let low = 0, high = this.pending.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.pending[middle] < seq) low = middle + 1; else high = middle;
    }
    return low;
  }

  remove(seqs) {
    for (const seq of seqs) {
      const at = this.position(seq);
      if (this.pending[at] === seq) this.pending.splice(at, 1);
    }
  }
}
