// Questionnaire page (/questionnaire?study=S&iteration=N&participant=P): what a participant fills
// in on a tablet after an iteration, in the console (logged in). The form is questionnaire-form.js's,
// which the tester's invitation page (/i/CODE) shares.

import { api, me, run, showError } from "./common.js";
import { questionnaireForm } from "./questionnaire-form.js";

const query = new URLSearchParams(location.search);
const study = query.get("study") || "";
const iteration = Number(query.get("iteration"));
const participant = query.get("participant") || "";

if (!study || !participant || !Number.isInteger(iteration) || iteration < 1) {
  showError("This address names no study, iteration and participant: open the questionnaire from the study's page.");
  document.getElementById("questionnaire-form").classList.add("hidden");
} else {
  run(me().then(() => Promise.all([api("/api/questionnaire"), api(`/api/studies/${encodeURIComponent(study)}`)])).then(([items, data]) => {
    const s = data.study;
    document.title = `Questionnaire · ${s.name} · Mobile Monitor`;
    document.getElementById("questionnaire-title").textContent = `Questionnaire: ${s.name}`;
    const label = s.iterations.find((it) => it.number === iteration)?.label;
    document.getElementById("questionnaire-line").textContent =
      `Participant ${participant} · iteration ${iteration}${label ? ` (${label})` : ""}`;
    if (!s.participants.some((p) => p.code === participant)) {
      showError(`study "${study}" has no participant "${participant}"`);
    }
    const mine = (answer) => answer.iteration === iteration && answer.participant === participant;
    questionnaireForm({
      items, tasks: s.tasks, questions: s.questions, iteration, participant,
      answered: { sus: data.responses.sus.filter(mine), seq: data.responses.seq.filter(mine), answers: data.responses.answers.filter(mine) },
      submit: (responses) => api(`/api/studies/${encodeURIComponent(study)}/questionnaire`, { method: "POST", body: { responses }, quiet: true }),
    });
  }));
}
