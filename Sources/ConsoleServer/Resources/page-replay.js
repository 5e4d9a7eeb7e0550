// The replay page's page mode (docs/CONSOLE.md, "The page replayed"): a web session recorded with capture.js's
// `dom: true` is replayed as the page itself, built in a sandboxed frame where the wireframe canvas was, at the
// playhead, with the touches over it. Sessions without page records (MuEvalCapture, the simulator, imports, web
// sessions without `dom`) keep the canvas: nothing here is made for them.

import { api, showError } from "./common.js";
import { PageClass } from "./page-records.js";
import { PageTimeline } from "./page-timeline.js";
import { openPageView } from "./page-view.js";

/** Whether the replay index's head may know page records: its class list names them, or is not complete. */
export function mayHavePage(index) {
  return (index.classes ?? []).includes(PageClass.snapshot) || index.classesComplete === false;
}

/**
 * Opens the page at device time `at` in `container` (before `before`); resolves to {overlay, show(now)} when the
 * session has page records, else null (and nothing is left in the page). `horizon()`: the latest device time the
 * session has; `onUpdate(t)`: the page was drawn for t.
 */
export async function openPageReplay({ sessionID, container, before, at, horizon, onUpdate = () => {} }) {
  const opened = await openPageView(container, sessionID, { before, holdSeconds: 3 });
  if (!opened) return null;
  const { view, builder, assets } = opened;
  const timeline = new PageTimeline({
    fetchJSON: (path) => api(path, { quiet: true }),
    path: `/api/sessions/${encodeURIComponent(sessionID)}/page`,
    builder, assets, horizon,
    onUpdate: (t) => {
      view.mark(builder.applied, t, builder.frozen);
      onUpdate(t);
    },
    onError: (error) => showError(`Cannot load the page: ${error.message}`),
  });
  if (!(await timeline.start(at))) {
    view.remove();
    return null;
  }
  return { overlay: view.overlay, show: (now) => timeline.show(now) };
}
