// transport.js's outbox: a visible page's batch text is handed to the socket at most SEND_TASK_CHARS per task (at
// least one text message), in order, with later batches behind it, a hidden page's at once; a closed socket's outbox is
// dropped (its messages are sent again on the next connection); stop() hands over the rest before the goodbye.

import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_FRAME_CHARS, SEND_TASK_CHARS } from "../../CaptureLibrary/Web/capture/constants.js";
import { WebSocketTransport, framesOf } from "../../CaptureLibrary/Web/capture/transport.js";

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 5));

/** A transport welcomed on a fake socket, over a spool of `messages` (seq → its wire text), empty until then. */
async function connected(messages = new Map(), page = { visible: true }) {
  const sockets = [];
  class FakeSocket {
    constructor() { Object.assign(this, { sent: [], readyState: 0, bufferedAmount: 0 }); sockets.push(this); }
    send(text) { this.sent.push(text); }
    close() { this.readyState = 3; }
  }
  const spool = { xml: (seq) => messages.get(seq), seqs: () => [...messages.keys()], reload: async () => {}, remove: () => {} };
  const transport = new WebSocketTransport({ url: "ws://lab.example.org/capture", spool, hello: () => "<hello/>\n", visible: () => page.visible,
    on: { welcome() {}, settled() {}, problem() {} }, WebSocketImpl: FakeSocket });
  transport.start();
  const socket = sockets[0];
  socket.readyState = 1;
  socket.onopen();
  await nextTask();  // the spool read again
  socket.onmessage({ data: "<welcome><key>session</key><string>7</string></welcome>" });
  socket.sent = [];
  return { transport, socket, sockets };
}

const message = (seq, chars) => `<event><key>seq</key><integer>${seq}</integer>${"x".repeat(chars)}</event>\n`;

test("framesOf cuts text at MAX_FRAME_CHARS, never inside a surrogate pair", () => {
  const text = "a".repeat(MAX_FRAME_CHARS - 1) + "😀" + "b";
  const frames = [...framesOf(text)];
  assert.deepEqual(frames.map((f) => f.length), [MAX_FRAME_CHARS - 1, 3]);
  assert.equal(frames.join(""), text);
});

test("a large batch goes to the socket over several tasks, in order, with the next batch behind it", async () => {
  const messages = new Map();
  const { transport, socket } = await connected(messages);
  const pump = transport.pump.bind(transport), perTask = [];
  transport.pump = (...args) => {
    const before = socket.sent.length;
    pump(...args);
    perTask.push(socket.sent.slice(before).reduce((chars, text) => chars + text.length, 0));
  };
  for (const [seq, chars] of [[1, 300000], [2, 10], [3, 200000]]) messages.set(seq, message(seq, chars));
  transport.spooled([1, 2, 3]);
  const first = socket.sent.length;
  messages.set(4, message(4, 5));
  transport.spooled([4]);
  assert.equal(socket.sent.length, first, "the new batch waits behind what is in the outbox");
  for (let n = 0; n < 10 && transport.outbox.length; n++) await nextTask();
  assert.equal(socket.sent.join(""), [1, 2, 3, 4].map((seq) => messages.get(seq)).join(""));
  assert.ok(perTask.length >= 3, `${perTask} characters a task`);
  for (const chars of perTask) assert.ok(chars <= Math.max(SEND_TASK_CHARS, MAX_FRAME_CHARS), `${chars} characters in one task`);
  await transport.stop(0);
});

test("a hidden page hands a large batch to the socket at once (its timers are throttled)", async () => {
  const messages = new Map(), page = { visible: true };
  const { transport, socket } = await connected(messages, page);
  page.visible = false;
  messages.set(1, message(1, 600000));
  transport.spooled([1]);
  assert.equal(socket.sent.join(""), messages.get(1));
  await transport.stop(0);
});

test("a closed socket's outbox is dropped; stop() hands the outbox over before the goodbye", async () => {
  const messages = new Map();
  const first = await connected(messages);
  messages.set(1, message(1, 600000));
  first.transport.spooled([1]);
  first.socket.onclose();
  await nextTask();
  assert.equal(first.transport.outbox.length, 0);
  assert.ok(first.socket.sent.join("").length < 600000);
  await first.transport.stop(0);
  messages.delete(1);
  const { transport, socket } = await connected(messages);
  messages.set(1, message(1, 600000));
  transport.spooled([1]);
  await transport.stop(0);
  assert.equal(socket.sent.join(""), messages.get(1) + "<goodbye/>\n");
});
