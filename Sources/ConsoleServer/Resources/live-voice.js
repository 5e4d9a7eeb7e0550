// The live page's Listen (docs/CONSOLE.md, "Think-aloud on the replay"): the tester's voice as it arrives, about two
// seconds behind. Moved out of live.js as it is.
//
// The session's WAV stream, polled every second by byte range from where the last poll ended, and
// scheduled gaplessly with Web Audio: about two seconds behind the tester (one chunk, one poll).
// A PCM WAV is what Web Audio takes a piece of without a decoder; AAC in MP4 would need Media
// Source Extensions and is not played live (the replay plays it).

import { api } from "./common.js";

const LIVE_LAG = 2;          // seconds of audio before now the playing starts from
let voice = null;            // { context, url, offset, rate, dataStart, next }
let listenButton = null;
let sessionID = null;

async function listenPoll() {
  while (voice) {
    try {
      const overview = await api(`/api/sessions/${encodeURIComponent(sessionID)}/media`, { quiet: true });
      const entry = overview.streams.find((s) => s.stream.kind === "audio" && s.stream.contentType === "audio/wav");
      if (entry) await listenFetch(entry);
    } catch (error) {
      // A lost poll is retried at the next one.
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

async function listenFetch(entry) {
  if (voice.url !== entry.url) {
    // The header says the rate; playing starts LIVE_LAG seconds before the stream's end.
    const head = new DataView(await (await fetch(entry.url, { headers: { Range: "bytes=0-43" } })).arrayBuffer());
    const rate = head.getUint32(24, true);
    const dataStart = 44;
    const lag = Math.floor(LIVE_LAG * rate) * 2;
    Object.assign(voice, { url: entry.url, rate, dataStart, offset: Math.max(dataStart, entry.stream.bytes - lag) });
    voice.offset -= (voice.offset - dataStart) % 2;
  }
  const response = await fetch(voice.url, { headers: { Range: `bytes=${voice.offset}-` } });
  if (response.status !== 206) return;
  const bytes = new Uint8Array(await response.arrayBuffer());
  const usable = bytes.length - (bytes.length % 2);
  if (usable === 0) return;
  voice.offset += usable;
  const samples = new Int16Array(bytes.buffer, bytes.byteOffset, usable / 2);
  const buffer = voice.context.createBuffer(1, samples.length, voice.rate);
  const channel = buffer.getChannelData(0);
  for (let i = 0; i < samples.length; i++) channel[i] = samples[i] / 32768;
  const source = voice.context.createBufferSource();
  source.buffer = buffer;
  source.connect(voice.context.destination);
  voice.next = Math.max(voice.next, voice.context.currentTime + 0.05);
  source.start(voice.next);
  voice.next += buffer.duration;
  listenButton.dataset.bytes = String(Number(listenButton.dataset.bytes || 0) + usable);
}

/** Wires the Listen button (#listen: data-listening, data-bytes: audio bytes played so far) of session `id`. */
export function setupListen(id, button) {
  sessionID = id;
  listenButton = button;
  listenButton.addEventListener("click", toggle);
}

function toggle() {
  if (voice) {
    voice.context.close();
    voice = null;
    listenButton.textContent = "🔊 Listen";
    listenButton.dataset.listening = "false";
    return;
  }
  voice = { context: new AudioContext(), url: null, offset: 0, rate: 16000, dataStart: 44, next: 0 };
  listenButton.textContent = "🔇 Stop listening";
  listenButton.dataset.listening = "true";
  listenPoll();
}
