// web-capture.js's wiring of the page recording (option `dom`): off by default; on, its modules are imported and it is
// one more source, whose records are events with the record's JSON in `dom`; a pushed route and the spool reach it.

import assert from "node:assert/strict";
import { test } from "node:test";
import { KEEP, SPOOL_REPORT_BELOW } from "../../CaptureLibrary/Web/capture/constants.js";
import { DomRecorder } from "../../CaptureLibrary/Web/capture/page/dom-recorder.js";
import { Capture, captureOptions } from "../../CaptureLibrary/Web/capture/web-capture.js";
import { install } from "./fake-dom.js";

const capture = (given) => new Capture(captureOptions(given, "https://lab.example.org"));

test("off unless start() was given dom: true; on, one more source", async () => {
  install();
  assert.equal(captureOptions({}, "https://lab.example.org").dom, false);
  assert.equal(capture({}).page, undefined);
  const c = capture({ dom: true });
  await c.addPageRecorder();
  assert.ok(c.page instanceof DomRecorder);
  assert.ok(c.sources.includes(c.page), "started and stopped with the other sources");
});

test("records become events with the record's JSON in `dom`; routes and the spool reach the recorder", async () => {
  install();
  const c = capture({ dom: true, mask: "all" });
  await c.addPageRecorder();
  const events = [];
  c.recorder = { record: (cls, fields, tier) => events.push([cls, fields, tier]) };
  c.page.emit("DOMSnapshot", '{"s":1,"n":0,"root":{"i":1}}', KEEP);
  assert.deepEqual(events, [["DOMSnapshot", { dom: '{"s":1,"n":0,"root":{"i":1}}' }, KEEP]]);
  assert.equal(c.page.serializer.mask, "all");
  c.spool = { dropped: 7, bytes: 100, maxBytes: 100 / SPOOL_REPORT_BELOW };
  assert.deepEqual(c.page.spool(), { dropped: 7, room: false });
  c.spool.bytes = 10;
  assert.deepEqual(c.page.spool(), { dropped: 7, room: true });
  const routes = [];
  c.page.navigated = (transition) => routes.push(transition);
  c.host().routed("push");
  assert.deepEqual(routes, ["push"]);
});

test("stop() waits for the page's snapshot being taken: it is recorded before the spool's flush and the goodbye", async () => {
  const env = install();
  const c = capture({ dom: true });
  await c.addPageRecorder();
  const log = [];
  c.recorder = { record: (cls) => log.push(cls), flush: async () => log.push("flush") };
  c.transport = { stop: async () => log.push("goodbye") };
  c.spool = { meta: async () => {} };
  c.sources = [c.page];
  c.sensors = {};
  c.page.start();
  const stopped = c.stop();
  await env.idle();
  await stopped;
  assert.deepEqual(log, ["DOMSnapshot", "flush", "goodbye"]);
});
