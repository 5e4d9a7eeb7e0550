// Think-aloud: the microphone as 16 kHz mono 16-bit PCM, sent as `audio/wav` <media> chunks of about a second
// (docs/PROTOCOL.md, "Media"). The AudioWorklet's code is a string here, loaded from a Blob URL, so that the library
// is still a folder of modules with nothing to build.

import { AUDIO_FLUSH_MS, AUDIO_RATE, SAMPLE } from "../constants.js";
import { encodeFields } from "../plist.js";
import { Listeners } from "../listeners.js";

/** Mono, averaged down to AUDIO_RATE (a box filter: enough for speech), 16-bit, posted about once a second. */
const WORKLET = `registerProcessor("mueval-pcm", class extends AudioWorkletProcessor {
  constructor() { super(); this.step = sampleRate / ${AUDIO_RATE}; this.pos = 0; this.sum = 0; this.n = 0; this.fresh();
    this.port.onmessage = () => { if (this.len) this.port.postMessage(this.out.slice(0, this.len).buffer); this.fresh(); }; }
  fresh() { this.out = new Int16Array(${AUDIO_RATE}); this.len = 0; }
  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    if (ch) for (let i = 0; i < ch.length; i++) {
      this.sum += ch[i]; this.n++;
      if (++this.pos >= this.step) {
        this.pos -= this.step;
        this.out[this.len++] = Math.max(-32768, Math.min(32767, Math.round(this.sum / this.n * 32767)));
        this.sum = 0; this.n = 0;
        if (this.len === this.out.length) { this.port.postMessage(this.out.buffer, [this.out.buffer]); this.fresh(); }
      }
    }
    return true;
  }
});`;

/** RIFF/WAVE header of 16-bit mono PCM whose sizes are unknown while recording (0xFFFFFFFF: muevald sets them). */
export function wavHeader(rate = AUDIO_RATE) {
  const b = new DataView(new ArrayBuffer(44));
  const text = (at, s) => [...s].forEach((c, i) => b.setUint8(at + i, c.charCodeAt(0)));
  text(0, "RIFF"); b.setUint32(4, 0xffffffff, true); text(8, "WAVEfmt "); b.setUint32(16, 16, true);
  b.setUint16(20, 1, true); b.setUint16(22, 1, true); b.setUint32(24, rate, true); b.setUint32(28, rate * 2, true);
  b.setUint16(32, 2, true); b.setUint16(34, 16, true); text(36, "data"); b.setUint32(40, 0xffffffff, true);
  return new Uint8Array(b.buffer);
}

export class MicrophoneSource {
  /** `host`: {enqueue(name, head, tail, tier), now() (device seconds), problem(text)}. */
  constructor(host) {
    this.host = host;
    this.listeners = new Listeners();
    this.recording = null;
  }

  /** Asks for the microphone and records until stop(). Refused or missing: a problem, and capture goes on. */
  async start() {
    if (this.recording) return;
    const recording = this.recording = { stopped: false, finish: null };
    try {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
      const context = new AudioContext();
      const url = URL.createObjectURL(new Blob([WORKLET], { type: "text/javascript" }));
      await context.audioWorklet.addModule(url);
      URL.revokeObjectURL(url);
      const node = new AudioWorkletNode(context, "mueval-pcm");
      context.createMediaStreamSource(stream).connect(node);
      node.connect(context.destination);  // pulls the node; it outputs silence
      // Each recording is a stream of its own: (device, stream, part) must not repeat after a reload.
      const chunks = { stream: "voice-" + Date.now(), part: 0, samples: 0, start: 0 };
      node.port.onmessage = (e) => this.chunk(chunks, new Int16Array(e.data));
      recording.finish = () => {
        node.port.postMessage("flush");
        setTimeout(() => { stream.getTracks().forEach((t) => t.stop()); context.close(); }, AUDIO_FLUSH_MS);
      };
      if (recording.stopped) return recording.finish();
      // Autoplay rules may hold the context until a tap.
      const resume = () => context.state === "suspended" && context.resume();
      resume();
      this.listeners.add(window, "click", resume);
      this.listeners.add(window, "touchend", resume);
    } catch (error) {
      this.recording = null;
      this.host.problem(`think-aloud is off: the microphone is not available (${error})`);
    }
  }

  stop() {
    const recording = this.recording;
    if (!recording) return;
    this.recording = null;
    recording.stopped = true;
    recording.finish?.();
    this.listeners.clear();
  }

  /** A chunk of PCM as a <media> part; the first carries the WAV header. */
  chunk(chunks, pcm) {
    const duration = pcm.length / AUDIO_RATE;
    if (chunks.part === 0) chunks.start = this.host.now() - duration;
    const bytes = new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    let data = bytes;
    if (chunks.part === 0) {
      data = new Uint8Array(44 + bytes.length);
      data.set(wavHeader());
      data.set(bytes, 44);
    }
    const head = encodeFields({ stream: chunks.stream, kind: "audio", contentType: "audio/wav", part: chunks.part++,
      start: Math.round((chunks.start + chunks.samples / AUDIO_RATE) * 1000) / 1000, duration });
    chunks.samples += pcm.length;
    this.host.enqueue("media", head, encodeFields({ data }), SAMPLE);
  }
}
