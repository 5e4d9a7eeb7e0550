// The questionnaire form (questionnaire-form.html, included by the console's Questionnaire page and by
// the tester's invitation page /i/CODE): the SUS's ten statements (1–5), the SEQ per task (1–7) and
// the study's own questions (free text). The texts come from the API (spelled once, in SessionModel).
//
// Test hooks: #questionnaire-form; fieldsets [data-testid=item][data-item=sus-K|seq-TASK] with
// radio inputs (name = data-item, value = the rating) and textareas [data-testid=item][data-item=q-ID];
// #questionnaire-submit; #form-status (data-item: the item a refusal names); #thanks (shown once saved).

import { APIError, clearError, el, setChildren, showError } from "./common.js";

/** A row of large radio buttons lowest…highest, with the ends labelled. */
function scale(name, lowest, highest, low, high, chosen) {
  const options = [];
  for (let value = lowest; value <= highest; value++) {
    options.push(el("label", { class: "choice" },
      el("input", { type: "radio", name, value: String(value), checked: chosen === value }),
      el("span", {}, String(value))));
  }
  return el("div", { class: "scale" }, el("span", { class: "end" }, low), el("div", { class: "choices" }, options), el("span", { class: "end" }, high));
}

function chosen(name) {
  const input = [...document.querySelectorAll("input[type=radio]")].find((radio) => radio.name === name && radio.checked);
  return input ? Number(input.value) : null;
}

/** Shows a refusal next to the button and at the top, and leads to the item it names. */
function refuse(message, item) {
  showError(message);
  const status = document.getElementById("form-status");
  status.textContent = message;
  status.classList.add("refused");
  for (const node of document.querySelectorAll(".item.missing")) node.classList.remove("missing");
  if (item) {
    status.dataset.item = item;
    const node = [...document.querySelectorAll("[data-item]")].find((candidate) => candidate.dataset.item === item);
    const box = node?.closest(".item") ?? node;
    box?.classList.add("missing");
    box?.scrollIntoView({ block: "center" });
  } else {
    delete status.dataset.item;
  }
}

/**
 * Fills the form and sends it. `items`: GET /api/questionnaire's texts; `tasks`, `questions`: the
 * study's; `answered`: the participant's answers so far ({sus, seq, answers} of that iteration and
 * participant only); `submit(responses)`: sends `{sus, seq, answers}` as POST …/questionnaire takes them.
 */
export function questionnaireForm({ items, tasks, questions, iteration, participant, answered, submit }) {
  setChildren(document.getElementById("sus-items"), items.susStatements.map((statement, index) =>
    el("fieldset", { class: "item", "data-testid": "item", dataset: { item: `sus-${index + 1}` } },
      el("legend", {}, `${index + 1}. ${statement}`),
      scale(`sus-${index + 1}`, items.susScale.lowest, items.susScale.highest, "strongly disagree", "strongly agree", answered.sus[0]?.items[index]))));
  document.getElementById("seq-section").classList.toggle("hidden", tasks.length === 0);
  document.getElementById("seq-question").textContent = items.seqQuestion;
  setChildren(document.getElementById("seq-items"), tasks.map((task) =>
    el("fieldset", { class: "item", "data-testid": "item", dataset: { item: `seq-${task.name}` } },
      el("legend", {}, task.name),
      task.instructions ? el("p", { class: "muted" }, task.instructions) : null,
      scale(`seq-${task.name}`, items.seqScale.lowest, items.seqScale.highest, "very difficult", "very easy",
        answered.seq.find((answer) => answer.task === task.name)?.rating))));
  document.getElementById("questions-section").classList.toggle("hidden", questions.length === 0);
  setChildren(document.getElementById("question-items"), questions.map((question) =>
    el("label", { class: "item question" }, el("span", {}, question.text),
      el("textarea", { "data-testid": "item", dataset: { item: `q-${question.id}` }, rows: "3" },
        answered.answers.find((answer) => answer.question === question.id)?.text ?? ""))));

  /** Everything the form asks, or the first unanswered item (worded as the server words it). */
  function collect() {
    const sus = [];
    for (let k = 1; k <= items.susStatements.length; k++) {
      const value = chosen(`sus-${k}`);
      if (value === null) return { missing: `the SUS answers are incomplete: item ${k} has no answer`, item: `sus-${k}` };
      sus.push(value);
    }
    const seq = [];
    for (const task of tasks) {
      const rating = chosen(`seq-${task.name}`);
      if (rating === null) return { missing: `the SEQ answers are incomplete: task "${task.name}" has no answer`, item: `seq-${task.name}` };
      seq.push({ iteration, participant, task: task.name, rating });
    }
    const answers = [];
    for (const question of questions) {
      const field = [...document.querySelectorAll("textarea[data-item]")].find((area) => area.dataset.item === `q-${question.id}`);
      const text = field.value.trim();
      if (!text) return { missing: `the questions answers are incomplete: question "${question.id}" has no answer`, item: `q-${question.id}` };
      answers.push({ iteration, participant, question: question.id, text });
    }
    return { responses: { sus: [{ iteration, participant, items: sus }], seq, answers } };
  }

  const form = document.getElementById("questionnaire-form");
  form.onsubmit = (event) => {
    event.preventDefault();
    const collected = collect();
    if (collected.missing) { refuse(collected.missing, collected.item); return; }
    const button = document.getElementById("questionnaire-submit");
    button.disabled = true;
    submit(collected.responses)
      .then(() => {
        clearError();
        form.classList.add("hidden");
        document.getElementById("thanks").classList.remove("hidden");
        window.scrollTo(0, 0);
      })
      .catch((error) => refuse(error instanceof APIError ? error.message : String(error), null))
      .finally(() => { button.disabled = false; });
  };
}
