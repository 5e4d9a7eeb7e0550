// Session page (/sessions/ID): details, devices, gaps, observer notes, and its report.
//
// Test hooks: #session-state (badge [data-testid=state]), #stop-button [data-testid=stop-session],
// #details (dd[data-key=…]), #report-state (badge), #report-open [data-testid=report-open] (shown
// when a report is ready; its href is the report), #report-sections (checkboxes, value = section
// name), #report-configuration, #report-generate [data-testid=report-generate],
// #notes-body tr[data-testid=note-row][data-event-id=ID].

import {
  api, clearError, deviceLabel, el, formatClock, formatCount, formatDuration, formatTime, liveSocket,
  me, run, safeURL, sessionDuration, sessionIDFromPath, setChildren, stateBadge, studyURL,
} from "./common.js";
import { EventClass } from "./vocabulary.js";

const sessionID = sessionIDFromPath();
const base = `/api/sessions/${encodeURIComponent(sessionID)}`;
const page = `/sessions/${encodeURIComponent(sessionID)}`;
const NOTES_LIMIT = 5000; // the page lists at most this many notes
let session = null;

document.getElementById("live-link").setAttribute("href", `${page}/live`);
document.getElementById("replay-link").setAttribute("href", `${page}/replay`);

async function reload() {
  const detail = await api(base);
  session = detail.session;
  document.title = `${session.name || `Session ${session.id}`} · Mobile Monitor`;
  document.getElementById("session-title").textContent = session.name || `Session ${session.id}`;
  setChildren(document.getElementById("session-state"), stateBadge(session.state));
  document.getElementById("stop-button").classList.toggle("hidden", session.state === "stopped");
  document.getElementById("live-link").classList.toggle("hidden", session.state === "stopped");
  renderDetails(session);
  renderDevices(detail.devices || []);
  renderGaps(detail.gaps || []);
  renderReport(detail.report);
}

function renderDetails(s) {
  const pairs = [
    ["id", "Id", `${s.id} (${s.uuid ?? ""})`],
    ["state", "State", s.state],
    ["testUser", "Test user", s.testUser || "—"],
    ["study", "Study", s.study
      ? el("span", {}, el("a", { href: studyURL(s.study) }, s.study), ` · iteration ${s.iteration} · participant ${s.participant}`)
      : "—"],
    ["device", "Device", s.device || (s.boundDevice ? `${s.boundDevice} (bound)` : "next device")],
    ["created", "Created", formatTime(s.created)],
    ["started", "Started", formatTime(s.started)],
    ["stopped", "Stopped", formatTime(s.stopped)],
    ["duration", "Duration", formatDuration(sessionDuration(s))],
    ["events", "Events", `${formatCount(s.events)} stored, ${formatCount(s.filtered)} filtered, ${formatCount(s.duplicates)} duplicates`],
    ["sensors", "Sensors", s.sensors?.length ? s.sensors.join(", ") : "everything"],
    ["pairingCode", "Pairing code", s.pairingCode || "—"],
    ["notes", "Notes", s.notes || "—"],
    // Sessions made by `muevalctl import`: each file, and why only part of one was taken.
    ["imports", "Imported from", s.imports?.length
      ? el("span", {}, ...s.imports.flatMap((source, index) => [
        index ? el("br") : null,
        `${source.file} (${source.format}, ${formatCount(source.events)} events, ${formatTime(source.imported)})`,
        source.cutShort ? ` — cut short: ${source.cutShort}` : null,
      ]))
      : "recorded live"],
    ["path", "File", s.path || "—"],
  ];
  setChildren(document.getElementById("details"), pairs.flatMap(([key, title, value]) => [
    el("dt", {}, title), el("dd", { "data-key": key }, value),
  ]));
}

function renderDevices(devices) {
  setChildren(document.getElementById("devices-body"), devices.map((d) => el("tr", {},
    el("td", {}, deviceLabel(d)),
    el("td", {}, d.model ?? "—"),
    el("td", {}, d.systemVersion ?? "—"),
    el("td", {}, [d.appId, d.appVersion].filter(Boolean).join(" ") || "—"),
    el("td", {}, d.screenWidth ? `${d.screenWidth} × ${d.screenHeight} pt` : "—"),
    el("td", {}, formatTime(d.lastSeen)))));
}

function renderGaps(gaps) {
  setChildren(document.getElementById("gaps-body"), gaps.map((gap) => el("tr", {},
    el("td", {}, formatTime(gap.start)),
    el("td", {}, formatTime(gap.end)),
    el("td", { class: "num" }, formatDuration(gap.end - gap.start)),
    el("td", {}, gap.reason ?? ""))));
  document.getElementById("gaps-empty").classList.toggle("hidden", gaps.length > 0);
}

// ---------------------------------------------------------------- report

let reportCheck = null;
let reportDelay = 500;

function renderReport(report = { state: "none" }) {
  setChildren(document.getElementById("report-state"), stateBadge(report.state));
  const open = document.getElementById("report-open");
  const line = document.getElementById("report-line");
  const ready = report.state === "ready" && report.url;
  open.classList.toggle("hidden", !ready);
  open.setAttribute("href", ready ? safeURL(report.url) : "#");
  line.textContent = {
    none: "No report yet.",
    running: "Generating…",
    ready: `Generated ${formatTime(report.generated)}.`,
    failed: `Failed: ${report.error ?? "unknown error"}`,
  }[report.state] ?? report.state;
  document.getElementById("report-generate").disabled = report.state === "running";
  // A report generated in the background (after a stop) has no push message of its own yet:
  // ask again, with backoff, only while one is running.
  clearTimeout(reportCheck);
  if (report.state === "running") {
    reportCheck = setTimeout(() => run(api(`${base}/report`).then(renderReport)), reportDelay);
    reportDelay = Math.min(5000, reportDelay * 1.5);
  } else {
    reportDelay = 500;
  }
}

async function loadReportOptions() {
  const options = await api("/api/report-options");
  setChildren(document.getElementById("report-sections"), (options.sections || []).map((section) =>
    el("label", {}, el("input", { type: "checkbox", value: section.name, checked: true }), section.title || section.name)));
  const select = document.getElementById("report-configuration");
  setChildren(select, el("option", { value: "" }, "— sections above —"),
    (options.configurations || []).map((c) => el("option", { value: c.name }, `${c.name} (${(c.sections || []).join(", ")})`)));
}

document.getElementById("report-form").addEventListener("submit", (submit) => {
  submit.preventDefault();
  const configuration = document.getElementById("report-configuration").value;
  const sections = [...document.querySelectorAll("#report-sections input:checked")].map((box) => box.value);
  const body = configuration ? { configuration } : { sections };
  renderReport({ state: "running" });
  run(api(`${base}/report`, { method: "POST", body })
    .then((report) => { clearError(); renderReport(report); })
    .catch((error) => { renderReport({ state: "failed", error: error.message }); throw error; }));
});

document.getElementById("report-configuration").addEventListener("change", (change) => {
  for (const box of document.querySelectorAll("#report-sections input")) box.disabled = Boolean(change.target.value);
});

// ---------------------------------------------------------------- notes

async function loadNotes() {
  const notes = [];
  let after = null;
  do {
    const query = new URLSearchParams({ classes: EventClass.observerNote, limit: "500" });
    if (after !== null) query.set("after", String(after));
    const pageOfNotes = await api(`${base}/events?${query}`);
    notes.push(...pageOfNotes.events);
    after = pageOfNotes.next;
  } while (after !== null && after !== undefined && notes.length < NOTES_LIMIT);
  const start = session?.started;
  setChildren(document.getElementById("notes-body"), notes.map((note) => {
    const p = note.payload || {};
    return el("tr", { "data-testid": "note-row", dataset: { eventId: String(note.id) } },
      el("td", { class: "mono" }, formatClock(note.timestamp)),
      el("td", {}, el("span", { class: `badge ${p.kind === "problem" ? "bad" : "none"}` }, p.kind ?? "note")),
      el("td", { "data-testid": "note-text" }, p.text ?? ""),
      el("td", {}, el("a", {
        href: `${page}/replay?t=${start ? Math.max(0, note.timestamp - start).toFixed(1) : 0}`,
      }, "Replay here")));
  }));
  document.getElementById("notes-empty").classList.toggle("hidden", notes.length > 0);
}

document.getElementById("stop-button").addEventListener("click", () =>
  run(api(`${base}/stop`, { method: "POST" }).then(() => { clearError(); return reload(); })));

run(me().then(() => Promise.all([reload().then(loadNotes), loadReportOptions()])));
liveSocket("/api/updates", {
  onOpen: (reconnected) => { if (reconnected) run(reload().then(loadNotes)); },
  onMessage: (message) => {
    if (message.type === "sessions") run(reload());
    else if (message.type === "report" && String(message.session) === String(sessionID)) renderReport(message.report);
  },
});
