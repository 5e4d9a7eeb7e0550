// Replay page (/sessions/ID/replay[?t=SECONDS]): plays a session from its replay index, a file read by
// byte ranges (docs/CONSOLE.md, "The replay index"): its head (times, the chunk table, marks) and the
// chunks of events around the playhead and the rows in view, loaded as playing, seeking or scrolling
// needs them; an event's details and the screenshots load on demand too. The playhead is in seconds
// from the index's start (the first event, device time); the URL keeps ?t= when pausing or seeking.
//
// Test hooks: body[data-ready=true] once the index is shown; #play [data-testid=play] (text Play/
// Pause, data-playing), #speed, #skip-idle, #idle-seconds, #scrubber (input range, seconds),
// #time (data-t: playhead seconds), #marks (div.mark[data-kind][data-t] per note/problem),
// canvas #screen (data-sha: screenshot drawn, data-touches), #current-view,
// #events: a window of rows div.ev[data-testid=event-row][data-index][data-event-id][data-t]
// (.current = the event at the playhead; click seeks there; .pending while its chunk loads), #class-filter (select),
// #event-detail (the clicked event as JSON), note box as on the live page.
// Media (think-aloud, replay-media.js): #media shown when the session has streams; <audio id=voice> and <video id=face>
// play in sync with the playhead (media time = device time - the stream's start; data-offset on each
// element is that start minus t0), #caption (data-exclamation) the transcript segment at the playhead,
// #transcription the transcription's progress until it is done.
// The page itself (page-replay.js, a web session with page records): #page-view in place of #screen (hidden),
// iframe #page-frame (data-applied: the last record's id, data-at: the device time shown, data-frozen), and the
// touches on canvas #page-touches (data-touches).

import {
  api, dataSHA, el, formatClock, formatDuration, isTyping, me, run, sessionIDFromPath, setChildren,
  setupNoteBox, showError, stateBadge,
} from "./common.js";
import { mayHavePage, openPageReplay } from "./page-replay.js";
import { ReplayMedia } from "./replay-media.js";
import { ScreenView } from "./screen.js";
import { EventClass } from "./vocabulary.js";

const ROW = 22;              // px per event row (console.css .ev height)
const OVERSCAN = 12;         // rows rendered above and below the visible ones
const TRAIL = 1.6;           // seconds of touches drawn before the playhead
const IDLE_LANDING = 0.5;    // skipping a gap lands this long before the next event
const FIRST_READ = 256 * 1024;   // bytes of the index asked for first: the head, and often the first chunks
const READ_LIMIT = 4 * 1024 * 1024; // bytes per range asked for (muevald answers at most 4 MiB)
const AHEAD = 2;             // chunks loaded ahead of the playhead

const sessionID = sessionIDFromPath();
const page = `/sessions/${encodeURIComponent(sessionID)}`;
const indexURL = `/api/sessions/${encodeURIComponent(sessionID)}/replay/index`;
document.getElementById("details-link").setAttribute("href", page);
document.getElementById("live-link").setAttribute("href", `${page}/live`);

const wireframe = new ScreenView(document.getElementById("screen"), sessionID, { holdSeconds: 3 });
let screen = wireframe;      // where the moment is drawn: the wireframe, or the touches over the page (page mode)
let pageReplay = null;       // the page itself (page-replay.js), for a web session with page records
const playButton = document.getElementById("play");
const scrubber = document.getElementById("scrubber");
const timeLabel = document.getElementById("time");
const speedSelect = document.getElementById("speed");
const skipIdle = document.getElementById("skip-idle");
const idleSeconds = document.getElementById("idle-seconds");
const list = document.getElementById("events");
const spacer = document.getElementById("events-spacer");
const classFilter = document.getElementById("class-filter");
const detail = document.getElementById("event-detail");

let index = null;            // the index's head (docs/CONSOLE.md, "The replay index")
let etag = null;             // the file the head came from: every range asks for the same one
let base = 0;                // where the chunks begin in the file
let chunks = [];             // chunk number → {first, id, t, c (into classNames), s, screenshots, touches, views} once loaded
let loading = new Map();     // chunk number → the promise loading it
let chunkFirst = [];         // chunk number → its first event's index
let chunkT = [];             // chunk number → its earliest time
let classNames = [];         // every class name seen, the filter's values index it
let classNumbers = new Map();
let t0 = 0;                  // device time of the playhead's zero
let duration = 0;
let visible = null;          // Int32Array of event indices shown (class filter), null = all
let wantedClass = null;      // the filter's class while its chunks load
let playhead = 0;
let playing = false;
let lastFrame = 0;
let currentEvent = -1;       // index of the last event at or before the playhead
let scrubbing = false;
const media = new ReplayMedia();

function syncMedia(force = false) {
  media.sync(t0 + playhead, { playing, rate: Number(speedSelect.value), force });
}

function loadMedia(overview) {
  media.load(overview, t0, () => syncMedia(true));
  syncMedia(true);
}

/** First index whose value is greater than x (arrays ascending). */
function upperBound(values, x, count = values.length, at = (i) => values[i]) {
  let low = 0;
  let high = count;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (at(mid) <= x) low = mid + 1; else high = mid;
  }
  return low;
}

// ---------------------------------------------------------------- the index, by ranges

/** The head changed under the page (the index was made again): it reads the head again. */
class StaleIndex extends Error {}

/** Bytes [from, to) of the index file, of the version whose head the page holds (If-Match). */
async function readRange(from, to) {
  const headers = { Range: `bytes=${from}-${to - 1}` };
  if (etag) headers["If-Match"] = etag;
  const response = await fetch(indexURL, { credentials: "same-origin", headers });
  if (response.status === 401) { location.reload(); throw new Error("Not logged in"); }
  if (response.status === 412) throw new StaleIndex("the replay index was made again");
  if (response.status !== 206 && response.status !== 200) {
    const text = await response.text();
    let message = `${response.status} ${response.statusText}`;
    try { message = JSON.parse(text).error ?? message; } catch { /* not JSON */ }
    throw new Error(message);
  }
  return { bytes: new Uint8Array(await response.arrayBuffer()), etag: response.headers.get("ETag") };
}

const decoder = new TextDecoder();

/** Reads the preamble and the head (and whatever chunks came with it); resets what was loaded. */
async function loadHead() {
  etag = null;
  const first = await readRange(0, FIRST_READ);
  const words = decoder.decode(first.bytes.subarray(0, 64)).trim().split(/\s+/);
  if (words[0] !== "mueval-replay-index" || words[1] !== "2") throw new Error("the replay index is of an unknown version");
  const headBytes = Number(words[3]);
  etag = first.etag;
  base = 64 + headBytes;
  let bytes = first.bytes;
  if (bytes.length < base) {
    const more = await readRange(bytes.length, base);
    const whole = new Uint8Array(base);
    whole.set(bytes);
    whole.set(more.bytes, bytes.length);
    bytes = whole;
  }
  index = JSON.parse(decoder.decode(bytes.subarray(64, base)));
  chunks = new Array(index.chunks.length).fill(null);
  loading = new Map();
  chunkFirst = index.chunks.map((chunk) => chunk.first);
  chunkT = index.chunks.map((chunk) => chunk.t);
  classNames = [];
  classNumbers = new Map();
  for (const name of index.classes) classNumber(name);
  // The chunks that came whole with the head need no request of their own.
  index.chunks.forEach((entry, k) => {
    if (base + entry.offset + entry.bytes <= bytes.length) addChunk(k, bytes.subarray(base + entry.offset, base + entry.offset + entry.bytes));
  });
}

function classNumber(name) {
  let number = classNumbers.get(name);
  if (number === undefined) {
    number = classNames.length;
    classNames.push(name);
    classNumbers.set(name, number);
    classFilter.append(el("option", { value: String(number) }, name));
  }
  return number;
}

function addChunk(k, bytes) {
  const chunk = JSON.parse(decoder.decode(bytes));
  const numbers = chunk.classes.map(classNumber);
  chunk.c = Int32Array.from(chunk.c, (c) => numbers[c] ?? -1);
  chunks[k] = chunk;
}

/** Loads chunks from..to (inclusive) that are not loaded, a few ranges at most; resolves when they are. */
function ensureChunks(from, to) {
  from = Math.max(0, from);
  to = Math.min(chunks.length - 1, to);
  const waits = [];
  let batch = [];
  const flush = () => {
    if (!batch.length) return;
    const numbers = batch;
    batch = [];
    const start = index.chunks[numbers[0]].offset;
    const end = index.chunks[numbers[numbers.length - 1]].offset + index.chunks[numbers[numbers.length - 1]].bytes;
    const promise = readRange(base + start, base + end).then(({ bytes }) => {
      for (const k of numbers) {
        const entry = index.chunks[k];
        addChunk(k, bytes.subarray(entry.offset - start, entry.offset - start + entry.bytes));
        loading.delete(k);
      }
    }, (error) => {
      for (const k of numbers) loading.delete(k);
      throw error;
    });
    for (const k of numbers) loading.set(k, promise);
    waits.push(promise);
  };
  for (let k = from; k <= to; k++) {
    if (chunks[k]) { flush(); continue; }
    if (loading.has(k)) { flush(); waits.push(loading.get(k)); continue; }
    const entry = index.chunks[k];
    if (batch.length && entry.offset + entry.bytes - index.chunks[batch[0]].offset > READ_LIMIT) flush();
    batch.push(k);
  }
  flush();
  return Promise.all(waits);
}

/** Loads chunks in the background and draws again when they are there; a stale head is read again. */
function want(from, to) {
  const before = loading.size;
  const done = ensureChunks(from, to);
  if (loading.size === before) return;
  done.then(() => { renderMoment(); renderRows(); }, (error) => {
    if (error instanceof StaleIndex) run(reload()); else showError(`Cannot load the replay: ${error.message}`);
  });
}

/** The chunk holding event `i`. */
function chunkOfEvent(i) { return upperBound(chunkFirst, i) - 1; }

/** The chunk where the playhead at device time `now` is: the last that begins at or before it. */
function chunkOfTime(now) { return Math.max(0, upperBound(chunkT, now) - 1); }

/** Event `i`'s device time, or undefined while its chunk loads. */
function eventTime(i) {
  const k = chunkOfEvent(i);
  const chunk = chunks[k];
  return chunk ? chunk.t[i - chunk.first] : undefined;
}

/** Index of the last event at or before device time `now` (-1: none); the chunk's first while it loads. */
function eventAt(now) {
  if (!chunks.length || now < chunkT[0]) return -1;
  const k = chunkOfTime(now);
  const chunk = chunks[k];
  if (!chunk) return chunkFirst[k];
  return chunk.first + upperBound(chunk.t, now) - 1;
}

/** The last item of `key` (screenshots, views) at or before `now`, else what was in effect where its chunk began. */
function lastAt(key, now) {
  const k = chunkOfTime(now);
  const chunk = chunks[k];
  const items = chunk?.[key] ?? [];
  const found = upperBound(items, now, items.length, (i) => items[i].t) - 1;
  if (found >= 0) return items[found];
  const entry = index.chunks[k];
  const before = key === "screenshots" ? entry?.screenshot : entry?.view;
  return before && before.t <= now ? before : null;
}

/** Touches in (from, now]: of the playhead's chunk and the one before it. */
function touchesBetween(from, now) {
  const k = chunkOfTime(now);
  const touches = [];
  for (const chunk of [chunks[k - 1], chunks[k]]) {
    for (const touch of chunk?.touches ?? []) if (touch.t > from && touch.t <= now) touches.push(touch);
  }
  return touches;
}

// ---------------------------------------------------------------- the moment

function renderMoment() {
  if (!index) return;
  const now = t0 + playhead;
  const k = chunkOfTime(now);
  want(k - 1, k + AHEAD);
  const shot = lastAt("screenshots", now);
  screen.showScreenshot(shot?.sha ?? null);
  const shots = chunks[k]?.screenshots ?? [];
  const next = upperBound(shots, now, shots.length, (i) => shots[i].t);
  for (let ahead = 0; ahead < 2; ahead++) screen.preload(shots[next + ahead]?.sha ?? chunks[k + 1]?.screenshots[ahead]?.sha);
  screen.setTouches(touchesBetween(now - TRAIL, now));
  screen.render(now);
  pageReplay?.show(now);

  const view = lastAt("views", now);
  const viewName = view ? view.view : "";
  document.getElementById("current-view").textContent = viewName ? `View: ${viewName}` : "";
  document.getElementById("screen-caption").textContent = viewName;

  timeLabel.textContent = `${formatDuration(playhead, true)} / ${formatDuration(duration, true)}`;
  timeLabel.dataset.t = playhead.toFixed(3);
  if (!scrubbing) scrubber.value = String(playhead);
  syncMedia();

  const current = eventAt(now);
  if (current !== currentEvent) {
    currentEvent = current;
    followPlayhead();
  }
}

function seek(seconds, { updateURL = true } = {}) {
  playhead = Math.min(Math.max(0, seconds), duration);
  renderMoment();
  syncMedia(true);
  if (updateURL) rememberPlayhead();
}

function rememberPlayhead() {
  // Milliseconds, rounded up: a link to a clicked event must not land just before it (and its
  // screenshot), which rounding to the nearest millisecond did for half of all events.
  history.replaceState(null, "", `${location.pathname}?t=${(Math.ceil(playhead * 1000) / 1000).toFixed(3)}`);
}

// ---------------------------------------------------------------- playing

function setPlaying(on) {
  if (on && playhead >= duration) playhead = 0;
  playing = on && duration > 0;
  playButton.textContent = playing ? "❚❚ Pause" : "▶ Play";
  playButton.dataset.playing = String(playing);
  if (playing) {
    lastFrame = performance.now();
    requestAnimationFrame(frame);
  } else {
    rememberPlayhead();
  }
  syncMedia(true);
}

function frame(time) {
  if (!playing) return;
  const elapsed = Math.max(0, time - lastFrame) / 1000;
  lastFrame = time;
  let next = playhead + elapsed * Number(speedSelect.value);
  if (skipIdle.checked) next = skipGap(next);
  if (next >= duration) {
    seek(duration, { updateURL: false });
    setPlaying(false);
    return;
  }
  playhead = next;
  renderMoment();
  requestAnimationFrame(frame);
}

/** Over a stretch longer than the idle limit without events, jumps to just before the next one. */
function skipGap(position) {
  const now = t0 + position;
  const following = eventAt(now) + 1;
  if (following <= 0 || following >= index.events) return position;
  const limit = Math.max(1, Number(idleSeconds.value) || 5);
  const previous = eventTime(following - 1);
  const upcoming = eventTime(following);
  if (previous === undefined || upcoming === undefined) return position; // its chunk is on its way
  if (upcoming - previous > limit && now > previous + IDLE_LANDING && upcoming - now > IDLE_LANDING) {
    return upcoming - IDLE_LANDING - t0;
  }
  return position;
}

playButton.addEventListener("click", () => setPlaying(!playing));
scrubber.addEventListener("input", () => { scrubbing = true; seek(Number(scrubber.value), { updateURL: false }); });
scrubber.addEventListener("change", () => { scrubbing = false; seek(Number(scrubber.value)); });

document.addEventListener("keydown", (key) => {
  if (!index || key.ctrlKey || key.metaKey || key.altKey || isTyping(key.target)) return;
  if (key.key === " ") { key.preventDefault(); setPlaying(!playing); }
  else if (key.key === "ArrowLeft") { key.preventDefault(); seek(playhead - 5); }
  else if (key.key === "ArrowRight") { key.preventDefault(); seek(playhead + 5); }
});

// ---------------------------------------------------------------- event list (windowed)

function shownCount() { return visible ? visible.length : index.events; }
function shownEvent(position) { return visible ? visible[position] : position; }

/** The row position of the last shown event at or before the playhead. */
function currentPosition() {
  if (!visible) return currentEvent;
  return upperBound(null, t0 + playhead, visible.length, (position) => eventTime(visible[position])) - 1;
}

function renderRows() {
  if (!index) return;
  const count = shownCount();
  const first = Math.max(0, Math.floor(list.scrollTop / ROW) - OVERSCAN);
  const last = Math.min(count, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + OVERSCAN);
  if (first < last) want(chunkOfEvent(shownEvent(first)), chunkOfEvent(shownEvent(last - 1)));
  const rows = [];
  for (let position = first; position < last; position++) {
    const i = shownEvent(position);
    const chunk = chunks[chunkOfEvent(i)];
    let row;
    if (chunk) {
      const j = i - chunk.first;
      const className = classNames[chunk.c[j]] ?? "?";
      row = el("div", {
        class: `ev${i === currentEvent ? " current" : ""}${className === EventClass.observerNote ? " note" : ""}`,
        "data-testid": "event-row",
        dataset: { index: String(i), eventId: String(chunk.id[j]), t: (chunk.t[j] - t0).toFixed(3) },
      },
      el("span", { class: "t" }, formatDuration(chunk.t[j] - t0, true)),
      el("span", {}, className),
      el("span", {}, chunk.s[j] ?? ""));
    } else {
      row = el("div", { class: "ev pending", dataset: { index: String(i) } }, el("span", { class: "t" }, "…"));
    }
    row.style.top = `${position * ROW}px`;
    rows.push(row);
  }
  spacer.replaceChildren(...rows);
}

/** Keeps the current event's row in view and highlighted. */
function followPlayhead() {
  spacer.style.height = `${shownCount() * ROW}px`; // before scrolling: the list must be tall enough
  const position = currentPosition();
  if (position >= 0) {
    const top = position * ROW;
    if (top < list.scrollTop || top + ROW > list.scrollTop + list.clientHeight) {
      list.scrollTop = Math.max(0, top - list.clientHeight / 3);
    }
  }
  renderRows();
}

list.addEventListener("scroll", () => requestAnimationFrame(renderRows));
list.addEventListener("click", (click) => {
  const row = click.target.closest("[data-testid=event-row]");
  if (!row) return;
  const i = Number(row.dataset.index);
  const chunk = chunks[chunkOfEvent(i)];
  if (!chunk) return;
  seek(chunk.t[i - chunk.first] - t0);
  run(showDetail(chunk.id[i - chunk.first]));
});

async function showDetail(eventID) {
  const event = await api(`/api/sessions/${encodeURIComponent(sessionID)}/events/${encodeURIComponent(eventID)}`);
  detail.textContent = JSON.stringify(event, null, 2);
  detail.classList.remove("hidden");
}

function showEventTotal(text) {
  document.getElementById("event-total").textContent = text ?? `${shownCount().toLocaleString("en-US")} events`;
}

/** Shows only the events of the chosen class: every chunk is needed for that, and loaded first. */
async function applyFilter() {
  const wanted = classFilter.value === "" ? null : Number(classFilter.value);
  wantedClass = wanted;
  if (wanted !== null && chunks.some((chunk) => !chunk)) {
    showEventTotal("loading every event…");
    await ensureChunks(0, chunks.length - 1);
    if (wantedClass !== wanted) return;
  }
  if (wanted === null) {
    visible = null;
  } else {
    const positions = [];
    for (const chunk of chunks) chunk.c.forEach((c, j) => { if (c === wanted) positions.push(chunk.first + j); });
    visible = Int32Array.from(positions);
  }
  showEventTotal();
  list.scrollTop = 0;
  followPlayhead();
}

classFilter.addEventListener("change", () => run(applyFilter().catch((error) => {
  if (error instanceof StaleIndex) return reload();
  showError(`Cannot load the replay: ${error.message}`);
})));

// ---------------------------------------------------------------- scrubber marks

function renderMarks() {
  const at = (t) => `${duration > 0 ? ((t - t0) / duration) * 100 : 0}%`;
  const mark = (kind, t, title) => {
    const node = el("div", { class: `mark ${kind}`, title, "data-kind": kind, "data-t": (t - t0).toFixed(3) });
    node.style.left = at(t);
    node.addEventListener("click", () => seek(t - t0));
    return node;
  };
  const gaps = (index.gaps || []).map((gap) => {
    const node = el("div", { class: "gap", title: `gap: ${gap.reason ?? ""}` });
    node.style.left = at(gap.start);
    node.style.width = `${duration > 0 ? ((gap.end - gap.start) / duration) * 100 : 0}%`;
    return node;
  });
  setChildren(document.getElementById("marks"),
    gaps,
    (index.notes || []).map((note) => mark(note.kind === "problem" ? "problem" : "note", note.t, `${note.kind}: ${note.text}`)),
    (index.problems || []).map((problem) => mark("problem", problem.t, `problem: ${problem.title}`)));
}

// ---------------------------------------------------------------- loading

/** Shows what the head says: the session, its device, the scrubber's length and marks. */
function showHead() {
  const session = index.session;
  t0 = index.start ?? session.started ?? 0;
  duration = Math.max(0, (index.end ?? t0) - t0);
  document.title = `Replay: ${session.name || `Session ${session.id}`} · Mobile Monitor`;
  document.getElementById("session-title").textContent = `Replay: ${session.name || `Session ${session.id}`}`;
  setChildren(document.getElementById("session-state"), stateBadge(session.state));
  document.getElementById("live-link").classList.toggle("hidden", session.state === "stopped");
  const device = index.device;
  document.getElementById("device-line").textContent = device
    ? `${device.name || device.id} · ${device.model ?? ""} · started ${formatClock(t0)}`
    : `started ${formatClock(t0)}`;
  wireframe.setDevice(device);
  showEventTotal();
  scrubber.max = String(duration);
  renderMarks();
}

let reloading = null;

/** The index was made again (a recording session grew, a note was added): its head again, the playhead kept. */
function reload() {
  reloading ??= readAgain().finally(() => { reloading = null; });
  return reloading;
}

async function readAgain() {
  setChildren(classFilter, el("option", { value: "" }, "All classes"));
  visible = null;
  await loadHead();
  showHead();
  await ensureChunks(chunkOfTime(t0 + playhead) - 1, chunkOfTime(t0 + playhead) + AHEAD);
  currentEvent = -2;
  seek(playhead, { updateURL: false });
}

/** A web session with page records is replayed as the page itself where the wireframe was (page-replay.js). */
async function openPage(at, onUpdate) {
  if (!mayHavePage(index)) return;
  const canvas = document.getElementById("screen");
  pageReplay = await openPageReplay({ sessionID, container: canvas.parentElement, before: canvas, at, onUpdate,
    horizon: () => t0 + duration });
  if (!pageReplay) return;
  canvas.classList.add("hidden");
  screen = pageReplay.overlay;
}

async function load() {
  // The login check, the index and the media overview at once: the first frame waits for the index only.
  run(me());
  const mediaOverview = api(`/api/sessions/${encodeURIComponent(sessionID)}/media`, { quiet: true });
  mediaOverview.catch(() => {}); // answered below, once the first frame is on its way
  // What `make bench` times: navigation to the first screenshot on the canvas, or the first page built (docs/BENCHMARKS.md).
  const firstFrame = () => {
    if (performance.getEntriesByName("replay-first-frame").length === 0) performance.mark("replay-first-frame");
  };
  wireframe.onImageLoaded = () => {
    wireframe.render(t0 + playhead);
    firstFrame();
  };
  await loadHead();
  showHead();

  const parameters = new URLSearchParams(location.search);
  // `?t=` is seconds into the replay; `?at=` a device time (a quote found by the sessions page's search).
  const requested = parameters.has("at") ? Number(parameters.get("at")) - t0 : Number(parameters.get("t"));
  const start = Number.isFinite(requested) ? Math.min(Math.max(0, requested), duration) : 0;
  await Promise.all([ensureChunks(chunkOfTime(t0 + start) - 1, chunkOfTime(t0 + start)), openPage(t0 + start, firstFrame)]);
  seek(start, { updateURL: false });
  // `?play=1` plays from there at once: a link that says "watch from here".
  if (parameters.get("play") === "1") setPlaying(true);
  try {
    loadMedia(await mediaOverview);
  } catch (error) {
    showError(`Cannot load the session's audio: ${error.message}`);
  }
  document.body.dataset.ready = "true";
}

setupNoteBox(sessionID, {
  extraKeys: " · Space play/pause · ←/→ 5 s",
  timeOfNote: () => (index ? t0 + playhead : undefined),
  onPosted: (event) => {
    if (!index) return;
    const p = event.payload || {};
    index.notes.push({ t: event.timestamp ?? t0 + playhead, text: p.text ?? "", kind: p.kind ?? "note", event: event.id });
    renderMarks();
  },
});

load().catch((error) => { showError(`Cannot load the replay: ${error.message}`); });
