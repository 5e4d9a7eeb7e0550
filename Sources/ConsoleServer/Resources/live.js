// Live page (/sessions/ID/live): the device's screen now, touches as they arrive, the view stack,
// the event stream (filterable by class), connection markers, rates, observer notes.
//
// Test hooks: canvas #screen [data-testid=screen] (data-sha: screenshot drawn, data-touches: marks
// drawn), #current-view, #view-stack (li per view), #events (div.ev[data-testid=event-row]
// [data-class=CLASS][data-event-id=ID], div.ev.marker[data-testid=marker-row][data-kind=KIND]),
// #class-filter (input[type=checkbox][value=CLASS]), #rate, #event-count, #skipped (shown once a
// skip happened; data-count), #session-state badge, #stop-button [data-testid=stop-session],
// note box #note-box (built by common.js: #note-form/#note-text/#note-kind/#note-label/#note-status);
// in a study's session, #task-bar with div[data-testid=task][data-task=NAME] holding buttons
// [data-testid=task-begin], [data-testid=task-end] and select [data-testid=task-verdict], and #task-status.
// #listen [data-testid=listen] plays the tester's voice as it arrives (data-listening, data-bytes: audio
// bytes played so far). A web session with page records shows the page itself (page-live.js): #page-view in place
// of #screen (hidden), iframe #page-frame (data-applied: the last record's id, data-at: its device time,
// data-frozen), touches on canvas #page-touches.

import {
  api, clearError, dataSHA, el, formatClock, formatCount, formatDuration, formatRate, formatTime,
  liveSocket, me, run, sessionDuration, sessionIDFromPath, setChildren, setupNoteBox, stateBadge,
} from "./common.js";
import { setupListen } from "./live-voice.js";
import { LivePage } from "./page-live.js";
import { ScreenView, gesturePathOf, touchOf } from "./screen.js";
import { EventClass } from "./vocabulary.js";

const MAX_ROWS = 500;          // event rows kept in the DOM
const RATE_WINDOW = 5;         // seconds of arrivals the events/s figure covers

const sessionID = sessionIDFromPath();
const page = `/sessions/${encodeURIComponent(sessionID)}`;
document.getElementById("details-link").setAttribute("href", page);
document.getElementById("replay-link").setAttribute("href", `${page}/replay`);

const wireframe = new ScreenView(document.getElementById("screen"), sessionID);
let screen = wireframe;        // where touches go: the wireframe, or the overlay over the page (page mode)
const screenCanvas = document.getElementById("screen");
const livePage = new LivePage({ sessionID, container: screenCanvas.parentElement, before: screenCanvas, onShown: (view) => {
  screenCanvas.classList.add("hidden");
  view.overlay.setTouches(wireframe.touches, wireframe.gestures);  // those that came while the page loaded
  screen = view.overlay;
  redraw();
} });
const list = document.getElementById("events");
const filter = document.getElementById("class-filter");
const hiddenClasses = new Set();
const filterBoxes = new Map(); // class name → its checkbox
const arrivals = [];           // [clock seconds, events] of recent "events" messages
let session = null;
let eventCount = 0;
let skipped = 0;
let animating = false;
let taskBarStudy = null;       // the study whose tasks the task bar shows

const clock = () => performance.now() / 1000;

// ---------------------------------------------------------------- screen

function animate() {
  const now = clock();
  screen.render(now);
  animating = screen.isAnimating(now);
  if (animating) requestAnimationFrame(animate);
}

function redraw() {
  if (!animating) { animating = true; requestAnimationFrame(animate); }
}

wireframe.onImageLoaded = redraw;

function showView(view, stack) {
  document.getElementById("current-view").textContent = view || "—";
  document.getElementById("screen-caption").textContent = view || "";
  if (Array.isArray(stack)) {
    setChildren(document.getElementById("view-stack"), stack.map((name) => el("li", {}, String(name))));
  }
}

/** Applies what an event shows on the screen; `at` is its time on the page's clock. */
function applyToScreen(event, at) {
  const p = event.payload || {};
  if (event.class === EventClass.userInput) {
    const touch = touchOf(p);
    if (touch) screen.addTouch({ ...touch, t: at });
    const path = gesturePathOf(p);
    if (path) screen.addGesture({ t: at, path, kind: p.type });
  } else if (event.class === EventClass.userInterface) {
    const sha = dataSHA(p.screenshot ?? p.image);
    if (sha) screen.showScreenshot(sha);
    if (Array.isArray(p.viewStack)) showView(p.view ?? p.viewStack[p.viewStack.length - 1], p.viewStack);
    else if (p.type === "viewDidAppear" && p.view) showView(p.view, null);
  }
}

// ---------------------------------------------------------------- event list

function ensureFilter(className) {
  if (filterBoxes.has(className)) return;
  const box = el("input", { type: "checkbox", value: className, checked: !hiddenClasses.has(className) });
  box.addEventListener("change", () => {
    if (box.checked) hiddenClasses.delete(className); else hiddenClasses.add(className);
    for (const row of list.querySelectorAll("[data-testid=event-row]")) {
      if (row.dataset.class === className) row.hidden = !box.checked;
    }
  });
  filterBoxes.set(className, box);
  filter.append(el("label", {}, box, className));
}

function appendRows(rows) {
  const follow = list.scrollTop + list.clientHeight >= list.scrollHeight - 30;
  list.append(...rows);
  while (list.childElementCount > MAX_ROWS) list.firstElementChild.remove();
  if (follow) list.scrollTop = list.scrollHeight;
}

function eventRow(event) {
  const className = String(event.class);
  ensureFilter(className);
  return el("div", {
    class: `ev${className === EventClass.observerNote ? " note" : ""}`,
    "data-testid": "event-row",
    dataset: { class: className, eventId: String(event.id) },
    hidden: hiddenClasses.has(className),
  },
  el("span", { class: "t" }, formatClock(event.timestamp)),
  el("span", {}, className),
  el("span", {}, event.summary ?? ""));
}

function markerRow(marker) {
  const text = [marker.kind, marker.device, marker.detail].filter(Boolean).join(" · ");
  return el("div", { class: "ev marker", "data-testid": "marker-row", dataset: { kind: String(marker.kind) } },
    el("span", { class: "t" }, formatClock(marker.time ?? Date.now() / 1000)),
    el("span", {}, "— connection —"),
    el("span", {}, text));
}

// ---------------------------------------------------------------- state

function showSession(next) {
  session = next;
  document.title = `Live: ${session.name || `Session ${session.id}`} · Mobile Monitor`;
  document.getElementById("session-title").textContent = `Live: ${session.name || `Session ${session.id}`}`;
  setChildren(document.getElementById("session-state"), stateBadge(session.state));
  document.getElementById("stop-button").classList.toggle("hidden", session.state === "stopped");
}

// ---------------------------------------------------------------- study tasks

/** Posts an observer's task mark; it comes back on the live stream as an ObserverNote, like a note. */
async function markTask(action, task, outcome) {
  const body = { action, task };
  if (outcome) body.outcome = outcome;
  await api(`/api/sessions/${encodeURIComponent(sessionID)}/tasks`, { method: "POST", body });
  clearError();
  const said = { begin: `task "${task}" begins`, end: `task "${task}" ends`, outcome: `task "${task}": ${outcome}` };
  document.getElementById("task-status").textContent = `Saved: ${said[action]}`;
}

/** In a study's session: a row per study task with Begin, End and a verdict. */
async function showTaskBar(study) {
  if (!study || study === taskBarStudy) return;
  const [data, items] = await Promise.all([api(`/api/studies/${encodeURIComponent(study)}`), api("/api/questionnaire")]);
  taskBarStudy = study;
  document.getElementById("task-study").textContent = `${study} · iteration ${session.iteration} · ${session.participant}`;
  setChildren(document.getElementById("task-list"), data.study.tasks.map((task) => {
    const verdict = el("select", { "aria-label": `Verdict on ${task.name}`, "data-testid": "task-verdict" },
      el("option", { value: "" }, "verdict…"), items.outcomes.map((outcome) => el("option", { value: outcome }, outcome)));
    verdict.addEventListener("change", () => {
      if (verdict.value) run(markTask("outcome", task.name, verdict.value));
    });
    return el("div", { class: "task", "data-testid": "task", dataset: { task: task.name } },
      el("span", { class: "name", title: task.instructions || "" }, task.name),
      el("button", { type: "button", class: "small", "data-testid": "task-begin", onclick: () => run(markTask("begin", task.name)) }, "Begin"),
      el("button", { type: "button", class: "small", "data-testid": "task-end", onclick: () => run(markTask("end", task.name)) }, "End"),
      verdict);
  }));
  document.getElementById("task-bar").classList.toggle("hidden", data.study.tasks.length === 0);
}

function showDevice(device) {
  wireframe.setDevice(device);
  document.getElementById("device-line").textContent = device
    ? `${device.name || device.id} · ${device.model ?? ""} · ${device.appId ?? ""} ${device.appVersion ?? ""}`
    : "waiting for a device";
}

function countEvents(n) {
  eventCount += n;
  document.getElementById("event-count").textContent = formatCount(eventCount);
  arrivals.push([clock(), n]);
}

function onHello(hello) {
  showSession(hello.session);
  run(showTaskBar(hello.session.study));
  showDevice(hello.device);
  list.replaceChildren();
  arrived = []; // the hello holds what they were
  eventCount = 0;
  const recent = hello.recent || [];
  // Recent events keep their spacing on the page's clock, so old touches are already faded.
  const now = clock();
  const last = recent.length ? recent[recent.length - 1].timestamp : 0;
  for (const event of recent) applyToScreen(event, now - (last - event.timestamp));
  appendRows(recent.map(eventRow));
  eventCount = hello.session.events ?? recent.length;
  document.getElementById("event-count").textContent = formatCount(eventCount);
  if (hello.screenshot?.sha) screen.showScreenshot(hello.screenshot.sha);
  showView(hello.view, hello.viewStack);
  redraw();
  livePage.hello();
}

// Events are drawn once per animation frame, however many messages brought them: the screen, the rows
// (only those that stay), the count. A hidden tab gets no frames: a full queue is drawn at once.
let arrived = [];
let drawRequested = false;

function onEvents(events) {
  livePage.events(events);  // page records as they come, not a frame later: the page's own changes are per frame already
  for (const event of events) arrived.push(event);
  if (arrived.length >= MAX_ROWS) drawArrivals();
  else if (!drawRequested) { drawRequested = true; requestAnimationFrame(drawArrivals); }
}

function drawArrivals() {
  drawRequested = false;
  if (!arrived.length) return;
  const events = arrived;
  arrived = [];
  const now = clock();
  for (const event of events) {
    applyToScreen(event, now);
    ensureFilter(String(event.class));
  }
  appendRows(events.slice(-MAX_ROWS).map(eventRow));
  countEvents(events.length);
  redraw();
}

function onMarker(marker) {
  drawArrivals(); // the events before it first, in order
  appendRows([markerRow(marker)]);
  if (!session) return;
  // A waiting session records from the moment its device connects (the daemon's own rule).
  const recording = () => showSession({ ...session, state: "recording", started: session.started ?? marker.time });
  if (marker.kind === "session-stopped") showSession({ ...session, state: "stopped", stopped: marker.time });
  else if (marker.kind === "session-started") recording();
  else if (marker.kind === "device-connected" && session.state !== "stopped") {
    recording();
    // The hello came before any device: the device's record (screen size, model) is in the session's details now.
    api(`/api/sessions/${encodeURIComponent(sessionID)}`, { quiet: true }).then((details) => {
      const device = (details?.devices ?? []).find((d) => d.id === marker.device) ?? details?.devices?.at(-1);
      if (device) showDevice(device);
    }).catch(() => {});
  }
  else if (marker.kind === "device-disconnected" && session.state === "recording") showSession({ ...session, state: "interrupted" });
}

function onSkipped(count) {
  skipped += count;
  const node = document.getElementById("skipped");
  node.dataset.count = String(skipped);
  node.textContent = `${formatCount(skipped)} events skipped (browser too slow)`;
  node.classList.remove("hidden");
}

setInterval(() => {
  const now = clock();
  while (arrivals.length && arrivals[0][0] < now - RATE_WINDOW) arrivals.shift();
  const total = arrivals.reduce((sum, [, n]) => sum + n, 0);
  document.getElementById("rate").textContent = formatRate(total / RATE_WINDOW);
  if (session) document.getElementById("duration").textContent = formatDuration(sessionDuration(session));
}, 1000);

document.getElementById("stop-button").addEventListener("click", () =>
  run(api(`/api/sessions/${encodeURIComponent(sessionID)}/stop`, { method: "POST" }).then((stopped) => {
    clearError();
    showSession(stopped);
    document.getElementById("note-status").textContent = `Stopped ${formatTime(stopped.stopped)}: the report is on the details page.`;
  })));

setupNoteBox(sessionID);
run(me());
liveSocket(`/api/sessions/${encodeURIComponent(sessionID)}/live`, {
  onMessage: (message) => {
    switch (message.type) {
      case "hello": onHello(message); break;
      case "events": onEvents(message.events || []); break;
      case "marker": onMarker(message); break;
      case "skipped": onSkipped(Number(message.count) || 0); break;
    }
  },
});

// ---------------------------------------------------------------- the voice, live

setupListen(sessionID, document.getElementById("listen"));
