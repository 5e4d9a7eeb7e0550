// Study page (/study?name=S): iterations, tasks, participants and questions with forms to add
// each; the participant × iteration matrix with their sessions and questionnaire status; the
// study report (all iterations or one) and the CSV export (docs/STUDIES.md).
//
// Test hooks: #study-title; forms #iteration-form, #task-form (#task-name, #task-instructions,
// #task-limit, #task-success, #task-path), #participant-form (#participant-code,
// #participant-attributes), #question-form (#question-id, #question-text); rows
// tr[data-testid=task-row][data-task=NAME], tr[data-testid=participant-row][data-participant=CODE];
// matrix cells td[data-testid=cell][data-iteration=N][data-participant=CODE] with
// a[data-testid=session-link] and a[data-testid=questionnaire-link], [data-testid=questionnaire-state]
// (data-complete="true" once SUS, every SEQ and every question are answered); report: #report-iteration,
// #report-build, #report-state (badge), #report-open; #csv-link. Recruiting: #recruit-form (#recruit-count,
// #recruit-quotas, #recruit-requirements, #recruit-target, #recruit-deadline), #recruitment-line,
// #shortfalls > li, rows tr[data-testid=invitation-row][data-participant=CODE] with [data-testid=state].

import {
  api, clearError, el, formatDuration, formatTime, liveSocket, me, questionnaireURL, run, sessionDuration, setChildren,
  showError, stateBadge,
} from "./common.js";

const name = new URLSearchParams(location.search).get("name") || "";
const base = `/api/studies/${encodeURIComponent(name)}`;
let data = null;
let reportTimer = null;

document.getElementById("csv-link").setAttribute("href", `${base}/export.csv`);

async function reload() {
  data = await api(base);
  const study = data.study;
  document.title = `${study.name} · Studies · Mobile Monitor`;
  document.getElementById("study-title").textContent = study.name;
  document.getElementById("study-line").textContent = [study.appId, study.description].filter(Boolean).join(" · ");
  renderIterations(study);
  renderTasks(study);
  renderParticipants(study);
  renderQuestions(study);
  renderMatrix();
}

function renderIterations(study) {
  setChildren(document.getElementById("iterations-body"), study.iterations.map((iteration) =>
    el("tr", { "data-testid": "iteration-row", dataset: { iteration: String(iteration.number) } },
      el("td", { class: "num" }, String(iteration.number)),
      el("td", {}, iteration.label || "—"),
      el("td", {}, formatTime(iteration.created)))));
  const select = document.getElementById("report-iteration");
  const chosen = select.value;
  setChildren(select, el("option", { value: "" }, "All iterations"), study.iterations.map((iteration) =>
    el("option", { value: String(iteration.number), selected: String(iteration.number) === chosen },
      `Iteration ${iteration.number}${iteration.label ? ` (${iteration.label})` : ""}`)));
}

function renderTasks(study) {
  setChildren(document.getElementById("tasks-body"), study.tasks.map((task) =>
    el("tr", { "data-testid": "task-row", dataset: { task: task.name } },
      el("td", {}, task.name),
      el("td", {}, task.instructions || "—"),
      el("td", { class: "num" }, task.timeLimit ? `${task.timeLimit} s` : "—"),
      el("td", { class: "mono" }, task.success),
      el("td", {}, task.expectedPath.length ? task.expectedPath.join(" → ") : "—"))));
}

function renderParticipants(study) {
  setChildren(document.getElementById("participants-body"), study.participants.map((participant) =>
    el("tr", { "data-testid": "participant-row", dataset: { participant: participant.code } },
      el("td", {}, participant.code),
      el("td", {}, Object.entries(participant.attributes).map(([key, value]) => `${key}=${value}`).join(", ") || "—"))));
}

function renderQuestions(study) {
  setChildren(document.getElementById("questions-body"), study.questions.map((question) =>
    el("tr", { "data-testid": "question-row", dataset: { question: question.id } },
      el("td", { class: "mono" }, question.id),
      el("td", {}, question.text))));
}

/** What a participant answered in an iteration, against what the questionnaire asks. */
function questionnaireState(iteration, participant) {
  const mine = (answer) => answer.iteration === iteration && answer.participant === participant;
  const responses = data.responses;
  const sus = responses.sus.some(mine);
  const seq = responses.seq.filter(mine).length;
  const answers = responses.answers.filter(mine).length;
  const study = data.study;
  const complete = sus && seq >= study.tasks.length && answers >= study.questions.length;
  const parts = [`SUS ${sus ? "✓" : "—"}`];
  if (study.tasks.length) parts.push(`SEQ ${seq}/${study.tasks.length}`);
  if (study.questions.length) parts.push(`answers ${answers}/${study.questions.length}`);
  return { complete, text: parts.join(" · ") };
}

function renderMatrix() {
  const study = data.study;
  setChildren(document.getElementById("matrix-head"), el("tr", {}, el("th", {}, "Participant"),
    study.iterations.map((iteration) => el("th", {}, `Iteration ${iteration.number}`, iteration.label ? el("div", { class: "subtitle" }, iteration.label) : null))));
  setChildren(document.getElementById("matrix-body"), study.participants.map((participant) =>
    el("tr", {}, el("th", {}, participant.code), study.iterations.map((iteration) => {
      const sessions = data.sessions.filter((s) => s.iteration === iteration.number && s.participant === participant.code);
      const state = questionnaireState(iteration.number, participant.code);
      return el("td", { "data-testid": "cell", dataset: { iteration: String(iteration.number), participant: participant.code } },
        sessions.length
          ? el("div", {}, sessions.map((session) => el("div", {},
            el("a", { href: `/sessions/${encodeURIComponent(session.id)}`, "data-testid": "session-link", dataset: { sessionId: String(session.id) } },
              `Session ${session.id}`), " ", stateBadge(session.state), " ", formatDuration(sessionDuration(session)))))
          : el("div", { class: "muted" }, "no session"),
        el("div", { class: state.complete ? "" : "muted", "data-testid": "questionnaire-state", dataset: { complete: String(state.complete) } },
          state.text, " · ",
          el("a", { href: questionnaireURL(study.name, iteration.number, participant.code), "data-testid": "questionnaire-link" },
            state.complete ? "correct answers" : "questionnaire")));
    }))));
  document.getElementById("matrix-empty").classList.toggle("hidden", study.iterations.length > 0 && study.participants.length > 0);
}

// ---------------------------------------------------------------- recruiting

let shortfalls = [];

async function loadRecruitment() {
  const status = await api(`${base}/recruitment`);
  const recruitment = status.recruitment;
  const line = document.getElementById("recruitment-line");
  if (!recruitment) {
    line.textContent = "Nobody recruited yet.";
    setChildren(document.getElementById("recruitment-state"));
  } else {
    // The server's counts: the recruitment's iteration's (what completes the study), and every iteration's.
    const listed = (counts) => status.statuses.filter((state) => counts[state] > 0).map((state) => `${counts[state]} ${state}`).join(", ");
    const others = status.statuses.some((state) => status.allIterationCounts[state] !== status.counts[state]);
    line.textContent = [
      `Iteration ${recruitment.iteration}: ${status.counts.done} of ${recruitment.target} done`,
      recruitment.deadline ? `deadline ${formatTime(recruitment.deadline)}` : null,
      listed(status.counts),
      others ? `every iteration: ${listed(status.allIterationCounts)}` : null,
      recruitment.completed ? `complete since ${formatTime(recruitment.completed)} (${recruitment.completionReason === "deadline" ? "deadline passed" : "target met"})` : null,
    ].filter(Boolean).join(" · ");
    setChildren(document.getElementById("recruitment-state"), stateBadge(recruitment.completed ? "done" : "recording"));
    if (recruitment.completed) {
      line.append(" · ", el("a", { href: `/studies/${encodeURIComponent(name)}/report/index.html`, target: "_blank", rel: "noopener",
                                   "data-testid": "completed-report" }, "report"));
    }
  }
  setChildren(document.getElementById("shortfalls"), shortfalls.map((text) => el("li", { class: "refused" }, text)));
  setChildren(document.getElementById("invitations-body"), status.invitations.map((invitation) =>
    el("tr", { "data-testid": "invitation-row", dataset: { participant: invitation.participant } },
      el("td", { class: "mono" }, invitation.participant),
      el("td", { class: "num" }, String(invitation.iteration)),
      el("td", {}, stateBadge(invitation.status)),
      el("td", {}, el("a", { href: `/i/${encodeURIComponent(invitation.code)}`, class: "mono", target: "_blank", rel: "noopener" }, invitation.code)),
      el("td", {}, formatTime(invitation.expires)),
      el("td", {}, invitation.sessionId
        ? el("a", { href: `/sessions/${encodeURIComponent(invitation.sessionId)}` }, `Session ${invitation.sessionId}`) : "—"))));
}

const list = (id) => value(id).split(",").map((item) => item.trim()).filter(Boolean);

document.getElementById("recruit-form").addEventListener("submit", (submit) => {
  submit.preventDefault();
  const body = { count: Number(value("recruit-count")), quotas: list("recruit-quotas"), requirements: list("recruit-requirements") };
  if (value("recruit-target")) body.target = Number(value("recruit-target"));
  if (value("recruit-deadline")) body.deadline = new Date(value("recruit-deadline")).getTime() / 1000;
  run(api(`${base}/recruit`, { method: "POST", body }).then((result) => {
    clearError();
    shortfalls = result.shortfalls;
    return Promise.all([reload(), loadRecruitment()]);
  }));
});

// ---------------------------------------------------------------- forms

/** Posts one form's object and reloads; the server's refusal stays in the banner. */
function wire(formID, path, build) {
  document.getElementById(formID).addEventListener("submit", (submit) => {
    submit.preventDefault();
    let body;
    try { body = build(); } catch (error) { showError(error.message); return; }
    run(api(`${base}/${path}`, { method: "POST", body }).then(() => {
      clearError();
      for (const field of document.getElementById(formID).querySelectorAll("input[type=text]:not(#task-success), input[type=number]")) field.value = "";
      return reload();
    }));
  });
}

const value = (id) => document.getElementById(id).value.trim();

wire("iteration-form", "iterations", () => {
  const body = {};
  if (value("iteration-number")) body.number = Number(value("iteration-number"));
  if (value("iteration-label")) body.label = value("iteration-label");
  return body;
});

wire("task-form", "tasks", () => {
  const body = { name: value("task-name"), success: value("task-success") || "observer" };
  if (!body.name) throw new Error("Give the task a name (the name the app's task events use).");
  if (value("task-instructions")) body.instructions = value("task-instructions");
  if (value("task-limit")) body.timeLimit = Number(value("task-limit"));
  body.expectedPath = value("task-path").split(",").map((view) => view.trim()).filter(Boolean);
  return body;
});

wire("participant-form", "participants", () => {
  const attributes = {};
  for (const pair of value("participant-attributes").split(",").map((text) => text.trim()).filter(Boolean)) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new Error(`"${pair}" is not an attribute: give KEY=VALUE, such as experience=novice`);
    attributes[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return { code: value("participant-code"), attributes };
});

wire("question-form", "questions", () => ({ id: value("question-id"), text: value("question-text") }));

// ---------------------------------------------------------------- report

function showReport(report) {
  clearTimeout(reportTimer);
  setChildren(document.getElementById("report-state"), stateBadge(report.state === "none" ? "none" : report.state));
  const open = document.getElementById("report-open");
  open.classList.toggle("hidden", report.state !== "ready");
  if (report.url) open.setAttribute("href", report.url);
  const line = { none: "Not built yet.", running: "Building…", ready: `Built ${formatTime(report.generated)}.`, failed: `Failed: ${report.error ?? ""}` };
  document.getElementById("report-line").textContent = line[report.state] ?? "";
  document.getElementById("report-build").disabled = report.state === "running";
  // Building runs in the background: ask again until it is done.
  if (report.state === "running") reportTimer = setTimeout(() => run(loadReport()), 1000);
}

function reportQuery() {
  const iteration = document.getElementById("report-iteration").value;
  return iteration ? `?iteration=${encodeURIComponent(iteration)}` : "";
}

async function loadReport() {
  showReport(await api(`${base}/report${reportQuery()}`));
}

document.getElementById("report-iteration").addEventListener("change", () => run(loadReport()));
document.getElementById("report-form").addEventListener("submit", (submit) => {
  submit.preventDefault();
  const iteration = document.getElementById("report-iteration").value;
  run(api(`${base}/report`, { method: "POST", body: iteration ? { iteration: Number(iteration) } : {} }).then((report) => {
    clearError();
    showReport(report);
  }));
});

if (!name) showError("No study named in the address: open one from the Studies page.");
else run(me().then(() => Promise.all([reload(), loadReport(), loadRecruitment()])));
// A session that starts, stops or records changes the matrix.
liveSocket("/api/updates", {
  onOpen: (reconnected) => { if (reconnected && name) run(Promise.all([reload(), loadRecruitment()])); },
  onMessage: (message) => {
    if (!name) return;
    if (message.type === "sessions") run(Promise.all([reload(), loadRecruitment()]));
    if ((message.type === "recruitment" || message.type === "studyCompleted") && message.study === name) run(loadRecruitment());
  },
});
