// Studies page (/studies): every study, and a form to create one (docs/STUDIES.md).
//
// Test hooks: form #study-form (#study-name, #study-app, #study-description, #study-create
// [data-testid=create-study]); tbody#studies-body with tr[data-testid=study-row][data-study=NAME],
// whose link [data-testid=open-study] leads to the study's page.

import { api, clearError, el, formatTime, me, run, setChildren, studyURL } from "./common.js";

async function reload() {
  const studies = await api("/api/studies");
  setChildren(document.getElementById("studies-body"), studies.map((study) =>
    el("tr", { "data-testid": "study-row", dataset: { study: study.name } },
      el("td", {}, el("a", { href: studyURL(study.name), "data-testid": "open-study" }, study.name)),
      el("td", {}, study.appId || "—"),
      el("td", {}, study.description || "—"),
      el("td", { class: "num" }, String(study.iterations.length)),
      el("td", { class: "num" }, String(study.tasks.length)),
      el("td", { class: "num" }, String(study.participants.length)),
      el("td", {}, formatTime(study.created)))));
  document.getElementById("studies-empty").classList.toggle("hidden", studies.length > 0);
  document.getElementById("summary").textContent = `${studies.length} stud${studies.length === 1 ? "y" : "ies"}`;
}

document.getElementById("study-form").addEventListener("submit", (submit) => {
  submit.preventDefault();
  const value = (id) => document.getElementById(id).value.trim();
  const body = { name: value("study-name") };
  if (value("study-app")) body.appId = value("study-app");
  if (value("study-description")) body.description = value("study-description");
  run(api("/api/studies", { method: "POST", body }).then((study) => {
    clearError();
    location.href = studyURL(study.name);
  }));
});

run(me().then(reload));
