// A record's JSON text written in steps: a snapshot of 3,000 elements is about 300 KB of JSON, whose JSON.stringify in
// one piece took 40 ms on a phone throttled 4×; written object by object in idle slices, no slice is a long task.

/** JSON.stringify's text of plain data (objects, arrays, strings, numbers, booleans, null; undefined members left
 * out), as a generator that yields before each object and array it writes (a unit for inIdle's budget). */
export function* jsonText(value) {
  if (Array.isArray(value)) {
    yield;
    let text = "";
    for (let i = 0; i < value.length; i++) text += `${i ? "," : ""}${(yield* jsonText(value[i])) ?? "null"}`;
    return `[${text}]`;
  }
  if (value && typeof value === "object") {
    yield;
    let text = "";
    for (const key of Object.keys(value)) {
      const member = yield* jsonText(value[key]);
      if (member !== undefined) text += `${text ? "," : ""}${JSON.stringify(key)}:${member}`;
    }
    return `{${text}}`;
  }
  return JSON.stringify(value);
}
