// Replay page (/sessions/ID/replay[?t=SECONDS]): plays a session from its replay index, a file read by
// byte ranges (docs/CONSOLE.md, "The replay index"): its head (times, the chunk table, marks) and the
// chunks of events around the playhead and the rows in view, loaded as playing, seeking or scrolling
// needs them; an event's details and the screenshots load on demand too. The playhead is in seconds
// from the index's start (the first event, device time); the URL keeps ?t= when pausing or seeking.
// This module is the page's wiring: the index is read by replay-index.js, the event list is replay-rows.js.
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
  api, el, formatClock, formatDuration, isTyping, me, run, sessionIDFromPath, setChildren, setupNoteBox, showError,
  stateBadge,
} from "./common.js";
import { mayHavePage, openPageReplay } from "./page-replay.js";
import { ReplayIndex, StaleIndex } from "./replay-index.js";
import { ReplayMedia } from "./replay-media.js";
import { ReplayRows } from "./replay-rows.js";
import { ScreenView } from "./screen.js";
import { EventClass } from "./vocabulary.js";

const TRAIL = 1.6;           // seconds of touches drawn before the playhead
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
const detail = document.getElementById("event-detail");

let t0 = 0;                  // device time of the playhead's zero
let duration = 0;
let playhead = 0;
let playing = false;
let lastFrame = 0;
let scrubbing = false;
const media = new ReplayMedia();

function syncMedia(force = false) {
  media.sync(t0 + playhead, { playing, rate: Number(speedSelect.value), force });
}

function loadMedia(overview) {
  media.load(overview, t0, () => syncMedia(true));
  syncMedia(true);
}

/** A load that failed: a stale head is read again (the playhead kept), anything else is said. */
function failed(error) {
  if (error instanceof StaleIndex) run(reload()); else showError(`Cannot load the replay: ${error.message}`);
}

const index = new ReplayIndex({
  url: indexURL,
  onClass: (name, number) => rows.addClass(name, number),
  onLoaded: () => { renderMoment(); rows.render(); },
  onError: failed,
});
const rows = new ReplayRows({
  index, noteClass: EventClass.observerNote,
  list: document.getElementById("events"),
  spacer: document.getElementById("events-spacer"),
  total: document.getElementById("event-total"),
  filter: document.getElementById("class-filter"),
  t0: () => t0,
  now: () => t0 + playhead,
  onSelect: (t, eventID) => {
    seek(t - t0);
    run(showDetail(eventID));
  },
  onError: failed,
});

// ---------------------------------------------------------------- the moment

function renderMoment() {
  if (!index.head) return;
  const now = t0 + playhead;
  const k = index.chunkOfTime(now);
  index.want(k - 1, k + AHEAD);
  const shot = index.lastAt("screenshots", now);
  screen.showScreenshot(shot?.sha ?? null);
  for (const sha of index.nextScreenshots(now)) screen.preload(sha);
  screen.setTouches(index.touchesBetween(now - TRAIL, now));
  screen.render(now);
  pageReplay?.show(now);

  const view = index.lastAt("views", now);
  const viewName = view ? view.view : "";
  document.getElementById("current-view").textContent = viewName ? `View: ${viewName}` : "";
  document.getElementById("screen-caption").textContent = viewName;

  timeLabel.textContent = `${formatDuration(playhead, true)} / ${formatDuration(duration, true)}`;
  timeLabel.dataset.t = playhead.toFixed(3);
  if (!scrubbing) scrubber.value = String(playhead);
  syncMedia();
  rows.showCurrent(index.eventAt(now));
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
  const landing = index.idleLanding(t0 + position, Math.max(1, Number(idleSeconds.value) || 5));
  return landing === null ? position : landing - t0;
}

playButton.addEventListener("click", () => setPlaying(!playing));
scrubber.addEventListener("input", () => { scrubbing = true; seek(Number(scrubber.value), { updateURL: false }); });
scrubber.addEventListener("change", () => { scrubbing = false; seek(Number(scrubber.value)); });

document.addEventListener("keydown", (key) => {
  if (!index.head || key.ctrlKey || key.metaKey || key.altKey || isTyping(key.target)) return;
  if (key.key === " ") { key.preventDefault(); setPlaying(!playing); }
  else if (key.key === "ArrowLeft") { key.preventDefault(); seek(playhead - 5); }
  else if (key.key === "ArrowRight") { key.preventDefault(); seek(playhead + 5); }
});

// ---------------------------------------------------------------- an event's details

async function showDetail(eventID) {
  const event = await api(`/api/sessions/${encodeURIComponent(sessionID)}/events/${encodeURIComponent(eventID)}`);
  detail.textContent = JSON.stringify(event, null, 2);
  detail.classList.remove("hidden");
}

// ---------------------------------------------------------------- scrubber marks

function renderMarks() {
  const head = index.head;
  const at = (t) => `${duration > 0 ? ((t - t0) / duration) * 100 : 0}%`;
  const mark = (kind, t, title) => {
    const node = el("div", { class: `mark ${kind}`, title, "data-kind": kind, "data-t": (t - t0).toFixed(3) });
    node.style.left = at(t);
    node.addEventListener("click", () => seek(t - t0));
    return node;
  };
  const gaps = (head.gaps || []).map((gap) => {
    const node = el("div", { class: "gap", title: `gap: ${gap.reason ?? ""}` });
    node.style.left = at(gap.start);
    node.style.width = `${duration > 0 ? ((gap.end - gap.start) / duration) * 100 : 0}%`;
    return node;
  });
  setChildren(document.getElementById("marks"),
    gaps,
    (head.notes || []).map((note) => mark(note.kind === "problem" ? "problem" : "note", note.t, `${note.kind}: ${note.text}`)),
    (head.problems || []).map((problem) => mark("problem", problem.t, `problem: ${problem.title}`)));
}

// ---------------------------------------------------------------- loading

/** Shows what the head says: the session, its device, the scrubber's length and marks. */
function showHead() {
  const head = index.head;
  const session = head.session;
  t0 = head.start ?? session.started ?? 0;
  duration = Math.max(0, (head.end ?? t0) - t0);
  document.title = `Replay: ${session.name || `Session ${session.id}`} · Mobile Monitor`;
  document.getElementById("session-title").textContent = `Replay: ${session.name || `Session ${session.id}`}`;
  setChildren(document.getElementById("session-state"), stateBadge(session.state));
  document.getElementById("live-link").classList.toggle("hidden", session.state === "stopped");
  const device = head.device;
  document.getElementById("device-line").textContent = device
    ? `${device.name || device.id} · ${device.model ?? ""} · started ${formatClock(t0)}`
    : `started ${formatClock(t0)}`;
  wireframe.setDevice(device);
  rows.showEventTotal();
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
  rows.clearFilter();
  await index.loadHead();
  showHead();
  await index.ensureChunks(index.chunkOfTime(t0 + playhead) - 1, index.chunkOfTime(t0 + playhead) + AHEAD);
  rows.current = -2;
  seek(playhead, { updateURL: false });
}

/** A web session with page records is replayed as the page itself where the wireframe was (page-replay.js). */
async function openPage(at, onUpdate) {
  if (!mayHavePage(index.head)) return;
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
  await index.loadHead();
  showHead();

  const parameters = new URLSearchParams(location.search);
  // `?t=` is seconds into the replay; `?at=` a device time (a quote found by the sessions page's search).
  const requested = parameters.has("at") ? Number(parameters.get("at")) - t0 : Number(parameters.get("t"));
  const start = Number.isFinite(requested) ? Math.min(Math.max(0, requested), duration) : 0;
  await Promise.all([index.ensureChunks(index.chunkOfTime(t0 + start) - 1, index.chunkOfTime(t0 + start)),
    openPage(t0 + start, firstFrame)]);
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
  timeOfNote: () => (index.head ? t0 + playhead : undefined),
  onPosted: (event) => {
    if (!index.head) return;
    const p = event.payload || {};
    index.head.notes.push({ t: event.timestamp ?? t0 + playhead, text: p.text ?? "", kind: p.kind ?? "note", event: event.id });
    renderMarks();
  },
});

load().catch((error) => { showError(`Cannot load the replay: ${error.message}`); });
