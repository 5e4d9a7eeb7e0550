// Sessions page (/): every session, start one, stop or delete it; pushed updates over /api/updates.
//
// Test hooks: form #start-form (#start-name, #start-user, #start-notes, #start-device,
// #start-sensors checkboxes, #start-pairing, #start-study/#start-iteration/#start-participant), button #start-button [data-testid=start-session],
// #start-result (the new session: data-session-id, and data-pairing-code when asked for);
// #search, #state-filter; #quotes (what testers said that matches #search: li[data-testid=quote]
// [data-session-id] each with a link a[data-testid=quote-replay] to the replay at that moment); table #sessions > tbody#sessions-body with one
// tr[data-testid=session-row][data-session-id=ID][data-state=STATE] per session, whose buttons are
// [data-testid=stop] and [data-testid=delete] and links [data-testid=live|replay|details].

import {
  api, clearError, deviceLabel, el, formatCount, formatDuration, formatRate, formatTime, liveSocket,
  me, run, sessionDuration, setChildren, stateBadge,
} from "./common.js";

let sessions = [];
let devices = [];
let studies = [];
const rates = new Map(); // session id → events/s from the last "rates" message

const body = document.getElementById("sessions-body");
const search = document.getElementById("search");
const stateFilter = document.getElementById("state-filter");

async function reload() {
  const [sessionList, deviceList, studyList] = await Promise.all([api("/api/sessions"), api("/api/devices"), api("/api/studies")]);
  sessions = sessionList.sort((a, b) => b.id - a.id);
  devices = deviceList;
  studies = studyList;
  renderStudies();
  for (const session of sessions) rates.set(String(session.id), session.eventsPerSecond ?? 0);
  renderDevices();
  render();
}

function matches(session, query) {
  if (stateFilter.value && session.state !== stateFilter.value) return false;
  if (!query) return true;
  const haystack = [session.id, session.name, session.testUser, session.device, session.boundDevice, session.notes]
    .filter((value) => value !== undefined && value !== null).join(" ").toLowerCase();
  return haystack.includes(query);
}

function render() {
  const query = search.value.trim().toLowerCase();
  const shown = sessions.filter((session) => matches(session, query));
  setChildren(body, shown.map(row));
  document.getElementById("sessions-empty").classList.toggle("hidden", shown.length > 0);
  const recording = sessions.filter((s) => s.state === "recording").length;
  document.getElementById("summary").textContent =
    `${sessions.length} session${sessions.length === 1 ? "" : "s"}, ${recording} recording, ${devices.filter((d) => d.connected).length} device(s) connected`;
}

function row(session) {
  const id = String(session.id);
  const base = `/sessions/${encodeURIComponent(id)}`;
  const device = devices.find((d) => d.id === (session.device ?? session.boundDevice));
  const deviceText = session.device || session.boundDevice
    ? deviceLabel(device, session.device ?? session.boundDevice)
    : "next device";
  const actions = el("td", { class: "actions" },
    session.state !== "stopped" ? el("a", { class: "button small", href: `${base}/live`, "data-testid": "live" }, "Live") : null,
    el("a", { class: "button small", href: `${base}/replay`, "data-testid": "replay" }, "Replay"),
    el("a", { class: "button small", href: base, "data-testid": "details" }, "Details"),
    session.state !== "stopped"
      ? el("button", { type: "button", class: "small stop", "data-testid": "stop", onclick: () => run(stop(session)) }, "■ Stop")
      : null,
    session.state !== "recording"
      ? el("button", { type: "button", class: "small danger", "data-testid": "delete", onclick: () => run(remove(session)) }, "Delete")
      : null);
  return el("tr", { "data-testid": "session-row", dataset: { sessionId: id, state: session.state } },
    el("td", {}, stateBadge(session.state)),
    el("td", {}, el("a", { href: base }, session.name || `Session ${id}`)),
    el("td", { class: "device" }, deviceText),
    el("td", {}, session.testUser || "—"),
    el("td", { class: "num", "data-testid": "events" }, formatCount(session.events)),
    el("td", { class: "num", "data-testid": "rate" }, session.state === "recording" ? formatRate(rates.get(id)) : "—"),
    el("td", { class: "num", "data-testid": "duration" }, formatDuration(sessionDuration(session))),
    el("td", {}, formatTime(session.started ?? session.created)),
    actions);
}

async function stop(session) {
  await api(`/api/sessions/${encodeURIComponent(session.id)}/stop`, { method: "POST" });
  clearError();
  await reload();
}

async function remove(session) {
  const name = session.name || `Session ${session.id}`;
  if (!confirm(`Delete “${name}” and everything it recorded (${formatCount(session.events)} events)? This cannot be undone.`)) return;
  await api(`/api/sessions/${encodeURIComponent(session.id)}`, { method: "DELETE" });
  clearError();
  await reload();
}

function renderDevices() {
  const select = document.getElementById("start-device");
  const chosen = select.value;
  const options = [el("option", { value: "" }, "The next device that connects")];
  const sorted = [...devices].sort((a, b) => Number(b.connected) - Number(a.connected) || String(a.id).localeCompare(String(b.id)));
  for (const device of sorted) {
    options.push(el("option", { value: device.id, selected: device.id === chosen },
      `${deviceLabel(device)}${device.connected ? " — connected" : ""}`));
  }
  setChildren(select, options);
}

/** The study selects: a study, then one of its iterations and participants (all three or none). */
function renderStudies() {
  const select = document.getElementById("start-study");
  const chosen = select.value;
  setChildren(select, el("option", { value: "" }, "None"),
    studies.map((study) => el("option", { value: study.name, selected: study.name === chosen }, study.name)));
  renderStudyChoices();
}

function renderStudyChoices() {
  const study = studies.find((s) => s.name === document.getElementById("start-study").value);
  for (const node of document.querySelectorAll(".study-field")) node.classList.toggle("hidden", !study);
  const fill = (id, values, label) => {
    const select = document.getElementById(id);
    const chosen = select.value;
    setChildren(select, values.map(([value, text]) => el("option", { value, selected: value === chosen }, text)));
    if (!values.length) select.append(el("option", { value: "" }, label));
  };
  // The newest iteration first: a study usually records its latest round.
  fill("start-iteration", [...(study?.iterations ?? [])].reverse().map((it) =>
    [String(it.number), `${it.number}${it.label ? ` (${it.label})` : ""}`]), "no iteration yet: add one on the study's page");
  fill("start-participant", (study?.participants ?? []).map((p) => [p.code, p.code]), "no participant yet: add one on the study's page");
}

document.getElementById("start-study").addEventListener("change", renderStudyChoices);

document.getElementById("start-form").addEventListener("submit", (submit) => {
  submit.preventDefault();
  run(start());
});

async function start() {
  const button = document.getElementById("start-button");
  const value = (id) => document.getElementById(id).value.trim();
  const request = {};
  if (value("start-name")) request.name = value("start-name");
  if (value("start-user")) request.user = value("start-user");
  if (value("start-notes")) request.notes = value("start-notes");
  if (value("start-device")) request.device = value("start-device");
  const sensors = [...document.querySelectorAll("#start-sensors input:checked")].map((box) => box.value);
  if (sensors.length) request.sensors = sensors;
  if (document.getElementById("start-pairing").checked) request.pairing = true;
  if (value("start-study")) {
    request.study = value("start-study");
    if (value("start-iteration")) request.iteration = Number(value("start-iteration"));
    if (value("start-participant")) request.participant = value("start-participant");
  }
  button.disabled = true;
  try {
    const session = await api("/api/sessions", { method: "POST", body: request });
    clearError();
    const result = document.getElementById("start-result");
    result.dataset.sessionId = String(session.id);
    if (session.pairingCode) result.dataset.pairingCode = session.pairingCode;
    else delete result.dataset.pairingCode;
    setChildren(result,
      `Session ${session.id} (${session.name || "unnamed"}) is ${session.state}`,
      session.state === "waiting" ? ` for ${session.boundDevice ? session.boundDevice : "the next device"}` : "",
      session.pairingCode ? el("span", {}, ". Pairing code: ", el("b", { "data-testid": "pairing-code" }, session.pairingCode)) : "",
      ". ",
      el("a", { href: `/sessions/${encodeURIComponent(session.id)}/live`, "data-testid": "watch-live" }, "Watch live →"));
    await reload();
  } finally {
    button.disabled = false;
  }
}

// What testers said: the transcripts of every session, searched by the server (they are not in the
// session list), a moment after typing stops; an older answer never replaces a newer one.
const quotesSection = document.getElementById("quotes");
let quotesAsked = 0;
let quotesTimer;

async function searchQuotes() {
  const query = search.value.trim();
  const asked = ++quotesAsked;
  if (query.length < 2) {
    quotesSection.classList.add("hidden");
    return;
  }
  const answer = await api(`/api/search?q=${encodeURIComponent(query)}`);
  if (asked !== quotesAsked) return;
  setChildren(document.getElementById("quotes-list"), answer.quotes.map((quote) => {
    const replay = `/sessions/${encodeURIComponent(String(quote.session))}/replay?at=${quote.segment.start}`;
    return el("li", { dataset: { testid: "quote", sessionId: String(quote.session) }, class: quote.segment.exclamation ? "exclamation" : "" },
      el("a", { href: replay, dataset: { testid: "quote-replay" } }, `“${quote.segment.text}”`),
      el("span", { class: "muted" }, ` ${quote.name}${quote.user ? ` · ${quote.user}` : ""} · ${formatTime(quote.segment.start)}`
        + (quote.segment.exclamation ? ` · exclamation “${quote.segment.exclamation}”` : "")));
  }));
  document.getElementById("quotes-note").textContent = answer.quotes.length === 0
    ? "No tester said that (transcripts are made after a session stops)."
    : answer.truncated ? `The first ${answer.quotes.length} quotes: search for more words to narrow it.` : "";
  quotesSection.classList.remove("hidden");
}

search.addEventListener("input", () => {
  render();
  clearTimeout(quotesTimer);
  quotesTimer = setTimeout(() => run(searchQuotes()), 300);
});
stateFilter.addEventListener("change", render);

// Durations of recording sessions tick locally; the server pushes everything else.
setInterval(() => {
  for (const tr of body.querySelectorAll("tr[data-state=recording]")) {
    const session = sessions.find((s) => String(s.id) === tr.dataset.sessionId);
    if (session) tr.querySelector("[data-testid=duration]").textContent = formatDuration(sessionDuration(session));
  }
}, 1000);

function applyRates(message) {
  for (const [id, rate] of Object.entries(message.sessions || {})) rates.set(id, rate);
  const counts = message.events || {}; // per-session event totals, when the server sends them
  for (const tr of body.querySelectorAll("tr[data-session-id]")) {
    const id = tr.dataset.sessionId;
    if (tr.dataset.state === "recording") tr.querySelector("[data-testid=rate]").textContent = formatRate(rates.get(id) ?? 0);
    if (counts[id] !== undefined) {
      const session = sessions.find((s) => String(s.id) === id);
      if (session) session.events = counts[id];
      tr.querySelector("[data-testid=events]").textContent = formatCount(counts[id]);
    }
  }
}

run(me().then(reload));
liveSocket("/api/updates", {
  onOpen: (reconnected) => { if (reconnected) run(reload()); },
  onMessage: (message) => {
    if (message.type === "sessions") run(reload());
    else if (message.type === "rates") applyRates(message);
  },
});
