// A tester's invitation (/i/CODE, no login, on their phone): the study, how to join it with the
// app, the tasks in order, the invitation's status, and after the session the questionnaire
// (questionnaire-form.js, as in the console), answered as this invitation's participant only.
//
// A study that names its web app gets a link to it, with the code in its query, while the invitation can be used
// (the server says so: `appLink`); the page never builds it.
//
// Test hooks: #study-name, #invitation-status, #app-link (shown or not), #invitation-code, #tasks > li[data-testid=task],
// #questionnaire-note, and questionnaire-form.js's.

import { api, el, formatDuration, run, setChildren, stateBadge } from "./common.js";
import { questionnaireForm } from "./questionnaire-form.js";

const code = decodeURIComponent(location.pathname.split("/")[2] ?? "");
const base = `/api/public/invitations/${encodeURIComponent(code)}`;

const notes = {
  invited: "The questions open here once your phone has joined the study with the code above.",
  expired: "This invitation has expired: ask the lab for a new one.",
  withdrawn: "This invitation was withdrawn.",
};

/** "Open the study's app": an http(s) link only (el() keeps links on this origin, so it is set here). */
function showAppLink(link) {
  const url = link ? new URL(link) : null;
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) return;
  document.getElementById("app-link").href = url.href;
  document.getElementById("app-where").textContent = `It opens ${url.host} with your invitation code.`;
  document.getElementById("app-step").textContent = "Open the study's app with the button above, on this phone.";
  document.getElementById("app-open").classList.remove("hidden");
}

run(api(base).then((page) => {
  document.getElementById("study-name").textContent = page.study.name;
  document.getElementById("study-description").textContent = page.study.description ?? "";
  setChildren(document.getElementById("invitation-status"), stateBadge(page.invitation.status));
  document.getElementById("app-line").textContent = page.study.appId ? ` (${page.study.appId})` : "";
  showAppLink(page.appLink);
  document.getElementById("invitation-code").textContent = page.invitation.code;
  setChildren(document.getElementById("tasks"), page.tasks.map((task) =>
    el("li", { "data-testid": "task" },
      el("strong", {}, task.name),
      task.instructions ? el("p", {}, task.instructions) : null,
      task.timeLimit ? el("p", { class: "muted" }, `Time limit: ${formatDuration(task.timeLimit)}`) : null)));
  document.getElementById("thanks-line").textContent = "Thank you for taking part.";
  const form = document.getElementById("questionnaire-form");
  if (!page.questionnaireOpen) {
    form.classList.add("hidden");
    document.getElementById("questionnaire-note").textContent = notes[page.invitation.status] ?? "";
    return;
  }
  document.getElementById("questionnaire-note").textContent =
    page.answered.sus.length > 0 ? "You answered already; you may change your answers." : "";
  const { iteration, participant } = page.invitation;
  questionnaireForm({
    items: page.questionnaire, tasks: page.tasks, questions: page.questions, iteration, participant, answered: page.answered,
    submit: (responses) => api(`${base}/questionnaire`, { method: "POST", body: { responses }, quiet: true }),
  });
}));
