// capture/wireframe.js: a view's wireframe is painted in idle slices, with the drawing commands (so the PNG) of the
// painting in one piece it replaced, and plist.js's encoding in steps gives encodeFields' text: the view's event is the
// same whatever the slicing.

import assert from "node:assert/strict";
import { test } from "node:test";
import { VIEW_SLICE_UNITS } from "../../CaptureLibrary/Web/capture/constants.js";
import { encodeFields, fieldsSteps } from "../../CaptureLibrary/Web/capture/plist.js";
import { wireframe } from "../../CaptureLibrary/Web/capture/wireframe.js";
import { install } from "./fake-dom.js";

/** An OffscreenCanvas whose 2D context writes down what it is told to draw. */
function recordingCanvas() {
  const commands = [];
  const round = (args) => args.map((n) => +n.toFixed(2)).join(" ");
  globalThis.OffscreenCanvas = class {
    constructor(width, height) { commands.push(`canvas ${width}x${height}`); }
    getContext() {
      return {
        set fillStyle(colour) { commands.push(`fill ${colour}`); },
        set strokeStyle(colour) { commands.push(`stroke ${colour}`); },
        fillRect: (...args) => commands.push(`fillRect ${round(args)}`),
        strokeRect: (...args) => commands.push(`strokeRect ${round(args)}`),
      };
    }
    async convertToBlob() { return { arrayBuffer: async () => new Uint8Array([137, 80, 78, 71]).buffer }; }
  };
  return commands;
}

const frame = (x, y, width, height) => ({ x, y, width, height });

function sampleTree() {
  const label = { className: "UILabel", frame: frame(10, 10, 120, 40), text: "Hello wide world of wires", fontSize: 14, subviews: [] };
  const dark = { className: "UILabel", frame: frame(10, 60, 80, 20), text: "On dark", fontSize: 12, subviews: [] };
  const button = { className: "UIButton", frame: frame(10, 90, 100, 30), title: "Buy now", fontSize: 16, subviews: [] };
  const field = { className: "UITextField", frame: frame(10, 130, 200, 30), placeholder: "Email", fontSize: 16, subviews: [] };
  const cell = { className: "UITableViewCell", frame: frame(0, 170, 300, 24), text: "Row", fontSize: 15, subviews: [] };
  const image = { className: "UIImageView", frame: frame(220, 10, 40, 40), subviews: [] };
  const toggle = { className: "UISwitch", frame: frame(220, 60, 40, 20), subviews: [] };
  const list = { className: "UITableView", frame: frame(0, 160, 300, 60), subviews: [cell] };
  const box = { className: "UIView", frame: frame(0, 0, 300, 120), subviews: [label, dark, button, image, toggle] };
  const tree = { className: "UIWindow", frame: frame(0, 0, 300, 240), subviews: [box, field, list] };
  return { tree, backgrounds: new Map([[tree, "rgb(250, 250, 250)"], [dark, "rgb(20, 20, 20)"], [box, "rgba(0, 0, 0, 0)"]]) };
}

test("the wireframe draws what the painting in one piece drew, in the same order", async () => {
  const env = install();
  const commands = recordingCanvas();
  const { tree, backgrounds } = sampleTree();
  const png = wireframe(tree, backgrounds);
  await env.idle();
  assert.deepEqual([...await png], [137, 80, 78, 71]);
  // Written down from wireframe.js before it was sliced (the painting in one piece).
  assert.deepEqual(commands, ["canvas 300x240", "fill rgb(250, 250, 250)", "fillRect 0 0 300 240", "fill rgba(0, 0, 0, 0)",
    "fillRect 0 0 300 120", "fill #222", "fillRect 12 16.7 35 8.4", "fillRect 54 16.7 28 8.4", "fillRect 89 16.7 35 8.4",
    "fillRect 12 34.9 14 8.4", "fillRect 33 34.9 35 8.4", "fill rgb(20, 20, 20)", "fillRect 10 60 80 20", "fill #fff",
    "fillRect 12 66.4 12 7.2", "fillRect 30 66.4 24 7.2", "fill #fff", "fillRect 10 90 100 30", "stroke #a0a0a0",
    "strokeRect 10.5 90.5 99 29", "fill #324f85", "fillRect 32 100.2 24 9.6", "fillRect 64 100.2 24 9.6", "fill #c8c8c8",
    "fillRect 220 10 40 40", "fill #3c8ce6", "fillRect 220 60 40 20", "fill #fff", "fillRect 10 130 200 30", "stroke #a0a0a0",
    "strokeRect 10.5 130.5 199 29", "fill #b2b2b2", "fillRect 18 140.2 40 9.6", "fill #e0e0e0", "fillRect 0 193 300 1", "fill #222",
    "fillRect 2 177.5 22.5 9"]);
});

test("a tree of many nodes is painted over idle slices of at most VIEW_SLICE_UNITS.paint nodes, none of it at once", async () => {
  const env = install();
  const commands = recordingCanvas();
  const count = VIEW_SLICE_UNITS.paint * 3;
  const labels = Array.from({ length: count }, (_, i) => ({ className: "UIImageView", frame: frame(0, i, 10, 1), subviews: [] }));
  const tree = { className: "UIWindow", frame: frame(0, 0, 10, count), subviews: labels };
  const painted = [];
  const png = wireframe(tree, new Map());
  assert.equal(commands.length, 3, "the canvas and its background only, before the first idle slice");
  await env.idle(50, () => painted.push(commands.filter((c) => c.startsWith("fillRect")).length - 1));
  await png;
  assert.equal(painted.at(-1), count);
  const perSlice = painted.map((n, i) => n - (painted[i - 1] ?? 0)).filter((n) => n > 0);
  assert.ok(perSlice.length >= 3 && perSlice.every((n) => n <= VIEW_SLICE_UNITS.paint), `${perSlice} nodes a slice`);
});

test("a view's event encoded in steps is encodeFields' text, a step for each dict and array", () => {
  const { tree } = sampleTree();
  const fields = { type: "viewDidAppear", view: "<Notes & more>", viewStack: ["a", "b"], uiState: tree, screenshot: new Uint8Array([1, 2]) };
  const steps = fieldsSteps(fields);
  let r, units = 0;
  while (!(r = steps.next()).done) units++;
  assert.equal(r.value, encodeFields(fields));
  assert.equal(units, 1 + 10 * 3, "the stack, and each node's dict, frame and subviews");
});
