// The engine check's app (Tests/Browser/engines_browser.py): capture.js imported from muevald (?server=) and started
// with the session's pairing code (?code=), without the overlay; what the engine offers and what input reached the
// page are kept in globalThis.enginePage for the script to report.
const params = new URLSearchParams(location.search);
const server = params.get("server");
const entries = self.PerformanceObserver?.supportedEntryTypes ?? [];
const page = globalThis.enginePage = {
  phase: "importing", error: null, seen: {}, lifts: 0, lastTouch: null,
  // The features whose absence makes the library take a fallback (docs/WEB-CAPTURE.md).
  features: {
    requestIdleCallback: "requestIdleCallback" in self, DeviceMotionEvent: "DeviceMotionEvent" in self,
    longAnimationFrame: entries.includes("long-animation-frame"), longtask: entries.includes("longtask"),
    OffscreenCanvas: "OffscreenCanvas" in self, ontouchstart: "ontouchstart" in window, maxTouchPoints: navigator.maxTouchPoints,
  },
};

// Which DOM events each input made (a pointer event by its pointerType): what tells a double count from its cause.
for (const type of ["touchstart", "touchend", "pointerdown", "pointerup", "mousedown", "click"]) {
  addEventListener(type, (e) => {
    const key = type + (e.pointerType ? ":" + e.pointerType : "") + (e.isTrusted ? "" : ":untrusted");
    page.seen[key] = (page.seen[key] ?? 0) + 1;
    if (type === "touchend" || type === "pointerup") page.lifts++;
    if (type.startsWith("touch")) page.lastTouch = performance.now();
  }, { capture: true, passive: true });
}

// The app's one route change: a pushState to /settings, the Settings view shown (its data-mueval-view).
document.getElementById("to-settings").addEventListener("click", () => {
  history.pushState({}, "", "/settings" + location.search);
  document.getElementById("home").hidden = true;
  document.getElementById("settings").hidden = false;
});

try {
  const muEval = await import(server + "/capture.js");
  page.phase = "starting";
  globalThis.engineCapture = await muEval.start({ server, pairingCode: params.get("code"), appId: "org.mueval.engines",
    appVersion: "1", overlay: false });
  page.phase = "started";
} catch (error) {
  page.phase = "failed";
  page.error = String(error?.stack || error);
}
