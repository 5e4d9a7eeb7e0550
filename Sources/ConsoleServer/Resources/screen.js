// Mobile Monitor: the device's screen on a <canvas> (live and replay pages).
//
// The canvas is the device's screen in points (DeviceRecord screenWidth × screenHeight) times
// PIXELS_PER_POINT; a screenshot (device pixels) is scaled onto all of it, and touches (points) are
// drawn over it: a fading dot per touch, a trail for each began…ended stroke and each gesture path,
// and a ring at the latest touch. Times are in one clock chosen by the caller: the live page uses
// its own arrival clock, the replay the playhead's device time.
//
// For tests, the canvas carries data-sha (the screenshot drawn last, "" for none) and
// data-touches (touch marks drawn last).
//
// Transparent (the page replay's overlay, page-view.js): touches and gestures only, drawn over the replayed page
// in its CSS pixels; no screenshot is loaded or drawn.

import { blobURL } from "./common.js";

const PIXELS_PER_POINT = 2;
const FADE_SECONDS = 1.2;      // a touch dot fades out over this long
const TRAIL_SECONDS = 1.6;     // a stroke's trail stays this long after its last point
const MARK = "230, 0, 122";    // touch colour (rgb), distinct from the wireframe screenshots
const GESTURE = "255, 140, 0"; // gesture path colour
const IMAGE_CACHE_LIMIT = 64;

export class ScreenView {
  /** canvas: the <canvas>; sessionID: for blob URLs; holdSeconds: how long the latest touch's ring stays;
   *  transparent: an overlay (touches only). */
  constructor(canvas, sessionID, { holdSeconds = Infinity, transparent = false } = {}) {
    this.canvas = canvas;
    this.context = canvas.getContext("2d");
    this.sessionID = sessionID;
    this.holdSeconds = holdSeconds;
    this.transparent = transparent;
    this.images = new Map();   // sha → HTMLImageElement (loaded or loading), least recently used first
    this.wantedSHA = null;
    this.touches = [];         // {t, x, y, phase}, ordered by t
    this.gestures = [];        // {t, path: [{x, y}], kind}, ordered by t
    this.now = 0;
    this.onImageLoaded = () => this.render(this.now);
    this.setDevice(null);
  }

  /** The device's screen size in points; a device without one is drawn as 320 × 480. */
  setDevice(device) {
    this.width = device?.screenWidth > 0 ? device.screenWidth : 320;
    this.height = device?.screenHeight > 0 ? device.screenHeight : 480;
    this.canvas.width = Math.round(this.width * PIXELS_PER_POINT);
    this.canvas.height = Math.round(this.height * PIXELS_PER_POINT);
    this.render(this.now);
  }

  /** Shows the screenshot with this sha256 (null: none) from the next render on; loads it if needed. */
  showScreenshot(sha) {
    if (this.transparent) return;
    this.wantedSHA = sha || null;
    if (sha) this.image(sha);
  }

  /** Starts loading a screenshot ahead of time (replay). */
  preload(sha) { if (sha && !this.transparent) this.image(sha); }

  image(sha) {
    let image = this.images.get(sha);
    if (image) {
      this.images.delete(sha);        // re-insert: most recently used
      this.images.set(sha, image);
      return image;
    }
    image = new Image();
    image.decoding = "async";
    image.addEventListener("load", () => { if (sha === this.wantedSHA) this.onImageLoaded(); });
    image.src = blobURL(this.sessionID, sha);
    this.images.set(sha, image);
    if (this.images.size > IMAGE_CACHE_LIMIT) this.images.delete(this.images.keys().next().value);
    return image;
  }

  /** Replaces all touches and gestures (replay: the ones around the playhead). */
  setTouches(touches, gestures = []) {
    this.touches = touches;
    this.gestures = gestures;
  }

  /** Adds one touch (live); keeps only the recent ones. */
  addTouch(touch) {
    this.touches.push(touch);
    if (this.touches.length > 400) this.touches.splice(0, this.touches.length - 300);
  }

  addGesture(gesture) {
    this.gestures.push(gesture);
    if (this.gestures.length > 50) this.gestures.splice(0, this.gestures.length - 40);
  }

  /** True while something is still fading at `now` (the live page keeps animating until then). */
  isAnimating(now) {
    const last = this.touches[this.touches.length - 1];
    const lastGesture = this.gestures[this.gestures.length - 1];
    return (last && now - last.t < TRAIL_SECONDS) || (lastGesture && now - lastGesture.t < TRAIL_SECONDS);
  }

  /** Draws the screen as it is at time `now`. */
  render(now) {
    this.now = now;
    const c = this.context;
    const { width, height } = this.canvas;
    c.setTransform(1, 0, 0, 1, 0, 0);
    const image = this.wantedSHA ? this.images.get(this.wantedSHA) : null;
    if (this.transparent) {
      c.clearRect(0, 0, width, height);
    } else if (image && image.complete && image.naturalWidth > 0) {
      c.drawImage(image, 0, 0, width, height);
      this.canvas.dataset.sha = this.wantedSHA;
    } else {
      c.fillStyle = "#eceff3";
      c.fillRect(0, 0, width, height);
      c.fillStyle = "#5b6570";
      c.font = `${14 * PIXELS_PER_POINT}px system-ui, sans-serif`;
      c.textAlign = "center";
      c.fillText(this.wantedSHA ? "Loading screenshot…" : "No screenshot yet", width / 2, height / 2);
      this.canvas.dataset.sha = "";
    }
    c.setTransform(PIXELS_PER_POINT, 0, 0, PIXELS_PER_POINT, 0, 0);
    let marks = this.drawGestures(now);
    marks += this.drawTouches(now);
    this.canvas.dataset.touches = String(marks);
  }

  drawGestures(now) {
    const c = this.context;
    let marks = 0;
    for (const gesture of this.gestures) {
      const age = now - gesture.t;
      if (age < 0 || age > TRAIL_SECONDS || !Array.isArray(gesture.path) || gesture.path.length < 2) continue;
      const alpha = 1 - age / TRAIL_SECONDS;
      c.strokeStyle = `rgba(${GESTURE}, ${alpha})`;
      c.lineWidth = 4;
      c.lineCap = "round";
      c.lineJoin = "round";
      c.setLineDash([8, 6]);
      c.beginPath();
      gesture.path.forEach((point, index) => index === 0 ? c.moveTo(point.x, point.y) : c.lineTo(point.x, point.y));
      c.stroke();
      c.setLineDash([]);
      const end = gesture.path[gesture.path.length - 1];
      c.fillStyle = `rgba(${GESTURE}, ${alpha})`;
      c.beginPath();
      c.arc(end.x, end.y, 6, 0, Math.PI * 2);
      c.fill();
      marks += 1;
    }
    return marks;
  }

  drawTouches(now) {
    const c = this.context;
    let marks = 0;
    let stroke = [];
    let latest = null;
    const flushStroke = () => {
      if (stroke.length >= 2) {
        const age = now - stroke[stroke.length - 1].t;
        if (age <= TRAIL_SECONDS) {
          c.strokeStyle = `rgba(${MARK}, ${0.75 * (1 - age / TRAIL_SECONDS)})`;
          c.lineWidth = 5;
          c.lineCap = "round";
          c.lineJoin = "round";
          c.beginPath();
          stroke.forEach((point, index) => index === 0 ? c.moveTo(point.x, point.y) : c.lineTo(point.x, point.y));
          c.stroke();
        }
      }
      stroke = [];
    };
    for (const touch of this.touches) {
      if (touch.t > now) break;
      if (touch.phase === "began") flushStroke();
      stroke.push(touch);
      latest = touch;
      const age = now - touch.t;
      if (age <= FADE_SECONDS) {
        const alpha = 1 - age / FADE_SECONDS;
        c.fillStyle = `rgba(${MARK}, ${0.85 * alpha})`;
        c.beginPath();
        c.arc(touch.x, touch.y, 9 + 8 * (1 - alpha), 0, Math.PI * 2);
        c.fill();
        marks += 1;
      }
      if (touch.phase === "ended" || touch.phase === "cancelled") flushStroke();
    }
    flushStroke();
    if (latest && now - latest.t <= this.holdSeconds) {
      c.strokeStyle = `rgb(${MARK})`;
      c.lineWidth = 3;
      c.beginPath();
      c.arc(latest.x, latest.y, 14, 0, Math.PI * 2);
      c.stroke();
      marks += 1;
    }
    return marks;
  }
}

/** The touch in a UserInputEvent payload ({x, y, phase}), or null. */
export function touchOf(payload) {
  if (!payload || payload.type !== "touch" || typeof payload.x !== "number" || typeof payload.y !== "number") return null;
  return { x: payload.x, y: payload.y, phase: String(payload.phase ?? "") };
}

/** The path of a UserInputEvent gesture payload ([{x, y}], at least two points), or null. */
export function gesturePathOf(payload) {
  if (!payload || payload.type !== "gesture" || !Array.isArray(payload.path)) return null;
  const path = payload.path
    .map((point) => Array.isArray(point) ? { x: point[0], y: point[1] } : point)
    .filter((point) => point && typeof point.x === "number" && typeof point.y === "number");
  return path.length >= 2 ? path : null;
}
