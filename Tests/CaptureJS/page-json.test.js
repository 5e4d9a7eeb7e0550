// capture/page/json.js: a record's JSON written in steps is JSON.stringify's text, a step for each object and array.

import assert from "node:assert/strict";
import { test } from "node:test";
import { jsonText } from "../../CaptureLibrary/Web/capture/page/json.js";

const written = (value) => {
  const steps = jsonText(value);
  let r, units = 0;
  while (!(r = steps.next()).done) units++;
  return { text: r.value, units };
};

test("jsonText is JSON.stringify's text: members left out when undefined, null in arrays, strings escaped alike", () => {
  const values = [
    { s: 1, n: 0, doctype: undefined, root: { i: 1, c: [{ i: 2, t: "p", a: { title: 'a "quote" <b> & \\ \n\t' }, c: [{ i: 3, x: "😀 \ud800 \u2028" }] }] } },
    [1, undefined, null, () => {}, -0, NaN, 1e21, 0.5, "x", [], {}],
    { nested: [[[{ deep: [true, false] }]]], "key \"quoted\"": 2 },
    "text", 3, null, true,
  ];
  for (const value of values) assert.equal(written(value).text, JSON.stringify(value));
});

test("a step for each object and array, none for the values in them", () => {
  assert.equal(written({ a: [1, 2, { b: "c" }], d: "e" }).units, 3);
  assert.equal(written("plain").units, 0);
});
