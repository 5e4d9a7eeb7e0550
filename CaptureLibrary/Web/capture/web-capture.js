// One capture of this page: the spool, the recorder, the transport and the event sources, wired together. Each part
// has one job in a module of its own (docs/WEB-CAPTURE.md, "The library's map"); this one only connects them and
// answers the public API.

import { DEFAULTS, MASK_MODES, SPOOL_DATABASE_PREFIX, SPOOL_REPORT_BELOW, STOP_TIMEOUT_MS } from "./constants.js";
import { DeviceClock } from "./clock.js";
import { thisDevice } from "./device.js";
import { Overlay } from "./overlay.js";
import { encodeFields } from "./plist.js";
import { Recorder } from "./recorder.js";
import { Spool } from "./spool.js";
import { randomId, stored } from "./storage.js";
import { WebSocketTransport } from "./transport.js";
import { ControlsSource } from "./sources/controls.js";
import { ErrorsSource } from "./sources/errors.js";
import { FingersSource } from "./sources/fingers.js";
import { FramesSource } from "./sources/frames.js";
import { LifecycleSource } from "./sources/lifecycle.js";
import { MicrophoneSource } from "./sources/microphone.js";
import { MotionSource } from "./sources/motion.js";
import { TextSource } from "./sources/text.js";
import { ViewsSource } from "./sources/views.js";

/** start()'s options with their defaults, checked: an option given as undefined keeps its default. */
export function captureOptions(given, moduleOrigin) {
  const options = { ...DEFAULTS };
  for (const key in given) if (given[key] !== undefined) options[key] = given[key];
  const server = new URL(options.server || moduleOrigin);
  if (!["http:", "https:", "ws:", "wss:"].includes(server.protocol)) throw new Error(`muEval: server must be an http(s) origin, not ${given.server}`);
  if (!(options.maxSpoolBytes > 0)) throw new Error(`muEval: maxSpoolBytes must be a positive number, not ${given.maxSpoolBytes}`);
  if (!MASK_MODES.includes(options.mask)) throw new Error(`muEval: mask must be "inputs", "all" or "none", not ${given.mask}`);
  options.server = server.origin;
  options.socketURL = `${server.protocol.replace("http", "ws")}//${server.host}/capture`;
  return options;
}

export class Capture extends EventTarget {
  constructor(options) {
    super();
    this.options = options;
    this.clock = new DeviceClock();
    this.lastError = null;
    this.lastInput = 0;
    this.stopped = false;
    this.selection = [];  // the session's sensors; empty: everything
    const host = this.host();
    this.frames = new FramesSource(host);
    this.fingers = new FingersSource(host);
    this.text = new TextSource(host);
    this.views = new ViewsSource(host, this.frames);
    this.lifecycle = new LifecycleSource(host, {
      hiding: () => { this.frames.end(); this.text.flush(); this.page?.flush(); },
      flush: () => this.recorder.flush(),
      showing: () => { this.clock.reanchor(); this.transport.foreground(); },
      renew: () => this.transport.renew(),
    });
    this.sources = [this.lifecycle, new ErrorsSource(host), this.fingers, new ControlsSource(host, this.fingers), this.text, this.views];
    this.sensors = { accelerometer: new MotionSource(host), frameTiming: this.frames, microphone: new MicrophoneSource(host) };
  }

  /** What the event sources may use of the capture. */
  host() {
    return {
      record: (...args) => this.recorder.record(...args),
      recordEncoded: (...args) => this.recorder.recordEncoded(...args),
      enqueue: (...args) => this.recorder.enqueue(...args),
      mask: this.options.mask,
      now: () => this.clock.now(),
      view: () => this.views.current,
      isOverlay: (el) => !!this.overlay && el === this.overlay.host,
      overlayElement: () => this.overlay?.host,
      activate: () => { this.lastInput = performance.now(); },
      lastInput: () => this.lastInput,
      rendering: (ms) => this.frames.rendering(ms),
      hidden: () => this.lifecycle.hidden,
      problem: (text) => this.problem(text),
      routed: (transition) => this.page?.navigated(transition),
    };
  }

  /** The page recording (option `dom`, experimental), a source like the others: its records are events whose one
   * field, `dom`, is the record's JSON (docs/WEB-CAPTURE.md, "Page recording"). Its modules are imported only then,
   * so that a phone that does not record the page does not fetch them; failing that, capture goes on without it. */
  async addPageRecorder() {
    const host = this.host();
    try {
      const { DomRecorder } = await import("./page/dom-recorder.js");
      this.page = new DomRecorder({
        mask: this.options.mask,
        skip: host.isOverlay,
        emit: (cls, json, tier) => this.recorder.record(cls, { dom: json }, tier),
        spool: () => ({ dropped: this.spool.dropped, room: this.spool.bytes < this.spool.maxBytes * SPOOL_REPORT_BELOW }),
        problem: host.problem,
      });
      this.sources.push(this.page);
    } catch (error) {
      this.problem(`the page cannot be recorded: ${error}`);
    }
  }

  /** Opens the spool, names the device, starts the sources and the transport. */
  async open() {
    const o = this.options;
    this.spool = await Spool.open(SPOOL_DATABASE_PREFIX + o.server, o.maxSpoolBytes);
    // The device's id is kept with the spool (IndexedDB is written at once; a killed browser may lose the last of
    // localStorage), so that what is spooled is always sent as the device that recorded it. The invitation outlives
    // a navigation that drops ?mueval= and a reload: kept until stop().
    const saved = (await this.spool.meta("device").catch(() => null)) || {};
    this.deviceId = saved.id || stored("device") || "web-" + randomId();
    const query = new URLSearchParams(location.search).get("mueval");
    this.invitation = o.invitation || query || (o.pairingCode ? null : saved.invitation || stored("invitation"));
    stored("device", this.deviceId);
    stored("invitation", this.invitation);
    await this.spool.meta("device", { id: this.deviceId, invitation: this.invitation });
    this.recorder = new Recorder({ spool: this.spool, clock: this.clock, on: {
      spooled: (seqs) => this.transport.spooled(seqs), problem: (text) => this.problem(text) } });
    this.transport = new WebSocketTransport({ url: o.socketURL, spool: this.spool, hello: () => this.hello(), on: {
      welcome: (changed) => this.welcomed(changed), settled: () => this.settled(), problem: (text) => this.problem(text) } });
    if (o.overlay) this.overlay = new Overlay({ mark: (marker, task) => this.mark(marker, task), stop: () => this.stop() });
    this.recorder.record("ApplicationEvent", { type: "launch", appId: o.appId, appVersion: o.appVersion });
    this.applySelection();
    if (o.dom) await this.addPageRecorder();
    for (const source of this.sources) source.start();
    this.transport.start();
  }

  /** Acks came: the spool may have room again for what it dropped. */
  settled() {
    this.recorder.reportDropped();
    this.page?.heal();
  }

  hello() {
    const o = this.options;
    return `<hello>${encodeFields({ protocolVersion: 1, deviceId: this.deviceId, ...thisDevice(), appId: o.appId, appVersion: o.appVersion,
      token: o.token, pairing: o.pairingCode, invitation: this.invitation })}</hello>\n`;
  }

  welcomed(changed) {
    const welcome = this.transport.welcome;
    this.lastError = null;
    this.selection = welcome.sensors;
    this.applySelection();
    if (!changed) return;
    this.overlay?.study(welcome.session, this.tasks(), welcome.questionnaire);
    this.dispatchEvent(new CustomEvent("welcome", { detail: this.status() }));
  }

  /** Whether the app allows `sensor` and the session selects it (before the welcome: all the app allows but the microphone). */
  selects(sensor) {
    const s = this.selection;
    if (!this.options.sensors.includes(sensor)) return false;
    if (sensor === "microphone") return !!this.transport.welcome && (!s.length || s.includes(sensor));
    return !s.length || s.includes(sensor) || s.includes("DeviceSensorEvent");
  }

  /** Sensors on and off as the session selects them. */
  applySelection() {
    if (this.stopped) return;
    for (const [name, source] of Object.entries(this.sensors)) {
      if (this.selects(name)) source.start(); else source.stop();
    }
  }

  /** Stops: sources off, waits up to `timeout` ms for what is spooled to be acknowledged, says goodbye. */
  async stop({ timeout = STOP_TIMEOUT_MS } = {}) {
    if (this.stopped) return this.status();
    this.stopped = true;
    // What a source is still taking (a view's tree, a page snapshot) is recorded before the goodbye.
    await Promise.all([...this.sources, ...Object.values(this.sensors)].map((source) => source.stop()));
    await this.recorder.flush();
    await this.transport.stop(timeout);
    this.overlay?.remove();
    stored("invitation", null);
    await this.spool.meta("device", { id: this.deviceId }).catch(() => {});
    this.dispatchEvent(new CustomEvent("stopped", { detail: this.status() }));
    return this.status();
  }

  /** What tests and apps may read: delivery, the session, the spool. */
  status() {
    const t = this.transport, counts = t?.statistics ?? { sent: 0, acked: 0, refused: 0 };
    return { connected: !!t?.connected, sessionId: t?.welcome?.session ?? null, spooled: (this.spool?.size ?? 0) + (this.recorder?.queued ?? 0),
      spoolBytes: this.spool?.bytes ?? 0, dropped: this.spool?.dropped ?? 0, sent: counts.sent, acked: counts.acked, refused: counts.refused,
      lastError: this.lastError, deviceId: this.deviceId, tasks: this.tasks(), questionnaire: t?.welcome?.questionnaire ?? null };
  }

  tasks() { return [...(this.transport?.welcome?.tasks || [])].sort((a, b) => (a.order ?? 0) - (b.order ?? 0)); }

  problem(text) {
    this.lastError = text;
    this.dispatchEvent(new CustomEvent("problem", { detail: text }));
  }

  /** An application's own event (CustomEvent): `name` and whatever fields it wants stored. */
  event(name, fields = {}) {
    const { class: _class, timestamp: _timestamp, seq: _seq, name: _name, ...rest } = fields;
    return this.recorder.record("CustomEvent", { name: String(name), ...rest });
  }

  /** The tester's own task marks; a task the welcome does not name is refused (as MuEvalCapture does). */
  mark(marker, name) {
    const tasks = this.tasks();
    if (tasks.length && !tasks.some((t) => t.name === name)) {
      throw new Error(`the study has no task "${name}"; its tasks: ${tasks.map((t) => t.name).join(", ")}`);
    }
    this.lastInput = performance.now();
    return this.recorder.record("CustomEvent", { name, marker, by: "tester" });
  }

  beginTask(name) { return this.mark("begin", name); }
  endTask(name) { return this.mark("end", name); }
  giveUpTask(name) { return this.mark("giveUp", name); }
}
