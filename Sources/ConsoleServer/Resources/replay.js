// Replay page (/sessions/ID/replay[?t=SECONDS]): plays a session from its ReplayIndex (one request);
// an event's details and the screenshots load on demand. The playhead is in seconds from the
// index's start (the first event, device time); the URL keeps ?t= when pausing or seeking.
//
// Test hooks: body[data-ready=true] once the index is shown; #play [data-testid=play] (text Play/
// Pause, data-playing), #speed, #skip-idle, #idle-seconds, #scrubber (input range, seconds),
// #time (data-t: playhead seconds), #marks (div.mark[data-kind][data-t] per note/problem),
// canvas #screen (data-sha: screenshot drawn, data-touches), #current-view,
// #events: a window of rows div.ev[data-testid=event-row][data-index][data-event-id][data-t]
// (.current = the event at the playhead; click seeks there), #class-filter (select),
// #event-detail (the clicked event as JSON), note box as on the live page.
// Media (think-aloud): #media shown when the session has streams; <audio id=voice> and <video id=face>
// play in sync with the playhead (media time = device time - the stream's start; data-offset on each
// element is that start minus t0), #caption (data-exclamation) the transcript segment at the playhead,
// #transcription the transcription's progress until it is done.

import {
  api, dataSHA, el, formatClock, formatDuration, isTyping, me, run, sessionIDFromPath, setChildren,
  setupNoteBox, showError, stateBadge,
} from "./common.js";
import { ScreenView } from "./screen.js";
import { EventClass } from "./vocabulary.js";

const ROW = 22;              // px per event row (console.css .ev height)
const OVERSCAN = 12;         // rows rendered above and below the visible ones
const TRAIL = 1.6;           // seconds of touches drawn before the playhead
const IDLE_LANDING = 0.5;    // skipping a gap lands this long before the next event

const sessionID = sessionIDFromPath();
const page = `/sessions/${encodeURIComponent(sessionID)}`;
document.getElementById("details-link").setAttribute("href", page);
document.getElementById("live-link").setAttribute("href", `${page}/live`);

const screen = new ScreenView(document.getElementById("screen"), sessionID, { holdSeconds: 3 });
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

let index = null;
let t0 = 0;                  // device time of the playhead's zero
let duration = 0;
let eventT = [];             // index.events.t
let shotT = [];
let touchT = [];
let viewT = [];
let visible = null;          // Int32Array of event indices shown (class filter), null = all
let playhead = 0;
let playing = false;
let lastFrame = 0;
let currentEvent = -1;       // index of the last event at or before the playhead
let scrubbing = false;
let media = null;            // { voice: {element, start}, face: {element, start}, transcript: [] }

/** Keeps `<audio>`/`<video>` where the playhead is: seeks when they drifted more than a quarter second. */
function syncMedia(force = false) {
  if (!media) return;
  for (const stream of [media.voice, media.face]) {
    if (!stream) continue;
    const wanted = t0 + playhead - stream.start;
    const element = stream.element;
    const inside = wanted >= 0 && (!Number.isFinite(element.duration) || wanted <= element.duration);
    if (!inside) {
      if (!element.paused) element.pause();
      continue;
    }
    if (force || Math.abs(element.currentTime - wanted) > 0.25) element.currentTime = wanted;
    element.playbackRate = Number(speedSelect.value);
    if (playing && element.paused) element.play().catch(() => {});
    if (!playing && !element.paused) element.pause();
  }
  const now = t0 + playhead;
  const caption = document.getElementById("caption");
  const segment = media.transcript.findLast((s) => s.start <= now && now <= s.end + 1.5);
  caption.textContent = segment ? `“${segment.text}”` : "";
  caption.dataset.exclamation = segment?.exclamation ?? "";
  caption.classList.toggle("exclamation", Boolean(segment?.exclamation));
}

async function loadMedia() {
  const overview = await api(`/api/sessions/${encodeURIComponent(sessionID)}/media`);
  if (!overview.streams.length) return;
  const pick = (kind) => overview.streams.find((s) => s.stream.kind === kind);
  const attach = (entry, id) => {
    if (!entry) return null;
    const element = document.getElementById(id);
    element.src = entry.url;
    element.dataset.offset = String(entry.stream.start - t0);
    element.classList.remove("hidden");
    return { element, start: entry.stream.start };
  };
  media = { voice: attach(pick("audio"), "voice"), face: attach(pick("video"), "face"), transcript: overview.transcript };
  const unfinished = overview.transcription.filter((t) => t.state !== "done");
  document.getElementById("transcription").textContent = unfinished.map((t) =>
    t.state === "failed" ? `Transcription of ${t.stream} failed: ${t.error ?? ""}`
      : `Transcription of ${t.stream}: ${t.state} ${Math.round(t.progress * 100)} %`).join(" · ");
  document.getElementById("media").classList.remove("hidden");
  for (const stream of [media.voice, media.face]) stream?.element.addEventListener("loadedmetadata", () => syncMedia(true));
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

// ---------------------------------------------------------------- the moment

function renderMoment() {
  const now = t0 + playhead;
  const shot = upperBound(shotT, now) - 1;
  screen.showScreenshot(shot >= 0 ? index.screenshots[shot].sha : null);
  for (let ahead = 1; ahead <= 2; ahead++) screen.preload(index.screenshots[shot + ahead]?.sha);
  const first = upperBound(touchT, now - TRAIL);
  const last = upperBound(touchT, now);
  screen.setTouches(index.touches.slice(first, last));
  screen.render(now);

  const view = upperBound(viewT, now) - 1;
  const viewName = view >= 0 ? index.views[view].view : "";
  document.getElementById("current-view").textContent = viewName ? `View: ${viewName}` : "";
  document.getElementById("screen-caption").textContent = viewName;

  timeLabel.textContent = `${formatDuration(playhead, true)} / ${formatDuration(duration, true)}`;
  timeLabel.dataset.t = playhead.toFixed(3);
  if (!scrubbing) scrubber.value = String(playhead);
  syncMedia();

  const current = upperBound(eventT, now) - 1;
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
  const following = upperBound(eventT, now);
  if (following === 0 || following >= eventT.length) return position;
  const limit = Math.max(1, Number(idleSeconds.value) || 5);
  const previous = eventT[following - 1];
  const upcoming = eventT[following];
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

function shownCount() { return visible ? visible.length : eventT.length; }
function shownEvent(position) { return visible ? visible[position] : position; }

/** The row position of the last shown event at or before the playhead. */
function currentPosition() {
  return upperBound(null, t0 + playhead, shownCount(), (position) => eventT[shownEvent(position)]) - 1;
}

function renderRows() {
  const count = shownCount();
  const first = Math.max(0, Math.floor(list.scrollTop / ROW) - OVERSCAN);
  const last = Math.min(count, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + OVERSCAN);
  const classes = index.classes;
  const events = index.events;
  const rows = [];
  for (let position = first; position < last; position++) {
    const i = shownEvent(position);
    const row = el("div", {
      class: `ev${i === currentEvent ? " current" : ""}${classes[events.c[i]] === EventClass.observerNote ? " note" : ""}`,
      "data-testid": "event-row",
      dataset: { index: String(i), eventId: String(events.id[i]), t: (events.t[i] - t0).toFixed(3) },
    },
    el("span", { class: "t" }, formatDuration(events.t[i] - t0, true)),
    el("span", {}, classes[events.c[i]] ?? "?"),
    el("span", {}, events.s[i] ?? ""));
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
  seek(eventT[i] - t0);
  run(showDetail(index.events.id[i]));
});

async function showDetail(eventID) {
  const event = await api(`/api/sessions/${encodeURIComponent(sessionID)}/events/${encodeURIComponent(eventID)}`);
  detail.textContent = JSON.stringify(event, null, 2);
  detail.classList.remove("hidden");
}

classFilter.addEventListener("change", () => {
  const wanted = classFilter.value === "" ? -1 : Number(classFilter.value);
  if (wanted < 0) {
    visible = null;
  } else {
    const positions = [];
    index.events.c.forEach((c, i) => { if (c === wanted) positions.push(i); });
    visible = Int32Array.from(positions);
  }
  document.getElementById("event-total").textContent = `${shownCount().toLocaleString("en-US")} events`;
  list.scrollTop = 0;
  followPlayhead();
});

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

async function load() {
  await me();
  index = await api(`/api/sessions/${encodeURIComponent(sessionID)}/replay`);
  const session = index.session;
  t0 = index.start ?? session.started ?? 0;
  duration = Math.max(0, (index.end ?? t0) - t0);
  eventT = index.events.t;
  shotT = index.screenshots.map((shot) => shot.t);
  touchT = index.touches.map((touch) => touch.t);
  viewT = index.views.map((view) => view.t);

  document.title = `Replay: ${session.name || `Session ${session.id}`} · Mobile Monitor`;
  document.getElementById("session-title").textContent = `Replay: ${session.name || `Session ${session.id}`}`;
  setChildren(document.getElementById("session-state"), stateBadge(session.state));
  document.getElementById("live-link").classList.toggle("hidden", session.state === "stopped");
  const device = index.device;
  document.getElementById("device-line").textContent = device
    ? `${device.name || device.id} · ${device.model ?? ""} · started ${formatClock(t0)}`
    : `started ${formatClock(t0)}`;
  screen.setDevice(device);
  screen.onImageLoaded = () => {
    screen.render(t0 + playhead);
    // What `make bench` times: navigation to the first screenshot on the canvas (docs/BENCHMARKS.md).
    if (performance.getEntriesByName("replay-first-frame").length === 0) performance.mark("replay-first-frame");
  };

  setChildren(classFilter, el("option", { value: "" }, "All classes"),
    index.classes.map((name, i) => el("option", { value: String(i) }, name)));
  document.getElementById("event-total").textContent = `${eventT.length.toLocaleString("en-US")} events`;
  scrubber.max = String(duration);
  renderMarks();
  await loadMedia().catch((error) => showError(`Cannot load the session's audio: ${error.message}`));

  const parameters = new URLSearchParams(location.search);
  // `?t=` is seconds into the replay; `?at=` a device time (a quote found by the sessions page's search).
  const requested = parameters.has("at") ? Number(parameters.get("at")) - t0 : Number(parameters.get("t"));
  seek(Number.isFinite(requested) ? Math.max(0, requested) : 0, { updateURL: false });
  // `?play=1` plays from there at once: a link that says "watch from here".
  if (parameters.get("play") === "1") setPlaying(true);
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
