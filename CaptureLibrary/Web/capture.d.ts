// TypeScript declarations of muEval's web capture library (docs/WEB-CAPTURE.md, "API"). The library itself is plain
// JavaScript modules; these describe its public API only.

/** What the library may record besides input and views. */
export type Sensor = "accelerometer" | "frameTiming" | "microphone";

/** How text in UI state trees and touch targets leaves the page (docs/WEB-CAPTURE.md, "Masking"). */
export type MaskMode = "inputs" | "all" | "none";

export interface StartOptions {
  /** muevald's console origin, `https://lab.example.org:28080`; default: the origin the module was loaded from. */
  server?: string;
  /** A recruited tester's invitation code; default: the page's `?mueval=CODE`, else the one kept from before. */
  invitation?: string;
  /** A session's six-digit pairing code (`muevalctl start --pairing-code`). */
  pairingCode?: string;
  /** The server's device token, only for a server that has one (it is public in a page). */
  token?: string;
  appId?: string;
  appVersion?: string;
  /** Default `["accelerometer", "frameTiming"]`; add `"microphone"` for think-aloud. */
  sensors?: Sensor[];
  /** Default `"inputs"`. */
  mask?: MaskMode;
  /** The spool's bound in bytes; default 8 MiB. */
  maxSpoolBytes?: number;
  /** The study overlay; default true. */
  overlay?: boolean;
  /** Experimental: record the page itself (a masked DOM snapshot and its changes, docs/WEB-CAPTURE.md "Page
   * recording"); default false, since muevald neither sanitises nor replays it yet. */
  dom?: boolean;
}

/** A task of the study, as the server's welcome names it. */
export interface Task {
  name: string;
  instructions?: string;
  order?: number;
}

export interface CaptureStatus {
  /** A socket is open and the server welcomed the device. */
  connected: boolean;
  sessionId: number | null;
  /** Messages not yet acknowledged, queued ones included. */
  spooled: number;
  spoolBytes: number;
  /** Samples dropped for room in the spool, in all. */
  dropped: number;
  sent: number;
  acked: number;
  refused: number;
  /** The last problem, one sentence; null after a welcome. */
  lastError: string | null;
  deviceId: string;
  tasks: Task[];
  questionnaire: string | null;
}

/** A field value the library can store: what a property list carries. */
export type FieldValue = string | number | boolean | Date | Uint8Array | FieldValue[] | { [key: string]: FieldValue | null | undefined };

export interface Capture extends EventTarget {
  /** A `CustomEvent` with `name` and the fields; resolves when it is in the spool. */
  event(name: string, fields?: { [key: string]: FieldValue | null | undefined }): Promise<void>;
  /** The tester's own task marks; a name the welcome does not list throws. */
  beginTask(name: string): Promise<void>;
  endTask(name: string): Promise<void>;
  giveUpTask(name: string): Promise<void>;
  /** Stops recording, waits up to `timeout` ms (10 s) for the spool to be acknowledged, says goodbye. */
  stop(options?: { timeout?: number }): Promise<CaptureStatus>;
  status(): CaptureStatus;
  /** `welcome`: the session or its tasks changed (detail: the status); `problem`: one sentence (detail: a string);
   * `stopped`: stop() finished (detail: the status). */
  addEventListener(type: "welcome" | "stopped", listener: (event: CustomEvent<CaptureStatus>) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: "problem", listener: (event: CustomEvent<string>) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
}

/** Starts capturing this page; resolves once the spool is open. A second start() before stop() throws. */
export function start(options?: StartOptions): Promise<Capture>;

/** The running capture, if any. */
export function capture(): Capture | null;
