// Withdrawal (/withdraw, no login): a tester's code and secret, whether to delete their recordings
// too, then the list of what was deleted, as muevald reports it.
//
// Test hooks: #withdraw-code, #withdraw-secret, #withdraw-recordings, #withdraw-submit,
// #withdraw-status, #withdrawn with #deleted > li and, while not finished, #pending > li.

import { APIError, api, el, setChildren, showError } from "./common.js";

document.getElementById("withdraw-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const status = document.getElementById("withdraw-status");
  const button = document.getElementById("withdraw-submit");
  button.disabled = true;
  api("/api/public/withdraw", { method: "POST", quiet: true, body: {
    code: document.getElementById("withdraw-code").value.trim(),
    secret: document.getElementById("withdraw-secret").value.trim(),
    deleteRecordings: document.getElementById("withdraw-recordings").checked,
  } })
    .then((reply) => {
      setChildren(document.getElementById("deleted"), reply.deleted.map((line) => el("li", {}, line)));
      setChildren(document.getElementById("kept"), reply.kept.map((line) => el("li", {}, line)));
      document.getElementById("kept-line").classList.toggle("hidden", reply.kept.length === 0);
      // Recorded but not finished: the same code and secret finish it (so does the lab's server when it restarts).
      setChildren(document.getElementById("pending"), reply.pending.map((line) => el("li", {}, line)));
      document.getElementById("pending-part").classList.toggle("hidden", reply.withdrawn);
      document.getElementById("withdrawn-title").textContent = reply.withdrawn ? "You have withdrawn" : "Your withdrawal is recorded";
      document.getElementById("withdraw-form").classList.add("hidden");
      document.getElementById("withdrawn").classList.remove("hidden");
    })
    .catch((error) => {
      status.textContent = error instanceof APIError ? error.message : String(error);
      status.classList.add("refused");
      showError(status.textContent);
    })
    .finally(() => { button.disabled = false; });
});
