// muEval for the web: the capture library for web apps, PWAs and WebViews (docs/WEB-CAPTURE.md). Plain ES modules
// with relative imports and no dependencies: this entry and the folder `capture/` beside it (copy both to vendor it).
// It speaks docs/PROTOCOL.md over muevald's WebSocket `/capture` and sends the event shapes muevald's analysis reads
// (docs/REPORTS.md, "What the interpreters read"), those of the simulator. Nothing happens on import: everything
// starts with start().
//
//   import * as muEval from "https://lab.example.org:28080/capture.js";
//   const capture = await muEval.start({ appId: "org.example.notes", appVersion: "1.0" });

import { Capture, captureOptions } from "./capture/web-capture.js";

let current = null;

/**
 * Starts capturing this page. Options: server (muevald's console origin; default: where this module came from),
 * invitation (default: the page's ?mueval=CODE) or pairingCode, token, appId, appVersion, sensors
 * (["accelerometer", "frameTiming"] by default; add "microphone" for think-aloud), mask ("inputs", "all",
 * "none"), maxSpoolBytes (8 MiB), overlay (true), dom (false; the page itself, experimental). Resolves once the
 * spool is open; delivery goes on by itself.
 */
export async function start(options = {}) {
  if (current && !current.stopped) throw new Error("muEval capture is already started: stop() it first");
  const capture = new Capture(captureOptions(options, new URL(import.meta.url).origin));
  current = capture;
  capture.addEventListener("stopped", () => { if (current === capture) current = null; });
  try {
    await capture.open();
  } catch (error) {
    current = null;
    throw error;
  }
  return capture;
}

/** The running capture, if any. */
export const capture = () => current;
