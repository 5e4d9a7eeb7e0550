// The UI state tree drawn as a wireframe PNG, as the simulator draws its screens: the page's background colours,
// controls as boxes, text "greeked" (a bar per word) so that no text and no font is needed. One pixel per CSS pixel:
// a wireframe gains nothing from more, and each pixel costs the main thread to fill. Painted in idle slices, node by
// node: the same drawing commands in the same order as in one piece, so the same PNG.

import { VIEW_SLICE_UNITS } from "./constants.js";
import { inIdle } from "./idle.js";

const COLOURS = { background: "#dbe2ed", text: "#222", placeholder: "#b2b2b2", border: "#a0a0a0", button: "#324f85",
  separator: "#e0e0e0", image: "#c8c8c8", on: "#3c8ce6", white: "#fff" };
const TRANSPARENT = "rgba(0, 0, 0, 0)";
/** A glyph is about this share of the font size wide; a line this many times its size high. */
const GLYPH_WIDTH = 0.5, LINE_HEIGHT = 1.3;

/** A CSS colour (as computed styles give it) too dark for dark text on it. */
export const isDark = (colour) => {
  const [r, g, b, a = 1] = (colour || "").match(/[\d.]+/g)?.map(Number) || [255, 255, 255];
  return a > 0.5 && 0.3 * r + 0.59 * g + 0.11 * b < 140;
};

/** Words wrapped into lines of at most `perLine` characters. */
export function wrap(text, perLine) {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > perLine) { lines.push(line); line = ""; }
    line += (line ? " " : "") + word;
  }
  lines.push(line);
  return lines;
}

class Painter {
  constructor(context) { this.context = context; }

  fill(frame, colour) {
    this.context.fillStyle = colour;
    this.context.fillRect(frame.x, frame.y, frame.width, frame.height);
  }

  outline(frame, colour) {
    this.context.strokeStyle = colour;
    this.context.strokeRect(frame.x + 0.5, frame.y + 0.5, frame.width - 1, frame.height - 1);
  }

  /** A bar per word, lines wrapped to the frame, centred vertically (and horizontally if `centred`). */
  greek(text, frame, colour, size, centred) {
    if (!text) return;
    const glyph = Math.max(2, size * GLYPH_WIDTH), lineHeight = Math.min(size * LINE_HEIGHT, Math.max(frame.height, size));
    const lines = wrap(text, Math.max(1, Math.floor((frame.width - 4) / glyph)));
    const top = frame.y + Math.max(0, (frame.height - lines.length * lineHeight) / 2);
    this.context.fillStyle = colour;
    lines.forEach((line, i) => {
      const y = top + i * lineHeight + size * 0.35;
      if (y >= frame.y + frame.height) return;
      let x = centred ? frame.x + Math.max(2, (frame.width - line.length * glyph) / 2) : frame.x + 2;
      for (const word of line.split(" ")) {
        this.context.fillRect(x, y, Math.min(word.length * glyph, frame.x + frame.width - x), size * 0.6);
        x += (word.length + 1) * glyph;
      }
    });
  }

  /** Nodes and their subviews, in order, yielding before each (for idle slices). */
  *paint(nodes, backgrounds) {
    for (const n of nodes) {
      yield;
      this.node(n, backgrounds);
      yield* this.paint(n.subviews, backgrounds);
    }
  }

  node(n, backgrounds) {
    const frame = n.frame, size = n.fontSize || 16, background = backgrounds.get(n);
    if (background) this.fill(frame, background);
    switch (n.className) {
      case "UIButton": case "UITabBarButton":
        if (!background) { this.fill(frame, COLOURS.white); this.outline(frame, COLOURS.border); }
        this.greek(n.title, frame, isDark(background) ? COLOURS.white : COLOURS.button, size, true);
        break;
      case "UITextField": case "UISearchBar": case "UITextView":
        this.fill(frame, COLOURS.white);
        this.outline(frame, COLOURS.border);
        this.greek(n.placeholder, { ...frame, x: frame.x + 6, width: frame.width - 12 }, COLOURS.placeholder, size);
        break;
      case "UILabel": this.greek(n.text || n.title, frame, isDark(background) ? COLOURS.white : COLOURS.text, size); break;
      case "UIImageView": case "UIWebView": this.fill(frame, COLOURS.image); break;
      case "UISwitch": case "UISlider": this.fill(frame, COLOURS.on); break;
      case "UITableViewCell":
        this.fill({ ...frame, y: frame.y + frame.height - 1, height: 1 }, COLOURS.separator);
        this.greek(n.text, frame, COLOURS.text, size);
        break;
    }
  }
}

/** The tree (with `backgrounds`, node → colour) as PNG bytes, painted in idle slices. OffscreenCanvas encodes off the
 * main thread where there is one; else a canvas element. */
export async function wireframe(tree, backgrounds) {
  const { width, height } = tree.frame;
  const canvas = globalThis.OffscreenCanvas ? new OffscreenCanvas(width, height)
    : Object.assign(document.createElement("canvas"), { width, height });
  const painter = new Painter(canvas.getContext("2d"));
  const background = backgrounds.get(tree);
  painter.fill(tree.frame, background && background !== TRANSPARENT ? background : COLOURS.background);
  await inIdle(painter.paint(tree.subviews, backgrounds), undefined, VIEW_SLICE_UNITS.paint);
  const blob = canvas.convertToBlob ? await canvas.convertToBlob({ type: "image/png" }) : await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
  return new Uint8Array(await blob.arrayBuffer());
}
