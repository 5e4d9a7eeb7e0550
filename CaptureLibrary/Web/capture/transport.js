// The socket shell around the delivery machine: a WebSocket to muevald's /capture, timers, and the spool's text.
// It decides nothing: each event goes to the machine, whose next actions it carries out (`drive`).

import { DELIVERY, FRAME_BATCH_CHARS, MAX_FRAME_CHARS, SEND_TASK_CHARS, STOP_POLL_MS } from "./constants.js";
import { DeliveryStateMachine, Link } from "./delivery.js";
import { parseReplies } from "./plist.js";

const OPEN = 1;

/** Text cut into WebSocket messages of at most MAX_FRAME_CHARS UTF-16 units, never cutting a surrogate pair. */
export function* framesOf(text) {
  for (let i = 0; i < text.length;) {
    let j = Math.min(text.length, i + MAX_FRAME_CHARS);
    if (j < text.length && (text.charCodeAt(j) & 0xfc00) === 0xdc00) j--;
    yield text.slice(i, j);
    i = j;
  }
}

export class WebSocketTransport {
  /**
   * `url`: the socket's; `spool`: where the messages are; `hello()`: the <hello> to send; `on`: {welcome(changed),
   * settled(), problem(text)}; `clock`: monotonic milliseconds; `visible()`: whether the page is on screen.
   */
  constructor({ url, spool, hello, on, clock = () => performance.now(), visible = () => document.visibilityState === "visible",
    limits = DELIVERY, WebSocketImpl = globalThis.WebSocket }) {
    Object.assign(this, { url, spool, hello, on, clock, visible, WebSocketImpl });
    this.machine = new DeliveryStateMachine(limits);
    this.socket = null;
    this.timer = null;
    this.outbox = [];        // text messages for this socket not yet handed to it, in order
    this.pumping = null;     // the timer of the outbox's next task
  }

  start() { this.drive(); }

  /** Messages durable in the spool: they may go. */
  spooled(seqs) {
    this.machine.spooled(seqs);
    this.drive();
  }

  foreground() { this.machine.foreground(); this.drive(); }

  renew() { this.machine.renew(); this.drive(); }

  get connected() { return this.machine.link === Link.welcomed; }

  get welcome() { return this.machine.welcome; }

  get statistics() { return this.machine.statistics; }

  /** Carries out the machine's actions until it says to wait; a timer wakes it at the time it names. */
  drive() {
    clearTimeout(this.timer);
    for (;;) {
      const now = this.clock();
      const waiting = this.outbox.reduce((n, text) => n + text.length, 0);
      const action = this.machine.nextAction(now, { visible: this.visible(), bufferedBytes: (this.socket?.bufferedAmount ?? 0) + waiting });
      switch (action.type) {
        case "connect": this.open(now); break;
        case "hello": this.socket.send(this.hello()); this.reload(this.socket); break;
        case "probe": this.socket.send(this.hello()); break;
        case "send": this.send(action.seqs); break;
        case "disconnect": this.detach(); break;
        case "wait":
          if (action.until !== Infinity) this.timer = setTimeout(() => this.drive(), Math.max(0, action.until - now));
          return;
      }
    }
  }

  open(now) {
    this.machine.connecting(now);
    let socket;
    try {
      socket = this.socket = new this.WebSocketImpl(this.url);
    } catch (error) {
      this.socket = null;
      this.on.problem(String(error));
      this.machine.closed(now);
      return;
    }
    const mine = (fn) => (event) => { if (socket === this.socket) { fn(event); this.drive(); } };
    socket.onopen = mine(() => this.machine.opened(this.clock()));
    socket.onmessage = mine((event) => this.receive(String(event.data)));
    socket.onclose = mine(() => { this.dropSocket(); this.machine.closed(this.clock()); });
  }

  /** What another tab of this device (or the page before a reload) spooled meanwhile goes on this connection too. */
  reload(socket) {
    this.spool.reload().catch(() => {}).then(() => {
      if (socket !== this.socket) return;
      this.machine.reloaded(this.spool.seqs());
      this.drive();
    });
  }

  /** Spooled messages in seq order, in text messages of up to FRAME_BATCH_CHARS (a longer message alone, in pieces),
   * through the outbox. */
  send(seqs) {
    let frame = "";
    const gone = [];
    for (const seq of seqs) {
      const xml = this.spool.xml(seq);
      if (xml === undefined) { gone.push(seq); continue; }
      frame += xml;
      if (frame.length > FRAME_BATCH_CHARS) { this.outbox.push(...framesOf(frame)); frame = ""; }
    }
    if (frame) this.outbox.push(...framesOf(frame));
    if (gone.length) this.machine.forget(gone);
    if (!this.pumping) this.pump();  // else behind what waits for the next task
  }

  /** Hands the outbox to the socket, at most `perTask` characters (at least one text message) now and the rest in the
   * next tasks: the socket encodes and copies each on the main thread (a view's event of 540K characters was a 50 ms
   * task on a phone throttled 4×). A hidden page hands over everything at once: nothing on screen waits, and its
   * timers are throttled to one a second or less. */
  pump(perTask = this.visible() ? SEND_TASK_CHARS : Infinity) {
    clearTimeout(this.pumping);
    this.pumping = null;
    for (let chars = 0; this.outbox.length && this.socket && (!chars || chars + this.outbox[0].length <= perTask);) {
      const text = this.outbox.shift();
      this.socket.send(text);
      chars += text.length;
    }
    if (this.outbox.length && this.socket) this.pumping = setTimeout(() => this.pump(), 0);
  }

  receive(text) {
    const now = this.clock();
    this.machine.heard(now);
    for (const m of parseReplies(text)) {
      if (m.type === "welcome") {
        this.on.welcome(this.machine.welcomed(m));
      } else if (m.type === "ack") {
        this.spool.remove(this.machine.acknowledged(m.seq));
        this.on.settled();
      } else {
        const { reason, settled, disconnect } = this.machine.refused(m, now);
        this.spool.remove(settled);
        this.on.problem(reason);
        if (disconnect) this.detach();
      }
    }
  }

  /** Forgets the socket (its events are no longer this transport's) and closes it. */
  detach() {
    const socket = this.socket;
    this.dropSocket();
    socket?.close();
  }

  /** The socket and its outbox gone: what the outbox held is sent again on the next connection (it is unacknowledged). */
  dropSocket() {
    this.socket = null;
    this.outbox = [];
    clearTimeout(this.pumping);
    this.pumping = null;
  }

  /** Waits up to `timeoutMs` for what is spooled to be acknowledged, says goodbye (an invited session then ends), closes. */
  async stop(timeoutMs) {
    this.machine.stop();
    const deadline = this.clock() + timeoutMs;
    while (this.machine.unsettled && this.socket?.readyState === OPEN && this.clock() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, STOP_POLL_MS));
    }
    this.pump(Infinity);  // what is still in the outbox goes before the goodbye
    if (this.connected && this.socket?.readyState === OPEN) this.socket.send("<goodbye/>\n");
    clearTimeout(this.timer);
    this.detach();
  }
}
