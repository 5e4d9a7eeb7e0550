// plist.js: the one XML escaping, values to plist elements, and muevald's replies back to objects. What goes wrong
// here goes wrong on the wire (a control character muevald refuses, a reply read as nothing), so each case names
// the exact text.

import assert from "node:assert/strict";
import { test } from "node:test";
import { encodeFields, encodeValue, escapeXML, parseReplies } from "../../CaptureLibrary/Web/capture/plist.js";

test("escapeXML escapes the markup characters and keeps CR as a character reference", () => {
  assert.equal(escapeXML("a<b>&c"), "a&lt;b&gt;&amp;c");
  assert.equal(escapeXML("&amp;"), "&amp;amp;");
  // XML readers turn a literal CR into LF; the reference keeps it. Tab and LF are kept as they are.
  assert.equal(escapeXML("one\r\ntwo\tthree"), "one&#13;\ntwo\tthree");
  assert.equal(escapeXML(42), "42");
});

test("escapeXML replaces characters XML cannot carry by U+FFFD", () => {
  assert.equal(escapeXML("\u0000\u0008\u000b\u000c\u000e\u001f"), "\ufffd".repeat(6));
  assert.equal(escapeXML("x\ufffey\uffffz"), "x\ufffdy\ufffdz");
  // Lone surrogates (a string cut inside an emoji) are no characters at all.
  assert.equal(escapeXML("a\ud83d"), "a\ufffd");
  assert.equal(escapeXML("\ude00b"), "\ufffdb");
  assert.equal(escapeXML("\ude00\ud83d"), "\ufffd\ufffd", "a low surrogate before a high one is no pair");
});

test("escapeXML keeps a valid surrogate pair and every other character", () => {
  assert.equal(escapeXML("note 😀 é ü 日本"), "note 😀 é ü 日本");
  assert.equal(escapeXML("😀😀"), "😀😀");
});

test("encodeValue: whole numbers are integers, others reals, with nan and inf spelled as muevald reads them", () => {
  assert.equal(encodeValue(3), "<integer>3</integer>");
  assert.equal(encodeValue(-7), "<integer>-7</integer>");
  assert.equal(encodeValue(0), "<integer>0</integer>");
  assert.equal(encodeValue(1732800000000000), "<integer>1732800000000000</integer>", "a seq in microseconds is an integer");
  assert.equal(encodeValue(2.5), "<real>2.5</real>");
  assert.equal(encodeValue(-0.125), "<real>-0.125</real>");
  assert.equal(encodeValue(2 ** 53), "<real>9007199254740992</real>", "beyond a safe integer: a real");
  assert.equal(encodeValue(NaN), "<real>nan</real>");
  assert.equal(encodeValue(Infinity), "<real>inf</real>");
  assert.equal(encodeValue(-Infinity), "<real>-inf</real>");
});

test("encodeValue: booleans, strings, bytes, dates", () => {
  assert.equal(encodeValue(true), "<true/>");
  assert.equal(encodeValue(false), "<false/>");
  assert.equal(encodeValue("<x> & y"), "<string>&lt;x&gt; &amp; y</string>");
  assert.equal(encodeValue(""), "<string></string>");
  assert.equal(encodeValue(new Uint8Array([0, 1, 2, 250, 255])), "<data>AAEC+v8=</data>");
  assert.equal(encodeValue(new Uint8Array(0)), "<data></data>");
  assert.equal(encodeValue(new Date(Date.UTC(2011, 1, 19, 22, 43, 6, 500))), "<date>2011-02-19T22:43:06.500Z</date>");
});

test("encodeValue: bytes beyond one slice of String.fromCharCode are encoded whole", () => {
  const bytes = new Uint8Array(0x8000 * 2 + 7).map((_, i) => (i * 31 + 7) & 0xff);
  assert.equal(encodeValue(bytes), `<data>${Buffer.from(bytes).toString("base64")}</data>`);
});

test("encodeValue: arrays and dicts nest, an empty array is <array/>", () => {
  assert.equal(encodeValue([]), "<array/>");
  assert.equal(encodeValue([1, [2.5, "a"], { b: true }, []]),
    "<array><integer>1</integer><array><real>2.5</real><string>a</string></array><dict><key>b</key><true/></dict><array/></array>");
  assert.equal(encodeValue({ frame: { x: 1, y: 2 } }),
    "<dict><key>frame</key><dict><key>x</key><integer>1</integer><key>y</key><integer>2</integer></dict></dict>");
});

test("encodeFields leaves out null, undefined and function fields, keeps false, 0 and empty strings, escapes keys", () => {
  const text = encodeFields({ a: null, b: undefined, c: () => 1, d: 0, e: "", f: false, "g&h": 1 });
  assert.equal(text, "<key>d</key><integer>0</integer><key>e</key><string></string><key>f</key><false/><key>g&amp;h</key><integer>1</integer>");
  assert.equal(encodeFields({}), "");
});

test("parseReplies reads an ack in muevald's exact form", () => {
  assert.deepEqual(parseReplies("<ack><key>seq</key><integer>41</integer></ack>\n"), [{ type: "ack", seq: 41 }]);
  assert.deepEqual(parseReplies("<ack><key>seq</key><integer>1732800000000123</integer></ack>\n"), [{ type: "ack", seq: 1732800000000123 }]);
});

test("parseReplies reads an ack written with whitespace between its elements", () => {
  assert.deepEqual(parseReplies("<ack>\n  <key>seq</key>\n  <integer> 42 </integer>\n</ack>\n"), [{ type: "ack", seq: 42 }]);
});

test("parseReplies reads a welcome with its session, sensors and tasks, entities resolved", () => {
  const frame = `<welcome><key>session</key><string>7</string><key>sensors</key><array><string>UserInputEvent</string><string>accelerometer</string></array>
    <key>tasks</key><array>
      <dict><key>name</key><string>Add a note &amp; save</string><key>instructions</key><string>Write &quot;caf&#233;&quot; &lt;here&gt; &#x1F600;</string>
            <key>timeLimit</key><real>120.0</real><key>order</key><integer>1</integer></dict>
      <dict><key>name</key><string>Find the note</string><key>order</key><integer>2</integer></dict>
    </array>
    <key>questionnaire</key><string>https://lab.example.org:28080/i/2345abcdef</string></welcome>\n`;
  assert.deepEqual(parseReplies(frame), [{
    type: "welcome", session: "7", sensors: ["UserInputEvent", "accelerometer"],
    tasks: [
      { name: "Add a note & save", instructions: 'Write "café" <here> 😀', timeLimit: 120, order: 1 },
      { name: "Find the note", order: 2 },
    ],
    questionnaire: "https://lab.example.org:28080/i/2345abcdef",
  }]);
});

test("parseReplies reads an empty sensors array and an empty dict", () => {
  assert.deepEqual(parseReplies("<welcome><key>session</key><string>3</string><key>sensors</key><array/><key>x</key><dict/></welcome>"),
    [{ type: "welcome", session: "3", sensors: [], x: {} }]);
});

test("parseReplies reads an error with its reason and seq, and a ranged error with fromSeq", () => {
  assert.deepEqual(parseReplies("<error><key>reason</key><string>missing \"class\": every event needs a class</string><key>seq</key><integer>42</integer></error>\n"),
    [{ type: "error", reason: 'missing "class": every event needs a class', seq: 42 }]);
  assert.deepEqual(parseReplies("<error><key>reason</key><string>12 events not stored: the server's disk is full</string><key>fromSeq</key><integer>31</integer><key>seq</key><integer>42</integer></error>\n"),
    [{ type: "error", reason: "12 events not stored: the server's disk is full", fromSeq: 31, seq: 42 }]);
  assert.deepEqual(parseReplies("<error><key>reason</key><string>unknown invitation</string></error>"),
    [{ type: "error", reason: "unknown invitation" }]);
});

test("parseReplies reads several messages of one frame in order", () => {
  const frame = "<welcome><key>session</key><string>3</string><key>sensors</key><array><string>UserInputEvent</string></array></welcome>\n" +
    "<ack><key>seq</key><integer>41</integer></ack>\n" +
    "<error><key>reason</key><string>bad</string><key>seq</key><integer>42</integer></error>\n" +
    "<ack><key>seq</key><integer>43</integer></ack>\n";
  assert.deepEqual(parseReplies(frame), [
    { type: "welcome", session: "3", sensors: ["UserInputEvent"] },
    { type: "ack", seq: 41 },
    { type: "error", reason: "bad", seq: 42 },
    { type: "ack", seq: 43 },
  ]);
});

test("parseReplies skips a malformed message and reads the others", () => {
  const frame = "<ack><key>seq</key><integer>1</integer></ack>" +
    "<welcome><key>session</key><string>3</welcome>" +                   // a string never closed
    "<error><key>reason</key></error>" +                                  // a key without its value
    "<welcome><string>no key</string></welcome>" +                        // a value without its key
    "<error><key>seq</key><bogus>1</bogus></error>" +                     // no plist value
    "<ack><key>seq</key><integer>2</integer></ack>";
  assert.deepEqual(parseReplies(frame), [{ type: "ack", seq: 1 }, { type: "ack", seq: 2 }]);
});

test("parseReplies reads empty-element messages and nothing from text that holds none", () => {
  assert.deepEqual(parseReplies("<ack/>\n<welcome/>"), [{ type: "ack" }, { type: "welcome" }]);
  assert.deepEqual(parseReplies(""), []);
  assert.deepEqual(parseReplies("hello <goodbye/> <acknowledge/>"), []);
});

test("parseReplies reads nan and inf back as encodeValue writes them", () => {
  const [m] = parseReplies(`<welcome><key>a</key>${encodeValue(NaN)}<key>b</key>${encodeValue(Infinity)}<key>c</key>${encodeValue(-Infinity)}</welcome>`);
  assert.ok(Number.isNaN(m.a));
  assert.equal(m.b, Infinity);
  assert.equal(m.c, -Infinity);
});

test("a round trip: encodeFields in a <welcome>, parseReplies gives the same object back", () => {
  const fields = {
    session: "7", text: "a < b & c > d \"q\" 'a' é 😀\r\n\tend", empty: "", count: 3, negative: -12, big: 1732800000000000,
    ratio: 0.25, tiny: 1e-7, yes: true, no: false, list: [1, "two", [true, 2.5]], none: [],
    nested: { a: { b: "x<y", c: [{ d: 1 }] } }, keyed: { "odd & <key>": "v" },
  };
  assert.deepEqual(parseReplies(`<welcome>${encodeFields(fields)}</welcome>\n`), [{ type: "welcome", ...fields }]);
});
