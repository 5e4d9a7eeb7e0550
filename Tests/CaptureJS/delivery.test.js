// delivery.js: the delivery state machine driven by hand, as transport.js drives it, with explicit times. Small
// limits (LIMITS) keep the arithmetic readable; the backoff case uses the shipped DELIVERY to pin its numbers.

import assert from "node:assert/strict";
import { test } from "node:test";
import { DELIVERY } from "../../CaptureLibrary/Web/capture/constants.js";
import { DeliveryStateMachine, Link } from "../../CaptureLibrary/Web/capture/delivery.js";

const LIMITS = Object.freeze({ reconnectFirstMs: 100, reconnectLastMs: 1000, ackTimeoutMs: 1500, probeAfterMs: 2500, probeTimeoutMs: 1000,
  connectTimeoutMs: 1500, rangeRetryMs: 500, heartbeatMs: 500, maxBufferedBytes: 1000, batchMessages: 3, drainPollMs: 10 });
const VISIBLE = { visible: true, bufferedBytes: 0 };
const HIDDEN = { visible: false, bufferedBytes: 0 };

/** connect → connecting → opened → hello → welcome → spool read again, at `now`, as transport.js does it. */
function welcome(m, now, spool = []) {
  assert.deepEqual(m.nextAction(now), { type: "connect" });
  m.connecting(now);
  m.opened(now);
  assert.deepEqual(m.nextAction(now), { type: "hello" });
  m.reloaded(spool);
  m.heard(now);
  m.welcomed({ session: "7" });
  assert.equal(m.link, Link.welcomed);
}

const welcomed = (now = 0, spool = [], limits = LIMITS) => {
  const m = new DeliveryStateMachine(limits);
  welcome(m, now, spool);
  return m;
};

test("nothing is sent before the welcome, nor before the spool was read again", () => {
  const m = new DeliveryStateMachine(LIMITS);
  m.spooled([1, 2]);
  assert.deepEqual(m.nextAction(0), { type: "connect" });
  m.connecting(0);
  assert.deepEqual(m.nextAction(0), { type: "wait", until: 1500 }, "connecting: wait for the socket or the timeout");
  m.opened(5);
  assert.deepEqual(m.nextAction(5), { type: "hello" });
  assert.deepEqual(m.nextAction(5), { type: "wait", until: Infinity }, "greeted: no sends before the welcome");
  m.heard(10);
  m.welcomed({ session: "7" });
  assert.notEqual(m.nextAction(10).type, "send", "welcomed, but the spool was not read again yet");
  m.reloaded([1, 2, 3]);
  assert.deepEqual(m.nextAction(10), { type: "send", seqs: [1, 2, 3] });
  assert.equal(m.statistics.sent, 3);
  assert.equal(m.statistics.connections, 1);
});

test("the spool read before the welcome: sending waits for the welcome", () => {
  const m = new DeliveryStateMachine(LIMITS);
  m.nextAction(0);
  m.connecting(0);
  m.opened(0);
  m.nextAction(0);
  m.reloaded([4, 2]);
  assert.deepEqual(m.nextAction(1), { type: "wait", until: Infinity });
  m.heard(2);
  m.welcomed({ session: "7" });
  assert.deepEqual(m.nextAction(2), { type: "send", seqs: [2, 4] }, "in seq order, whatever order they were spooled in");
});

test("welcomed: what is spooled later is sent in seq order, each once", () => {
  const m = welcomed();
  m.spooled([7, 5]);
  assert.deepEqual(m.nextAction(1), { type: "send", seqs: [5, 7] });
  m.spooled([8]);
  assert.deepEqual(m.nextAction(2), { type: "send", seqs: [8] });
  assert.equal(m.nextAction(3).type, "wait");
});

test("an ack settles what was sent up to its seq and returns those seqs", () => {
  const m = welcomed(0, [10, 11, 12]);
  m.nextAction(0);
  m.heard(100);
  assert.deepEqual(m.acknowledged(11), [10, 11]);
  assert.equal(m.unsettled, 1);
  assert.equal(m.statistics.acked, 2);
  assert.deepEqual(m.acknowledged(11), [], "an ack again settles nothing more");
  m.spooled([13]);  // spooled, not yet sent: an ack above it does not cover it
  assert.deepEqual(m.acknowledged(20), [12]);
  assert.equal(m.unsettled, 1);
});

test("an <error> with a seq alone refuses only that message, for good", () => {
  const m = welcomed(0, [10, 11, 12]);
  m.nextAction(0);
  assert.deepEqual(m.refused({ reason: "bad frame", seq: 11 }, 50), { reason: "bad frame", settled: [11] });
  assert.equal(m.statistics.refused, 1);
  assert.equal(m.statistics.lastError, "bad frame");
  assert.equal(m.link, Link.welcomed, "the connection goes on");
  assert.deepEqual(m.acknowledged(12), [10, 12]);
  assert.equal(m.unsettled, 0);
  // A seq this connection did not send (or already settled) is not counted.
  assert.deepEqual(m.refused({ reason: "again", seq: 11 }, 60), { reason: "again", settled: [] });
  assert.equal(m.statistics.refused, 1);
});

test("an <error> with fromSeq drops the socket, settles nothing, and everything goes again after rangeRetryMs", () => {
  const m = welcomed(0, [1, 2, 3]);
  m.nextAction(0);
  const r = m.refused({ reason: "disk full", fromSeq: 1, seq: 3 }, 100);
  assert.deepEqual(r, { reason: "disk full", settled: [], disconnect: true });
  // Errors take precedence over acks: a later ack in the same frame does not settle the refused range.
  assert.deepEqual(m.acknowledged(3), []);
  assert.equal(m.unsettled, 3);
  assert.deepEqual(m.nextAction(100), { type: "wait", until: 600 });
  assert.deepEqual(m.nextAction(599), { type: "wait", until: 600 });
  welcome(m, 600, [1, 2, 3]);
  assert.deepEqual(m.nextAction(600), { type: "send", seqs: [1, 2, 3] });
});

test("backoff after a closed socket: within [first/2, first] by jitter, doubling, capped at the last", () => {
  const m = new DeliveryStateMachine(DELIVERY);
  const backoffs = (jitter, n) => {
    const out = [];
    let now = 0;
    for (let i = 0; i < n; i++) {
      assert.deepEqual(m.nextAction(now), { type: "connect" });
      m.connecting(now);
      m.closed(now, jitter);
      out.push(m.until - now);
      now = m.until;
    }
    return out;
  };
  assert.deepEqual(backoffs(1, 8), [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  m.foreground();  // resets the count, as a welcome does
  assert.deepEqual(backoffs(0, 3), [250, 500, 1000]);
  m.foreground();
  assert.deepEqual(backoffs(0.5, 1), [375]);
  m.foreground();
  assert.deepEqual(backoffs(7, 1), [500], "jitter is clamped to 0..1");
});

test("a welcome resets the backoff", () => {
  const m = new DeliveryStateMachine(LIMITS);
  for (const now of [0, 100, 300]) {
    m.nextAction(now);
    m.connecting(now);
    m.closed(now, 1);
  }
  assert.equal(m.until, 700, "100, 200, 400: the third attempt waited 400");
  welcome(m, 700);
  m.closed(800, 1);
  assert.deepEqual(m.nextAction(800), { type: "wait", until: 900 });
});

test("a socket closed mid-flight: everything unsettled is sent again, ascending, in-flight messages included", () => {
  const m = welcomed(0, [1, 2, 3, 4, 5]);
  assert.deepEqual(m.nextAction(0), { type: "send", seqs: [1, 2, 3] });
  assert.deepEqual(m.nextAction(0), { type: "send", seqs: [4, 5] });
  m.heard(10);
  assert.deepEqual(m.acknowledged(1), [1]);
  m.closed(20, 0);
  assert.deepEqual(m.acknowledged(5), [], "an ack of the dead connection settles nothing");
  assert.deepEqual(m.nextAction(20), { type: "wait", until: 70 });
  welcome(m, 70, [2, 3, 4, 5, 6]);  // 6: another tab spooled it meanwhile
  assert.deepEqual(m.nextAction(70), { type: "send", seqs: [2, 3, 4] });
  assert.deepEqual(m.nextAction(70), { type: "send", seqs: [5, 6] });
});

test("a message spooled below what this connection sent replaces the connection (late)", () => {
  const m = welcomed(0, [10, 11]);
  m.nextAction(0);
  m.spooled([9]);
  const action = m.nextAction(1);
  assert.equal(action.type, "disconnect");
  assert.match(action.reason, /below/);
  assert.equal(m.statistics.lastError, action.reason);
  assert.deepEqual(m.nextAction(1), { type: "connect" }, "at once, no backoff");
  welcome(m, 1, [9, 10, 11]);
  assert.deepEqual(m.nextAction(1), { type: "send", seqs: [9, 10, 11] });
});

test("a message spooled above what was sent is no reason to reconnect", () => {
  const m = welcomed(0, [10, 11]);
  m.nextAction(0);
  m.spooled([12]);
  assert.deepEqual(m.nextAction(1), { type: "send", seqs: [12] });
});

test("messages unacknowledged for ackTimeoutMs: the socket is dropped", () => {
  const m = welcomed(0, [1]);
  assert.deepEqual(m.nextAction(0), { type: "send", seqs: [1] });
  assert.deepEqual(m.nextAction(1499), { type: "wait", until: 1500 });
  const action = m.nextAction(1500);
  assert.equal(action.type, "disconnect");
  assert.match(action.reason, /no acknowledgement/);
  assert.equal(m.link, Link.waiting);
});

test("the ack timeout counts from the send, not from the last reply", () => {
  const m = welcomed(0, [], DELIVERY);
  assert.equal(m.nextAction(20000, HIDDEN).type, "wait");
  m.spooled([1]);
  assert.deepEqual(m.nextAction(20000, HIDDEN), { type: "send", seqs: [1] });
  assert.equal(m.nextAction(20000, HIDDEN).type, "wait", "sent 0 ms ago: not unacknowledged for 15 s");
});

test("a probe after probeAfterMs of silence, only on a visible page; unanswered for probeTimeoutMs: dropped", () => {
  const m = welcomed();
  assert.deepEqual(m.nextAction(2499), { type: "wait", until: 2500 });
  assert.notEqual(m.nextAction(2500, HIDDEN).type, "probe", "a hidden page is not probed");
  assert.deepEqual(m.nextAction(2600, VISIBLE), { type: "probe" });
  assert.deepEqual(m.nextAction(2600), { type: "wait", until: 3600 });
  assert.deepEqual(m.nextAction(3599), { type: "wait", until: 3600 });
  const action = m.nextAction(3600);
  assert.equal(action.type, "disconnect");
  assert.match(action.reason, /probe/);
});

test("a probe answered keeps the connection", () => {
  const m = welcomed();
  assert.deepEqual(m.nextAction(2500), { type: "probe" });
  m.heard(2700);
  m.welcomed({ session: "7" });
  assert.deepEqual(m.nextAction(3600), { type: "wait", until: 5200 }, "the next probe is due probeAfterMs after the answer");
});

test("a hidden page's quiet connection waits for a time to come, not one already past", () => {
  const m = welcomed();
  const action = m.nextAction(3000, HIDDEN);
  assert.equal(action.type, "wait");
  assert.ok(action.until > 3000, `until ${action.until} is not after now`);
});

test("foreground() connects at once when waiting, and probes an open connection", () => {
  const m = new DeliveryStateMachine(LIMITS);
  m.nextAction(0);
  m.connecting(0);
  m.closed(0, 1);
  assert.deepEqual(m.nextAction(10), { type: "wait", until: 100 });
  m.foreground();
  assert.deepEqual(m.nextAction(10), { type: "connect" });
  welcome(m, 10);
  m.foreground();
  assert.deepEqual(m.nextAction(20), { type: "probe" }, "the page may have slept with the socket dead");
});

test("renew() drops an open connection and connects again at once, without an error", () => {
  const m = welcomed(0, [1]);
  m.nextAction(0);
  m.renew();
  assert.deepEqual(m.nextAction(5), { type: "disconnect", reason: null });
  assert.equal(m.statistics.lastError, null);
  assert.deepEqual(m.nextAction(5), { type: "connect" });
  welcome(m, 5, [1]);
  assert.deepEqual(m.nextAction(5), { type: "send", seqs: [1] });
});

test("renew() while waiting connects at once", () => {
  const m = new DeliveryStateMachine(LIMITS);
  m.nextAction(0);
  m.connecting(0);
  m.closed(0, 1);
  m.renew();
  assert.deepEqual(m.nextAction(1), { type: "connect" });
});

test("connecting longer than connectTimeoutMs: given up, and tried again", () => {
  const m = new DeliveryStateMachine(LIMITS);
  m.nextAction(0);
  m.connecting(0);
  assert.deepEqual(m.nextAction(1499), { type: "wait", until: 1500 });
  const action = m.nextAction(1500);
  assert.equal(action.type, "disconnect");
  assert.match(action.reason, /connecting/);
  assert.deepEqual(m.nextAction(1500), { type: "connect" });
  m.connecting(1500);
  m.opened(2000);
  assert.deepEqual(m.nextAction(3000), { type: "hello" }, "opened in time: no timeout");
});

test("batchMessages caps one send; the rest follow", () => {
  const m = welcomed(0, [1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(m.nextAction(0), { type: "send", seqs: [1, 2, 3] });
  assert.deepEqual(m.nextAction(0), { type: "send", seqs: [4, 5, 6] });
  assert.deepEqual(m.nextAction(0), { type: "send", seqs: [7] });
  assert.equal(m.nextAction(0).type, "wait");
});

test("a full socket buffer: sending waits drainPollMs", () => {
  const m = welcomed(0, [1, 2]);
  assert.deepEqual(m.nextAction(0, { visible: true, bufferedBytes: 1001 }), { type: "wait", until: 10 });
  assert.deepEqual(m.nextAction(10, { visible: true, bufferedBytes: 1000 }), { type: "send", seqs: [1, 2] });
});

test("stop(): what is open still sends, a closed socket never connects again", () => {
  const m = welcomed(0, [1]);
  m.stop();
  assert.deepEqual(m.nextAction(0), { type: "send", seqs: [1] }, "stop() waits for the spool to be acknowledged");
  m.closed(10, 0);
  assert.deepEqual(m.nextAction(10), { type: "wait", until: Infinity });
  assert.deepEqual(m.nextAction(1e9), { type: "wait", until: Infinity });
  m.renew();
  assert.deepEqual(m.nextAction(1e9), { type: "wait", until: Infinity });
  const idle = new DeliveryStateMachine(LIMITS);
  idle.stop();
  assert.deepEqual(idle.nextAction(0), { type: "wait", until: Infinity });
});

test("forget() drops seqs another tab settled, sent or not", () => {
  const m = new DeliveryStateMachine(LIMITS);
  m.spooled([1, 2, 3]);
  m.forget([2]);
  welcome(m, 0);
  assert.deepEqual(m.nextAction(0), { type: "send", seqs: [1, 3] });
  m.forget([1]);
  assert.equal(m.unsettled, 1);
  assert.deepEqual(m.acknowledged(3), [3], "a forgotten in-flight seq is not settled again");
  assert.equal(m.statistics.acked, 1);
});
