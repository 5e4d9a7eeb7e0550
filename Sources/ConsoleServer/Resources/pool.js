// Tester pool page (/pool, logged in): the enrolment link with its QR code (and a new one on request),
// the consent text and profile fields the enrolment page shows, and the enrolled testers with the
// consent version each agreed to. Testers' answers are set as text.
//
// Test hooks: #pool-link, #pool-qr, #pool-rotate, #consent-text, #consent-save, #fields-text,
// #fields-save, rows tr[data-testid=tester-row][data-tester=CODE].

import { api, clearError, el, formatTime, me, run, setChildren, showError } from "./common.js";

let fields = [];
let drawn = 0;

function fieldLine(field) {
  return `${field.name}=${field.label}${field.choices.length > 0 ? `:${field.choices.join(",")}` : ""}`;
}

/** `name=Label` or `name=Label:a,b` → a field; the server checks names, lengths and duplicates. */
function parseField(line) {
  const at = line.indexOf("=");
  if (at <= 0) throw new Error(`"${line}" is not a profile field: give name=Label or name=Label:choice1,choice2`);
  const name = line.slice(0, at).trim();
  const rest = line.slice(at + 1);
  const colon = rest.indexOf(":");
  const label = (colon < 0 ? rest : rest.slice(0, colon)).trim();
  const choices = colon < 0 ? [] : rest.slice(colon + 1).split(",").map((choice) => choice.trim()).filter(Boolean);
  return { name, label, choices };
}

function showLink(page) {
  const link = document.getElementById("pool-link");
  link.textContent = page.link ?? "—";
  // The link is the console's own address: a same-origin path for el()'s rule.
  link.setAttribute("href", page.link ? new URL(page.link).pathname : "#");
  // A new query each time, so that a new link's code is fetched rather than the old one shown.
  document.getElementById("pool-qr").setAttribute("src", `/api/pool/link.svg?drawn=${++drawn}`);
}

function showSettings(page) {
  fields = page.settings.fields;
  document.getElementById("consent-version").textContent = page.settings.consentVersion > 0
    ? `(version ${page.settings.consentVersion})` : "(none yet: testers cannot enrol)";
  document.getElementById("consent-text").value = page.settings.consent;
  document.getElementById("fields-text").value = fields.map(fieldLine).join("\n");
  showLink(page);
}

function showTesters(testers) {
  document.getElementById("pool-summary").textContent = `${testers.length} tester${testers.length === 1 ? "" : "s"}`;
  setChildren(document.getElementById("testers-head"), el("tr", {},
    el("th", {}, "Code"), fields.map((field) => el("th", {}, field.label || field.name)), el("th", { class: "num" }, "Consent"), el("th", {}, "Enrolled")));
  setChildren(document.getElementById("testers-body"), testers.map((tester) =>
    el("tr", { "data-testid": "tester-row", dataset: { tester: tester.code } },
      el("td", { class: "mono" }, tester.code),
      fields.map((field) => el("td", {}, tester.profile[field.name] ?? "—")),
      el("td", { class: "num" }, `v${tester.consentVersion}`),
      el("td", {}, formatTime(tester.enrolled)))));
  document.getElementById("testers-empty").classList.toggle("hidden", testers.length > 0);
}

async function reload() {
  const page = await api("/api/pool");
  showSettings(page);
  showTesters(page.testers ?? []);
}

function save(body) {
  return api("/api/pool/settings", { method: "POST", body }).then((page) => { clearError(); showSettings(page); return reload(); });
}

document.getElementById("consent-form").addEventListener("submit", (event) => {
  event.preventDefault();
  run(save({ consent: document.getElementById("consent-text").value }));
});
document.getElementById("fields-form").addEventListener("submit", (event) => {
  event.preventDefault();
  let parsed;
  try {
    parsed = document.getElementById("fields-text").value.split("\n").map((line) => line.trim()).filter(Boolean).map(parseField);
  } catch (error) {
    showError(error.message);
    return;
  }
  run(save({ fields: parsed }));
});
document.getElementById("pool-rotate").addEventListener("click", () => {
  if (!confirm("Make a new enrolment link? The current one stops working.")) return;
  run(api("/api/pool/link/rotate", { method: "POST" }).then(showSettings));
});

run(me().then(reload));
