#!/usr/bin/python3
"""Replay of a session in headless Chromium: navigationStart to the page's first frame, and page memory.

muevalbench runs it after recording a one-hour session (docs/BENCHMARKS.md):
    python3 Benchmarks/replay_first_frame.py --link LOGIN_URL --session ID [--timeout 30] [--mark-timeout 10]
Debian's chromium and chromedriver through python3-selenium; nothing is downloaded. Prints one JSON
line: {"firstFrameMs", "measuredBy", "usedJSHeapSize", "detail"}, or {"skipped": why} when the
browser or Selenium is missing (said loudly on stderr too), or {"error": why}.

The replay page calls performance.mark('replay-first-frame') once the first screenshot is drawn and
playback runs; the mark's startTime is milliseconds since navigationStart. A page without the mark
gets a stand-in, labelled as such: after the page's load event this script fetches the replay index
and the first screenshot from the page itself, decodes and draws it on a canvas, and reports
performance.now() then (the least any replay page has to do before its first frame).
"""
import argparse
import json
import os
import sys
import time
import urllib.parse

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

STAND_IN = """
const session = arguments[0], done = arguments[arguments.length - 1];
(async () => {
  const started = performance.now();
  const reply = await fetch(`/api/sessions/${session}/replay`);
  const text = await reply.text();
  const index = JSON.parse(text);
  const indexed = performance.now();
  const shot = index.screenshots && index.screenshots[0];
  if (!shot) { done({error: `the replay index has no screenshot (status ${reply.status})`}); return; }
  const blob = await (await fetch(`/api/sessions/${session}/blobs/${shot.sha}`)).blob();
  const bitmap = await createImageBitmap(blob);
  const canvas = document.createElement('canvas');
  canvas.width = bitmap.width; canvas.height = bitmap.height;
  document.body.appendChild(canvas);
  canvas.getContext('2d').drawImage(bitmap, 0, 0);
  await new Promise(requestAnimationFrame);
  done({frame: performance.now(), started, indexed, indexBytes: text.length,
        events: index.events ? index.events.id.length : 0, screenshots: index.screenshots.length});
})().catch(error => done({error: String(error)}));
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--link", required=True, help="a login link from `muevalctl console --json` (url)")
    parser.add_argument("--session", required=True)
    parser.add_argument("--timeout", type=float, default=30, help="seconds for the page load and the stand-in")
    parser.add_argument("--mark-timeout", type=float, default=10, help="seconds after the load event to wait for the mark")
    arguments = parser.parse_args()

    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not os.access(path, os.X_OK)]
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing.append("python3-selenium")
    if missing:
        why = "missing " + ", ".join(missing) + " (apt-get install chromium chromium-driver python3-selenium)"
        print(f"replay_first_frame: SKIPPED: {why}", file=sys.stderr)
        print(json.dumps({"skipped": why}))
        return

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                 "--enable-precise-memory-info", "--no-first-run", "--disable-extensions"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        driver.set_page_load_timeout(arguments.timeout)
        driver.set_script_timeout(arguments.timeout)
        # The link sets the login cookie and redirects to the sessions page.
        driver.get(arguments.link)
        link = urllib.parse.urlsplit(arguments.link)
        driver.get(f"{link.scheme}://{link.netloc}/sessions/{arguments.session}/replay?t=0&play=1")
        # get() returned after the load event; a page with the mark sets it within the timeout.
        mark = None
        deadline = time.monotonic() + arguments.mark_timeout
        while mark is None and time.monotonic() < deadline:
            mark = driver.execute_script(
                "const m = performance.getEntriesByName('replay-first-frame'); return m.length ? m[0].startTime : null;")
            time.sleep(0.01)
        load = driver.execute_script("return performance.timing.loadEventEnd - performance.timing.navigationStart;")
        if mark is not None:
            result = {"firstFrameMs": mark, "measuredBy": "performance.mark('replay-first-frame')",
                      "detail": f"load event at {load} ms"}
        else:
            stand_in = driver.execute_async_script(STAND_IN, arguments.session)
            if "error" in stand_in:
                print(json.dumps({"error": "stand-in failed: " + stand_in["error"]}))
                return
            # As if the fetches had started at the load event (they started after the wait for the mark).
            result = {"firstFrameMs": load + stand_in["frame"] - stand_in["started"],
                      "measuredBy": "stand-in (the replay page has no replay-first-frame mark)",
                      "detail": (f"page load {load} ms, then replay index {stand_in['indexed'] - stand_in['started']:.0f} ms "
                                 f"({stand_in['indexBytes'] / 1e6:.1f} MB, {stand_in['events']} events, "
                                 f"{stand_in['screenshots']} screenshots), first screenshot fetched, decoded and drawn "
                                 f"{stand_in['frame'] - stand_in['indexed']:.0f} ms")}
        result["usedJSHeapSize"] = driver.execute_script("return performance.memory ? performance.memory.usedJSHeapSize : 0;")
        print(json.dumps(result))
    except Exception as error:  # a failed measurement is a line in the report, not a crash of make bench
        print(json.dumps({"error": f"{type(error).__name__}: {error}".splitlines()[0]}))
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
