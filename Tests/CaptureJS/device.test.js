// device.js describeDevice: what the <hello> says of the device, read from real user agent strings of each kind.

import assert from "node:assert/strict";
import { test } from "node:test";
import { describeDevice } from "../../CaptureLibrary/Web/capture/device.js";

const PHONE = { width: 390, height: 844 };
const describe = (userAgent, pixelRatio = 3) => describeDevice(userAgent, PHONE, pixelRatio);

test("an iPhone's Safari", () => {
  assert.deepEqual(describe("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1"),
    { deviceName: "Safari on iPhone", model: "iPhone", systemVersion: "iOS 17.4.1", screenWidth: 390, screenHeight: 844, screenScale: 3 });
  // Chrome on iOS is WebKit too, but says CriOS.
  assert.equal(describe("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1").deviceName,
    "Chrome on iPhone");
});

test("an Android phone's Chrome names the model; Chrome's reduced user agent (K) does not", () => {
  const full = describe("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36");
  assert.equal(full.deviceName, "Chrome on Pixel 8");
  assert.equal(full.model, "Pixel 8");
  assert.equal(full.systemVersion, "Android 14");
  const reduced = describe("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36");
  assert.equal(reduced.model, "Android");
  assert.equal(reduced.deviceName, "Chrome on Android");
  assert.equal(reduced.systemVersion, "Android 10");
  const edge = describe("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36 EdgA/124.0.0.0");
  assert.equal(edge.deviceName, "Edge on Pixel 8", "Edge before Chrome, whose token it carries");
});

const FIREFOX_ANDROID = "Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0";

test("Firefox on Android: the browser and the system", () => {
  const d = describe(FIREFOX_ANDROID);
  assert.equal(d.systemVersion, "Android 14");
  assert.match(d.deviceName, /^Firefox on /);
});

test("Firefox on Android tells no model: the model is Android, as for Chrome's K", () => {
    const d = describe(FIREFOX_ANDROID);
    assert.equal(d.model, "Android");
    assert.equal(d.deviceName, "Firefox on Android");
  });

test("desktops: the model is Desktop, the system as the user agent names it", () => {
  const linux = describe("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", 1);
  assert.deepEqual(linux, { deviceName: "Chrome on Desktop", model: "Desktop", systemVersion: "Linux", screenWidth: 390, screenHeight: 844, screenScale: 1 });
  const mac = describe("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15", 2);
  assert.equal(mac.deviceName, "Safari on Desktop");
  assert.equal(mac.systemVersion, "Mac OS X 10.15.7");
  const windows = describe("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0", 1.25);
  assert.equal(windows.deviceName, "Firefox on Desktop");
  assert.equal(windows.systemVersion, "Windows NT 10.0");
  assert.equal(windows.screenScale, 1.25);
});

test("a WebView: Android's says wv, iOS's has no Safari token", () => {
  const android = describe("Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/UQ1A.240205.004; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.82 Mobile Safari/537.36");
  assert.equal(android.deviceName, "a WebView on Pixel 8", "the Build/ suffix left out");
  assert.equal(android.model, "Pixel 8");
  const ios = describe("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148");
  assert.equal(ios.deviceName, "a WebView on iPhone");
  assert.equal(ios.systemVersion, "iOS 17.4");
});

test("the screen scale is the pixel ratio, 1 when missing, within 0.1 to 100", () => {
  assert.equal(describeDevice("x", PHONE, undefined).screenScale, 1);
  assert.equal(describe("x", 0).screenScale, 1);
  assert.equal(describe("x", 0.01).screenScale, 0.1);
  assert.equal(describe("x", 1000).screenScale, 100);
  assert.equal(describe("x").deviceName, "a WebView on Desktop", "an unknown user agent");
});
