// Think-aloud on the replay page (docs/CONSOLE.md, "Think-aloud on the replay"): the voice and the face video kept
// where the playhead is (media time = device time - the stream's start; data-offset on each element is that start
// minus t0), the transcript segment at the playhead as the caption (#caption, data-exclamation), and the
// transcription's progress (#transcription) until it is done. Moved out of replay.js, which plays the events.

export class ReplayMedia {
  constructor() {
    this.streams = null;   // { voice: {element, start}, face: {element, start}, transcript: [] } once loaded
  }

  /** Attaches the session's streams (`overview`: GET /api/sessions/ID/media) once t0 is known; `onReady()` when one
   *  of them knows its duration. */
  load(overview, t0, onReady) {
    if (!overview.streams.length) return;
    const pick = (kind) => overview.streams.find((s) => s.stream.kind === kind);
    const attach = (entry, id) => {
      if (!entry) return null;
      const element = document.getElementById(id);
      element.src = entry.url;
      element.dataset.offset = String(entry.stream.start - t0);
      element.classList.remove("hidden");
      return { element, start: entry.stream.start };
    };
    this.streams = { voice: attach(pick("audio"), "voice"), face: attach(pick("video"), "face"), transcript: overview.transcript };
    const unfinished = overview.transcription.filter((t) => t.state !== "done");
    document.getElementById("transcription").textContent = unfinished.map((t) =>
      t.state === "failed" ? `Transcription of ${t.stream} failed: ${t.error ?? ""}`
        : `Transcription of ${t.stream}: ${t.state} ${Math.round(t.progress * 100)} %`).join(" · ");
    document.getElementById("media").classList.remove("hidden");
    for (const stream of [this.streams.voice, this.streams.face]) stream?.element.addEventListener("loadedmetadata", onReady);
  }

  /** Keeps `<audio>`/`<video>` at device time `now`: seeks when they drifted more than a quarter second (or `force`). */
  sync(now, { playing, rate, force = false }) {
    const media = this.streams;
    if (!media) return;
    for (const stream of [media.voice, media.face]) {
      if (!stream) continue;
      const wanted = now - stream.start;
      const element = stream.element;
      const inside = wanted >= 0 && (!Number.isFinite(element.duration) || wanted <= element.duration);
      if (!inside) {
        if (!element.paused) element.pause();
        continue;
      }
      if (force || Math.abs(element.currentTime - wanted) > 0.25) element.currentTime = wanted;
      element.playbackRate = rate;
      if (playing && element.paused) element.play().catch(() => {});
      if (!playing && !element.paused) element.pause();
    }
    const caption = document.getElementById("caption");
    const segment = media.transcript.findLast((s) => s.start <= now && now <= s.end + 1.5);
    caption.textContent = segment ? `“${segment.text}”` : "";
    caption.dataset.exclamation = segment?.exclamation ?? "";
    caption.classList.toggle("exclamation", Boolean(segment?.exclamation));
  }
}
