// Enrolment (/enrol/KEY, no login, on a tester's phone): the lab's consent text and an explicit
// consent step, then the profile form with the lab's fields; on success the tester's code and
// withdrawal secret, shown once. Everything the lab or a tester wrote is set as text.
//
// Test hooks: #consent-text, #consent-check, #consent-continue, #profile-step with
// [data-testid=field][data-field=NAME] (a select or a text input), #enrol-submit, #enrol-status,
// #enrolled with #tester-code and #tester-secret.

import { APIError, api, el, run, setChildren, showError } from "./common.js";

const key = decodeURIComponent(location.pathname.split("/")[2] ?? "");
const base = `/api/public/enrol/${encodeURIComponent(key)}`;
let pool = null;

function field(spec) {
  const control = spec.choices.length > 0
    ? el("select", { id: `field-${spec.name}`, "data-testid": "field", dataset: { field: spec.name } },
        el("option", { value: "" }, "Choose…"), spec.choices.map((choice) => el("option", { value: choice }, choice)))
    : el("input", { type: "text", id: `field-${spec.name}`, "data-testid": "field", dataset: { field: spec.name }, maxlength: "200" });
  return el("label", { class: "field", for: `field-${spec.name}` }, el("span", {}, spec.label || spec.name), control);
}

const check = document.getElementById("consent-check");
check.addEventListener("change", () => { document.getElementById("consent-continue").disabled = !check.checked; });
document.getElementById("consent-continue").addEventListener("click", () => {
  if (!check.checked) return;
  document.getElementById("consent-step").classList.add("hidden");
  document.getElementById("profile-step").classList.remove("hidden");
  window.scrollTo(0, 0);
});

document.getElementById("profile-step").addEventListener("submit", (event) => {
  event.preventDefault();
  const profile = {};
  for (const spec of pool.fields) {
    const value = document.getElementById(`field-${spec.name}`).value.trim();
    if (value) profile[spec.name] = value;
  }
  const status = document.getElementById("enrol-status");
  const button = document.getElementById("enrol-submit");
  button.disabled = true;
  api(base, { method: "POST", body: { consent: check.checked, consentVersion: pool.consent.version, profile }, quiet: true })
    .then((enrolled) => {
      document.getElementById("tester-code").textContent = enrolled.code;
      document.getElementById("tester-secret").textContent = enrolled.secret;
      document.getElementById("profile-step").classList.add("hidden");
      document.getElementById("enrolled").classList.remove("hidden");
      window.scrollTo(0, 0);
    })
    .catch((error) => {
      status.textContent = error instanceof APIError ? error.message : String(error);
      status.classList.add("refused");
      showError(status.textContent);
    })
    .finally(() => { button.disabled = false; });
});

run(api(base).then((reply) => {
  pool = reply;
  document.getElementById("consent-text").textContent = reply.consent.text;
  document.getElementById("consent-version").textContent = `Version ${reply.consent.version}`;
  setChildren(document.getElementById("fields"), reply.fields.map(field));
}));
