// sources/views.js stackAfter: the view stack as UIKit's navigation keeps it (pure: the stack is changed in place).

import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_VIEW_STACK } from "../../CaptureLibrary/Web/capture/constants.js";
import { stackAfter } from "../../CaptureLibrary/Web/capture/sources/views.js";

test("the first view is a launch, a new one a push", () => {
  const stack = [];
  assert.equal(stackAfter(stack, "/", null, "launch"), "launch");
  assert.deepEqual(stack, ["/"]);
  assert.equal(stackAfter(stack, "/notes", "/", "push"), "push");
  assert.equal(stackAfter(stack, "/notes/1", "/notes", "replace"), "push");
  assert.deepEqual(stack, ["/", "/notes", "/notes/1"]);
});

test("a name on the stack already is a pop back to it, whatever the route said", () => {
  const stack = ["/", "/notes", "/notes/1", "/notes/1/edit"];
  assert.equal(stackAfter(stack, "/notes", "/notes/1/edit", "push"), "pop");
  assert.deepEqual(stack, ["/", "/notes"]);
  assert.equal(stackAfter(stack, "/", "/notes", "pop"), "pop");
  assert.deepEqual(stack, ["/"]);
});

test("the browser's back to a view not on the stack is a pop that pushes it", () => {
  const stack = ["/b"];
  assert.equal(stackAfter(stack, "/a", "/b", "pop"), "pop");
  assert.deepEqual(stack, ["/b", "/a"]);
});

test("the stack keeps the newest MAX_VIEW_STACK names", () => {
  const stack = [];
  for (let i = 0; i < MAX_VIEW_STACK + 5; i++) stackAfter(stack, `/v${i}`, i ? `/v${i - 1}` : null, "push");
  assert.equal(stack.length, MAX_VIEW_STACK);
  assert.equal(stack[0], "/v5");
  assert.equal(stack.at(-1), `/v${MAX_VIEW_STACK + 4}`);
  const small = ["a", "b"];
  assert.equal(stackAfter(small, "c", "b", "push", 2), "push");
  assert.deepEqual(small, ["b", "c"]);
});
