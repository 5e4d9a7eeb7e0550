// A web app's use of capture.js as capture.d.ts declares it: `make test` type-checks this file (tsc --noEmit --strict),
// so that the declarations stay usable. Never run.
import * as muEval from "../../../CaptureLibrary/Web/capture.js";
import type { Capture, CaptureStatus, StartOptions } from "../../../CaptureLibrary/Web/capture.js";

export async function instrument(): Promise<CaptureStatus> {
  const options: StartOptions = { server: "https://lab.example.org:28080", appId: "org.example.notes", appVersion: "1.4",
    sensors: ["accelerometer", "frameTiming", "microphone"], mask: "inputs", maxSpoolBytes: 4 << 20, overlay: false, dom: true };
  const capture: Capture = await muEval.start(options);
  capture.addEventListener("welcome", (event) => console.log(event.detail.sessionId, event.detail.tasks.map((t) => t.name)));
  capture.addEventListener("problem", (event) => console.warn(event.detail.toUpperCase()));
  await capture.event("NoteAdded", { count: 3, tags: ["a", "b"], at: new Date(), raw: new Uint8Array([1]), nested: { ok: true } });
  await capture.beginTask("Add a note");
  await capture.endTask("Add a note");
  const running: Capture | null = muEval.capture();
  if (running !== capture) throw new Error("not the running capture");
  const status: CaptureStatus = capture.status();
  if (status.connected && status.spooled === 0 && status.lastError === null) await capture.giveUpTask("Find the note");
  return capture.stop({ timeout: 5000 });
}
