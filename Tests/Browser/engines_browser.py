#!/usr/bin/python3
"""muEval for the web (CaptureLibrary/Web/capture.js) in one of the three engines phones use (Tests/Browser/engines.py:
chromium, firefox, webkitgtk) against a real muevald, with a small page of its own (engines-page/, served from an
origin of its own). Run by Tests/IntegrationTests/EngineBrowserTests.swift, which reads the session file afterwards:

  engines_browser.py missing ENGINE
      READY, or MISSING and why the engine cannot run here (its binaries, Selenium): the test's loud skip.
  engines_browser.py run ENGINE PAGE_URL CONSOLE CODE MUEVALD_PID
      PAGE_URL: engines-page/index.html on its origin; CONSOLE: muevald's console (http://…), where capture.js and
      /capture are; CODE: the session's pairing code; MUEVALD_PID: stopped (SIGSTOP) and continued for the silence.
      (a) the module imports from muevald and start() resolves, connected; (b) taps with the engine's own input
      (Chromium: trusted DevTools touches; Firefox: W3C touch actions; WebKitGTK: mouse clicks, and TouchEvents the
      page makes), a two-finger pinch; (c) a route change (pushState) to the Settings view; (d) muevald silent
      (SIGSTOP) while marks (capture.event) and taps are recorded, until the library's heartbeat gives the socket up,
      then continued: everything spooled is acknowledged, sent twice on the way; (e) what the engine lacks, so which
      fallbacks of the library ran, and the page's script errors (none expected).
      RESULT {"taps": {element id: taps}, "pinches", "marks", "features", "seen", "sentInSilence", "spooledInSilence",
      "skipped": [why]}

What is skipped for an engine is printed (SKIPPED …) and returned; nothing is left out silently. Exits 1 on a failure.
"""

import json
import os
import signal
import sys
import time

MARKS = 5        # custom events recorded while muevald is silent, counted once each by the Swift test
QUIET_TAPS = 2   # taps recorded then too
TAPS = 3         # taps on #tap-target with the engine's own input
PAGE_TAPS = 2    # taps on #touch-target with TouchEvents the page makes (where the engine has no trusted touch)

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL " + message, flush=True)


class Run:
    """One engine's run: its driver, its fingers, what was done (the RESULT) and whether muevald is stopped."""

    def __init__(self, engine, pid):
        import engines
        self.engines = engines
        self.engine = engine
        self.notes = engines.ENGINES[engine]
        self.pid = pid
        self.stopped = False
        self.result = {"engine": engine, "taps": {}, "pinches": 0, "marks": 0, "skipped": []}
        print(f"ENGINE {engine}: {self.notes.notes}", flush=True)
        self.driver = engines.make_driver(engine)
        self.fingers = engines.Fingers(engine, self.driver)

    def script(self, source, *arguments):
        return self.driver.execute_script(source, *arguments)

    def status(self):
        return self.script("return globalThis.engineCapture?.status() ?? null")

    def wait(self, what, condition, timeout=30):
        try:
            return self.engines.wait_for(what, condition, timeout)
        except TimeoutError as error:
            raise TimeoutError(f"{error}; library status: {self.status()}") from None

    def drained(self):
        """Connected, and everything recorded acknowledged: the spool is empty."""
        state = self.status()
        return state if state and state["connected"] and state["spooled"] == 0 else None

    def centre(self, element_id):
        box = self.script("const r = document.getElementById(arguments[0]).getBoundingClientRect();"
                          "return r.width ? [r.x + r.width / 2, r.y + r.height / 2] : null", element_id)
        if not box:
            raise RuntimeError(f"#{element_id} is not on screen")
        return box

    def lifting(self, act):
        """Does `act`, then waits until the page has seen a finger or button lift (its count of touchend/pointerup)."""
        before = self.script("return enginePage.lifts")
        act()
        self.wait("the input to reach the page", lambda: self.script("return enginePage.lifts") > before)

    def tap(self, element_id, made_by_page=False):
        if not made_by_page and not self.notes.touch:
            # A mouse stands in for a finger here (WebKitGTK). Mouse input within a second of a touch is what engines
            # fire for the touch (compatibility events), and the library takes it so: no click comes that soon after
            # the page's own TouchEvents, as none would from a tester switching from the screen to a mouse.
            self.wait("a mouse click 1.5 s after the last touch",
                      lambda: self.script("return enginePage.lastTouch === null || performance.now() - enginePage.lastTouch > 1500"))
        x, y = self.centre(element_id)
        self.lifting(lambda: (self.fingers.page_tap if made_by_page else self.fingers.tap)(x, y))
        self.result["taps"][element_id] = self.result["taps"].get(element_id, 0) + 1

    def skip(self, text):
        self.result["skipped"].append(text)
        print("SKIPPED " + text, flush=True)

    def start(self, page_url, console, code):
        """(a) The module from muevald, started with the session's pairing code, connected."""
        self.driver.get(f"{page_url}?server={console}&code={code}")
        phase = self.wait("start() to resolve or throw",
                          # Optional chaining: WebDriver may return from get() before the module defines enginePage (WebKitGTK, loaded).
                          lambda: self.script("return ['started', 'failed'].includes(globalThis.enginePage?.phase) && enginePage.phase"))
        if phase != "started":
            raise RuntimeError(f"start() threw: {self.script('return enginePage.error')}")
        state = self.wait("the capture to connect", lambda: (s := self.status()) and s["connected"] and s, timeout=60)
        self.result.update(sessionId=state["sessionId"], deviceId=state["deviceId"], features=self.script("return enginePage.features"))

    def touches(self):
        """(b) Taps, each one finger (or one button), and a pinch with two."""
        for _ in range(TAPS):
            self.tap("tap-target")
        if self.notes.touch:
            self.skip(f"page-made TouchEvents: {self.engine} has trusted touches ({self.notes.touch}), which the taps and the pinch use")
        else:
            for _ in range(PAGE_TAPS):
                self.tap("touch-target", made_by_page=True)
            self.skip(f"trusted touches: {self.engine}'s WebDriver turns W3C touch actions into mouse input; its taps are mouse "
                      "clicks and TouchEvents the page makes, its pinch page-made")
        self.lifting(lambda: self.fingers.pinch(*self.centre("pad")))
        self.result["pinches"] = 1

    def view(self):
        """(c) A route change by a tap on the app's button (its click: pushState, the Settings view shown)."""
        self.tap("to-settings")
        self.wait("the Settings route", lambda: self.script("return location.pathname") == "/settings")

    def silence(self):
        """(d) muevald silent (SIGSTOP): the socket stays open and says nothing. Marks and taps are spooled and sent
        into it until the library's heartbeat (15 s without an ack) gives the socket up; then muevald goes on (SIGCONT),
        reads what the old socket carried, and the new socket sends everything again: each must be stored once."""
        sent = self.wait("everything acknowledged before the silence", self.drained, timeout=60)["sent"]
        os.kill(self.pid, signal.SIGSTOP)
        self.stopped = True
        for number in range(1, MARKS + 1):
            self.script("engineCapture.event('Mark', {n: arguments[0], engine: arguments[1]})", number, self.engine)
            if number <= QUIET_TAPS:
                self.tap("quiet-target")
        self.result["marks"] = MARKS
        self.wait("the marks sent into the silent socket", lambda: self.status()["sent"] >= sent + MARKS)
        self.wait("the heartbeat to give the silent socket up", lambda: not self.status()["connected"], timeout=60)
        spooled = self.result["spooledInSilence"] = self.status()["spooled"]
        os.kill(self.pid, signal.SIGCONT)
        self.stopped = False
        final = self.wait("the spool sent again and acknowledged", self.drained, timeout=90)
        self.result["sentInSilence"] = final["sent"] - sent
        # Each mark went into the silent socket, and everything spooled then went again on the new one.
        check(spooled >= MARKS and self.result["sentInSilence"] >= spooled + MARKS,
              f"the silence's marks sent twice, into the silent socket and again after: {self.result}")
        check(final["refused"] == 0 and final["dropped"] == 0, f"nothing refused or dropped: {final}")

    def fallbacks(self):
        """(e) What the engine lacks, so which fallbacks of the library ran (the Swift test checks what they made),
        what DOM events the input made, and the page's script errors."""
        features = self.result["features"]
        for feature, fallback in [("requestIdleCallback", "the UI state tree built in timer slices"),
                                  ("DeviceMotionEvent", "no accelerometer, nothing thrown"),
                                  ("longAnimationFrame", "frame timing from animation frames only"
                                   + ("" if features["longtask"] else ", no longtask entries either"))]:
            print(f"{'HAS' if features[feature] else 'LACKS'} {feature}" + ("" if features[feature] else f": fallback: {fallback}"), flush=True)
        self.result["seen"] = self.script("return enginePage.seen")
        print(f"DOM events the input made: {self.result['seen']}", flush=True)
        errors = [e for e in self.engines.browser_errors(self.engine, self.driver) if "WebSocket" not in e]  # the silence's
        check(not errors, f"no script errors in the page: {errors}")

    def quit(self):
        if self.stopped:
            os.kill(self.pid, signal.SIGCONT)
        self.driver.quit()


def run(engine, page_url, console, code, pid):
    run = Run(engine, pid)
    try:
        run.start(page_url, console, code)
        run.touches()
        run.view()
        run.silence()
        run.fallbacks()
        return run.result
    finally:
        run.quit()


def main():
    mode, engine = sys.argv[1], sys.argv[2]
    if mode == "missing":
        try:
            import engines
        except ImportError as error:  # Selenium
            print(f"MISSING {sys.executable} cannot import what the engines need ({error}; apt-get install python3-selenium)")
            return
        print(f"MISSING {engine}: {engines.missing(engine)}" if engines.missing(engine) else "READY")
        return
    started = time.monotonic()
    try:
        result = run(engine, sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]))
        result["seconds"] = round(time.monotonic() - started, 1)
        print("RESULT " + json.dumps(result), flush=True)
    except Exception as error:  # the failure is the test's, with what the library said (in run's own message)
        check(False, f"{engine}: {error!r}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
