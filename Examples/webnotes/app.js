// Webnotes: add a note, find it. Two views (list, search) on History API routes (?view=…); notes in localStorage.
// The muEval instrumentation is the block at the end: a few lines, the rest of the app knows nothing of it.

const params = new URLSearchParams(location.search);
const notesKey = "webnotes.notes";
const notes = JSON.parse(localStorage.getItem(notesKey) ?? "[]");
let newestFirst = true;
let capture = null;

const $ = (id) => document.getElementById(id);

function item(text) {
  const li = document.createElement("li");
  li.textContent = text;  // a note is text, never markup
  return li;
}

function showNotes() {
  const ordered = newestFirst ? [...notes].reverse() : notes;
  $("notes").replaceChildren(...ordered.map(item));
}

function showResults() {
  const query = $("search-text").value.trim().toLowerCase();
  const found = query ? notes.filter((note) => note.toLowerCase().includes(query)) : [];
  $("results").replaceChildren(...found.map(item));
  $("no-results").hidden = !query || found.length > 0;
  if (found.length > 0) capture?.event("NoteFound", { results: found.length });
}

// The view named by the URL; `?view=` keeps the page's other parameters (the server, the invitation).
function render() {
  const view = new URLSearchParams(location.search).get("view") === "search" ? "search" : "list";
  $("list-view").hidden = view !== "list";
  $("search-view").hidden = view !== "search";
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.route === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (view === "search") showResults();
}

function go(view) {
  const next = new URLSearchParams(location.search);
  next.set("view", view);
  history.pushState({ view }, "", `?${next}`);
  render();
}

for (const link of document.querySelectorAll("nav a")) {
  link.addEventListener("click", (event) => {
    event.preventDefault();
    go(link.dataset.route);
  });
}
addEventListener("popstate", render);

$("add-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("note-text").value.trim();
  if (!text) return;
  notes.push(text);
  localStorage.setItem(notesKey, JSON.stringify(notes));
  $("note-text").value = "";
  showNotes();
  capture?.event("NoteAdded", { count: notes.length });
});

$("sort-notes").addEventListener("click", () => {
  newestFirst = !newestFirst;
  showNotes();
});

$("search-text").addEventListener("input", showResults);

showNotes();
render();

// muEval: the lab's server from `?server=` (else muevald's console on this machine); the library reads
// `?mueval=CODE` (a tester's invitation) by itself. Without a server the app works as before. The microphone
// (think-aloud) is asked for once a session took the page and selects it (a session selects every sensor by default).
// Optional, for the tests and benchmarks: `?dom=1` records the page itself (start's `dom`), `?mask=all|none` the text
// mask (else the library's default), `?pairing=CODE` a session's pairing code instead of an invitation.
const server = params.get("server") ?? "http://127.0.0.1:28080";
try {
  const muEval = await import(new URL("/capture.js", server));
  capture = await muEval.start({ server, appId: "webnotes", appVersion: "1.0", sensors: ["accelerometer", "frameTiming", "microphone"],
    dom: params.get("dom") === "1", mask: params.get("mask") ?? undefined, pairingCode: params.get("pairing") ?? undefined });
  globalThis.webnotesCapture = capture;  // for the browser tests and the benchmark: capture.status()
} catch (error) {
  console.warn(`muEval capture is off: ${error}`);
}
