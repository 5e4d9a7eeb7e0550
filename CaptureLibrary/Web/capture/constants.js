// Every number the library decides by, named once (docs/WEB-CAPTURE.md says what each does to a session).

/** Spool tiers: KEEP is never dropped for room (task marks, views, taps, lifecycle, errors, app events); SAMPLE is
 * dropped first when the spool is full (sensor readings, moving touches, audio). */
export const KEEP = 0;
export const SAMPLE = 1;

/** Defaults of start()'s options. */
export const DEFAULTS = Object.freeze({ dom: false, mask: "inputs", maxSpoolBytes: 8 << 20, overlay: true, sensors: ["accelerometer", "frameTiming"] });
export const MASK_MODES = Object.freeze(["inputs", "all", "none"]);

/** Where the library keeps small values in localStorage, and the spool's database per server. */
export const STORAGE_PREFIX = "mueval:";
export const SPOOL_DATABASE_PREFIX = "mueval ";

/** Delivery (the state machine's limits, in milliseconds of the page's monotonic clock). */
export const DELIVERY = Object.freeze({
  /** Backoff between connection attempts: doubling from the first to the last, jitter over its second half. */
  reconnectFirstMs: 500,
  reconnectLastMs: 30000,
  /** Messages unacknowledged this long: the socket is dead (muevald acknowledges within a group commit). */
  ackTimeoutMs: 15000,
  /** Nothing heard this long while visible: the hello is sent again as a probe (muevald answers with a welcome). */
  probeAfterMs: 25000,
  /** A probe unanswered this long: the socket is dead. */
  probeTimeoutMs: 10000,
  /** A connection attempt that hangs this long is given up. */
  connectTimeoutMs: 15000,
  /** After a ranged <error> (the server's disk refused a group commit), the range is sent again after this. */
  rangeRetryMs: 5000,
  /** How often the heartbeat looks. */
  heartbeatMs: 5000,
  /** The socket's own buffer above which sending waits for it to drain. */
  maxBufferedBytes: 1 << 20,
  /** At most this many messages are handed to the socket at once (the rest when its buffer allows). */
  batchMessages: 512,
  /** How long sending waits before it looks at a full socket buffer again. */
  drainPollMs: 100,
});

/** Text messages: WebSocket frames of messages up to this many characters... */
export const FRAME_BATCH_CHARS = 65536;
/** ...and a single message cut into pieces of at most this many UTF-16 units (under muevald's 1 MiB frame limit in
 * UTF-8; muevald reads a message across frames). */
export const MAX_FRAME_CHARS = 262144;
/** Text handed to the socket per task at most (at least one text message): the rest in the next tasks. */
export const SEND_TASK_CHARS = 131072;

/** Messages recorded within this many milliseconds go to the spool in one transaction and one send. */
export const BATCH_MS = 100;
/** A dropped-samples report waits until the spool is below this share of its bound again. */
export const SPOOL_REPORT_BELOW = 0.75;
/** Bytes a spooled message costs beyond its text (its seq, tags and the store's keys), for the bound. */
export const SPOOL_ENTRY_OVERHEAD = 60;
/** IndexedDB adds of a visible page: at most this many characters of messages per task (at least one message). */
export const SPOOL_TASK_CHARS = 131072;

/** Gestures: a finger that moved less than this many CSS pixels tapped or pressed... */
export const TAP_SLOP_PX = 10;
/** ...and held this long, in seconds, it pressed long; a move over SWIPE_MIN_PX faster than this is a swipe. */
export const LONG_PRESS_S = 0.5;
export const SWIPE_MIN_PX = 30;
/** Two fingers whose distance changed by more than this share pinched. */
export const PINCH_MIN_CHANGE = 0.2;
/** A gesture's path keeps at most this many points (one per animation frame). */
export const MAX_PATH_POINTS = 64;
/** A mouse event this soon after a touch is the browser's compatibility event for that touch (Safari fires
 * them after touchend), not a mouse: ignored. */
export const COMPAT_MOUSE_MS = 1000;

/** Text entry is reported at a pause this long (ms). */
export const TYPING_PAUSE_MS = 1000;
/** A scroll is at rest after this long without a scroll event (ms). */
export const SCROLL_REST_MS = 150;
/** Views: DOM changes are looked at no more often than this (ms); the stack keeps this many names. */
export const VIEW_CHECK_MS = 250;
export const MAX_VIEW_STACK = 20;
/** The UI state tree has at most this many elements; its walk runs in idle slices of at most this long (ms). */
export const MAX_TREE_NODES = 1500;
export const IDLE_SLICE_MS = { min: 5, max: 12, fallback: 8 };
/** A view's work per idle slice at most, besides the time: elements of the UI state tree walked (a computed style and
 * a layout box each), nodes of its wireframe painted, and dicts and arrays of its event encoded (each a few µs). */
export const VIEW_SLICE_UNITS = Object.freeze({ walk: 100, paint: 200, encode: 1000 });
/** Where requestIdleCallback is missing (Safari), a timer of this long stands in; with it, at most this long a wait. */
export const IDLE_FALLBACK_MS = 1;
export const IDLE_TIMEOUT_MS = 300;

/** Page recording (capture/page/, issue 55): work is counted in units, one node or one CSS rule serialised (a few
 * microseconds each on a phone; about 30 µs at worst with the CPU throttled 4×). The snapshot's idle slices do at most
 * SLICE_UNITS (and stop earlier when the idle time is up), then its JSON is written in idle slices of at most
 * WRITE_UNITS objects and arrays (a few µs each at 4×); the changes of one animation frame at most FRAME_UNITS, and
 * a frame with more (a page replaced wholesale) is recorded as a new snapshot instead, in idle slices again. Snapshots
 * for wholesale changes come at most every SNAPSHOT_GAP_MS; at most MAX_SCROLLED elements' scroll positions are kept
 * for the next snapshot. */
export const PAGE = Object.freeze({ sliceUnits: 200, writeUnits: 1000, frameUnits: 500, snapshotGapMs: 2000, maxScrolled: 100 });

/** Frames are counted this many ms after a finger moves or the page scrolls, and after a view appears. */
export const RENDER_AFTER_INPUT_MS = 250;
export const RENDER_AFTER_VIEW_MS = 600;
/** A transition starts at the input before it if that input came at most this long before the route changed. */
export const INPUT_BEFORE_ROUTE_MS = 1000;

/** The same exception is recorded at most this many times, and at most this many different ones. */
export const MAX_SAME_ERROR = 10;
export const MAX_ERROR_KINDS = 100;
export const MAX_STACK_LINES = 30;

/** The accelerometer: standard gravity (m/s² per g); a reading every CALM_MS at rest, every event for FAST_MS
 * after the phone moved more than SHAKE_G from the last calm reading (at most one per FAST_MIN_MS). */
export const STANDARD_GRAVITY = 9.80665;
export const MOTION = Object.freeze({ calmMs: 2000, fastMs: 1500, fastMinMs: 15, shakeG: 0.5, calmTolerance: 0.15 });

/** Think-aloud PCM: 16 kHz mono, 16-bit (what the transcriber wants), posted about once a second. */
export const AUDIO_RATE = 16000;
/** The microphone's tracks are stopped this long after the last chunk was asked for (ms). */
export const AUDIO_FLUSH_MS = 200;

/** The overlay collapses this long after Begin (ms). */
export const OVERLAY_COLLAPSE_MS = 2500;

/** stop() waits this long for the spool to be acknowledged (ms), looking this often. */
export const STOP_TIMEOUT_MS = 10000;
export const STOP_POLL_MS = 50;
