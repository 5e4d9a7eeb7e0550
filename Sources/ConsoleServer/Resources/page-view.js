// The replayed page's place on the live and replay pages (docs/CONSOLE.md, "The page replayed"): an iframe of
// muevald's empty page frame (/sessions/ID/page-frame, its own CSP: no script, images and fonts only from the
// allowed origins), sandboxed with allow-same-origin only (so that this page can build into it through the DOM; no
// allow-scripts, forms, popups or top navigation), inert and without pointer events (the lab watches, it does not click
// the tester's links), sized to the tester's viewport in CSS pixels and scaled to the console's box, with the
// fingers drawn over it on a transparent canvas (screen.js's ScreenView, transparent).
//
// Test hooks: #page-view (the box), iframe #page-frame [data-testid=page-frame] (data-applied: the id of the last
// record applied, data-at: the device time shown, data-frozen: "true" after a lost record until the next snapshot),
// canvas #page-touches (data-touches as #screen's).

import { blobURL } from "./common.js";
import { AssetCache } from "./page-assets.js";
import { PageBuilder } from "./page-builder.js";
import { ScreenView } from "./screen.js";

const DEFAULT_VIEWPORT = { w: 390, h: 844 };   // until the first snapshot says

export class PageView {
  /** Adds the view to `container` before `before` (null: last). `holdSeconds`: as ScreenView's. */
  constructor(container, sessionID, { before = null, holdSeconds = Infinity } = {}) {
    const doc = container.ownerDocument;
    const make = (tag, attributes) => {
      const node = doc.createElement(tag);
      for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
      return node;
    };
    this.box = make("div", { id: "page-view", class: "page-view", "data-testid": "page-view" });
    this.stage = make("div", { class: "page-stage" });
    // The sandbox is set before the source, so that the frame's first document already has it.
    this.frame = make("iframe", {
      sandbox: "allow-same-origin", id: "page-frame", "data-testid": "page-frame", title: "The page as the tester saw it",
      inert: "", tabindex: "-1", scrolling: "no", referrerpolicy: "no-referrer",
    });
    this.canvas = make("canvas", { id: "page-touches", class: "page-touches", "data-testid": "page-touches" });
    this.stage.append(this.frame, this.canvas);
    this.box.append(this.stage);
    this.path = `/sessions/${encodeURIComponent(sessionID)}/page-frame`;
    this.ready = new Promise((resolve, reject) => {
      this.frame.addEventListener("load", () => {
        let frameDocument = null;
        try { frameDocument = this.frame.contentDocument; } catch { /* another origin: an error page */ }
        if (frameDocument && frameDocument.location?.pathname === this.path) resolve(frameDocument);
        else reject(new Error("the page frame did not load (is muevald older than the page replay?)"));
      }, { once: true });
    });
    this.frame.setAttribute("src", this.path);
    container.insertBefore(this.box, before);
    this.overlay = new ScreenView(this.canvas, sessionID, { holdSeconds, transparent: true });
    this.viewport = null;
    this.setViewport(DEFAULT_VIEWPORT);
    this.onResize = () => this.fit();
    doc.defaultView?.addEventListener("resize", this.onResize);
  }

  /** The tester's viewport (a record's {w, h, z, zx, zy}, CSS pixels): the frame gets that size, so that the page lays
   *  out as it did on the phone, and the touches canvas the same. */
  setViewport(viewport) {
    const w = Math.max(1, Math.round(viewport.w)), h = Math.max(1, Math.round(viewport.h));
    const resized = w !== this.viewport?.w || h !== this.viewport?.h;
    this.viewport = { w, h, z: viewport.z > 0 ? viewport.z : 1, zx: Number(viewport.zx) || 0, zy: Number(viewport.zy) || 0 };
    if (resized) {
      for (const node of [this.stage, this.frame, this.canvas]) {
        node.style.width = `${w}px`;
        node.style.height = `${h}px`;
      }
      this.overlay.setDevice({ screenWidth: w, screenHeight: h });
    }
    this.fit();
  }

  /** Scales the stage to the box's height (console.css sets it), zoomed in as the tester had pinched: the visual
   *  viewport's part of the page fills the box. One layout read of the console's own box, never of the frame. */
  fit() {
    const { w, h, z, zx, zy } = this.viewport;
    const scale = (this.box.clientHeight || h) / h;
    this.box.style.width = `${Math.round(w * scale)}px`;
    this.stage.style.transform = `scale(${scale * z}) translate(${-zx}px, ${-zy}px)`;
    this.scale = scale;
  }

  /** The test hooks after the page was drawn for device time `at`; a page kept as it was before a lost record says
   *  so (a dashed outline and its title). */
  mark(applied, at, frozen = false) {
    this.frame.setAttribute("data-applied", applied ? String(applied.id) : "");
    this.frame.setAttribute("data-at", Number.isFinite(at) ? at.toFixed(3) : "");
    this.frame.setAttribute("data-frozen", String(frozen));
    if (frozen === (this.box.getAttribute("data-frozen") === "true")) return;
    this.box.setAttribute("data-frozen", String(frozen));
    if (frozen) this.box.setAttribute("title", "Some changes were not recorded here: the page as it was before them, until the next snapshot");
    else this.box.removeAttribute("title");
  }

  remove() {
    this.box.remove();
    this.box.ownerDocument.defaultView?.removeEventListener("resize", this.onResize);
  }
}

/** A view in `container` with its builder (into the frame's document) and stylesheet cache, once the frame has
 *  loaded; null, and no view left behind, when it does not (the caller keeps its wireframe). */
export async function openPageView(container, sessionID, { before = null, holdSeconds = Infinity } = {}) {
  const view = new PageView(container, sessionID, { before, holdSeconds });
  let frameDocument;
  try {
    frameDocument = await view.ready;
  } catch (error) {
    view.remove();
    console.warn(error);
    return null;
  }
  // Stylesheets an answer did not carry (the live stream names them only): their bytes are the rules, UTF-8.
  const fetchText = async (sha) => {
    const response = await fetch(blobURL(sessionID, sha), { credentials: "same-origin" });
    if (!response.ok) throw new Error(`stylesheet ${sha}: ${response.status}`);
    return response.text();
  };
  const assets = new AssetCache({ fetchText });
  const builder = new PageBuilder(frameDocument, { css: (value) => assets.css(value) });
  builder.onViewport = (viewport) => view.setViewport(viewport);
  return { view, builder, assets };
}
