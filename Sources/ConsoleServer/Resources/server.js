// Server page (/server): the daemon's state as `muevalctl status` shows it, devices, storage health.
// Counters follow the "rates" messages of /api/updates; devices and facts refetch on "sessions".
//
// Test hooks: #storage-problem [data-testid=storage-problem] (shown only with a problem),
// #server-facts (dt/dd pairs; dd[data-key=zeroconf] etc.), #counters (dd[data-key=COUNTER]),
// #devices-body with tr[data-testid=device-row][data-device-id=ID][data-connected=true|false].

import {
  api, el, formatCount, formatTime, liveSocket, me, run, setChildren,
} from "./common.js";

const COUNTER_TITLES = {
  connectionsAccepted: "Connections accepted",
  connectionsRefused: "Connections refused",
  connectionsOpen: "Connections open",
  eventsReceived: "Events received",
  eventsStored: "Events stored",
  eventsDuplicate: "Duplicates",
  eventsFiltered: "Filtered (sensors)",
  eventsRejectedNoSession: "Rejected: no session",
  eventsFailedStorage: "Failed: storage",
  malformedMessages: "Malformed messages",
  repliesDropped: "Replies dropped",
  authenticationFailures: "Authentication failures",
  bytesReceived: "Bytes received",
};

function kv(list, pairs) {
  setChildren(list, pairs.flatMap(([key, title, value]) => [
    el("dt", {}, title),
    el("dd", { "data-key": key }, value ?? "—"),
  ]));
}

let counters = {};

/** Shows the counters; a "rates" message may carry only some of them. */
function renderCounters(update = {}) {
  counters = { ...counters, ...update };
  const keys = [...Object.keys(COUNTER_TITLES), ...Object.keys(counters).filter((key) => !(key in COUNTER_TITLES))];
  kv(document.getElementById("counters"), keys.map((key) => [key, COUNTER_TITLES[key] ?? key, formatCount(counters[key])]));
}

function renderStatus(status) {
  document.getElementById("server-version").textContent = `muevald ${status.version ?? ""} · pid ${status.pid ?? "?"}`;
  const recording = (status.sessions || []).filter((s) => s.state === "recording").length;
  kv(document.getElementById("server-facts"), [
    ["started", "Started", formatTime(status.started)],
    ["listen", "Devices connect to", [status.listen, status.listenTLS].filter(Boolean)
      .map((a) => `${a.host}:${a.port}${a.tls ? " (TLS)" : ""}`).join(", ") || "—"],
    ["zeroconf", "Zeroconf", status.zeroconf ?? "—"],
    ["socket", "Control socket", status.socket],
    ["dataDirectory", "Data directory", status.dataDirectory],
    ["unknownDevicePolicy", "Unknown devices", status.unknownDevicePolicy],
    ["sessions", "Sessions", `${(status.sessions || []).length} (${recording} recording)`],
    ["tails", "Tails", typeof status.tails === "object" ? JSON.stringify(status.tails) : status.tails],
  ]);
  renderCounters(status.counters);
  const problem = document.getElementById("storage-problem");
  if (status.storageProblem) {
    const details = Object.entries(status.storageProblem)
      .filter(([key]) => key !== "reason")
      .map(([key, value]) => `${key}: ${typeof value === "object" ? JSON.stringify(value) : value}`);
    setChildren(problem, "Storage problem: ", status.storageProblem.reason ?? "unknown",
      details.length ? el("div", { class: "muted" }, details.join(" · ")) : null);
    problem.classList.remove("hidden");
  } else {
    problem.classList.add("hidden");
    problem.replaceChildren();
  }
}

function renderDevices(devices) {
  const sorted = [...devices].sort((a, b) => Number(b.connected) - Number(a.connected) || (b.lastSeen ?? 0) - (a.lastSeen ?? 0));
  setChildren(document.getElementById("devices-body"), sorted.map((device) =>
    el("tr", { "data-testid": "device-row", dataset: { deviceId: device.id, connected: String(Boolean(device.connected)) } },
      el("td", {}, el("span", { class: `badge ${device.connected ? "ok" : "none"}` }, device.connected ? "connected" : "offline")),
      el("td", {}, device.name ? `${device.name} (${device.id})` : device.id),
      el("td", {}, device.model ?? "—"),
      el("td", {}, device.systemVersion ?? "—"),
      el("td", {}, [device.appId, device.appVersion].filter(Boolean).join(" ") || "—"),
      el("td", {}, device.screenWidth ? `${device.screenWidth} × ${device.screenHeight} pt @${device.screenScale ?? 1}x` : "—"),
      el("td", {}, device.address ?? "—"),
      el("td", {}, formatTime(device.lastSeen)))));
  document.getElementById("devices-empty").classList.toggle("hidden", devices.length > 0);
}

async function reload() {
  const [status, devices] = await Promise.all([api("/api/status"), api("/api/devices")]);
  renderStatus(status);
  renderDevices(devices);
}

run(me().then(reload));
liveSocket("/api/updates", {
  onOpen: (reconnected) => { if (reconnected) run(reload()); },
  onMessage: (message) => {
    if (message.type === "sessions") run(reload());
    else if (message.type === "rates" && message.counters) renderCounters(message.counters);
  },
});
