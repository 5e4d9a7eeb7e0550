#!/usr/bin/python3
"""muEval for the web (CaptureLibrary/Web/capture.js) in a phone-sized Chromium against a real muevald over wss://,
with Examples/webnotes as the app. Run by Tests/IntegrationTests/WebCaptureBrowserTests.swift, one step per run:

  webcapture_browser.py tester INVITATION_URL CERT TASKS
      an invited tester: opens the invitation page, then the study's app from it; does the tasks (TASKS: JSON list
      of names) on the overlay (the first done, the last given up) with trusted touches (taps, a swipe, a
      two-finger pinch), taps the small button, shakes the phone (DevTools sensor overrides), speaks an exclamation
      into the fake microphone (an espeak-ng WAV), stops the recording on the overlay and answers SUS on the
      questionnaire page the overlay links to. RESULT {"touchIds": the fingers on the app, "sus": the answers}
  webcapture_browser.py once APP_URL CERT
      exactly once: marks recorded online, more marks and touches offline, the tab closed, the app opened again in
      a new tab with the network back; waits until the library's spool is empty. RESULT {"marks"}
  webcapture_browser.py join APP_URL CERT PROFILE
      a phone (browser profile PROFILE, kept) records by the invitation in APP_URL, then stops on the overlay.
      RESULT {"deviceId"}
  webcapture_browser.py refusals CAPTURE_URL CAFILE ORIGIN CODE APP_URL CERT PROFILE
      what /capture refuses (raw WebSocket client, as a browser would connect): a foreign Origin, a hello without an
      invitation, CODE from another phone; then the phone of PROFILE opens the app with the used CODE again (the
      library says why nothing records). RESULT {"foreignOrigin": status, "noInvitation", "otherPhone",
      "usedInvitation": reasons, "deviceId"}

CERT is muevald's console certificate (PEM): Chromium trusts it by its public key's hash
(--ignore-certificate-errors-spki-list), as a phone trusts a lab's CA. Prints RESULT {json}; exits 1 on a failure.
"""

import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import wave

from selenium.webdriver.support.ui import WebDriverWait

import phone_browser
from chromium_driver import PHONE, make_driver
from websocket_client import Refused, WebSocket

# One list of failures for this script and phone_browser's questionnaire step.
check = phone_browser.check

# What the tester says, again and again (Chromium loops the file): an exclamation of docs/SPEECH.md's list
# between ordinary lines, in the voice PocketSphinx hears best (Tests/SpeechRecognitionTests/TranscriberTests.swift).
SPEECH = ["okay I am adding a note now", "where is the search", "the list looks fine"]
VOICE = "en-us+f2"


def speech_wav(directory):
    """espeak-ng's 22,050 Hz mono lines with a second of silence between them, as one WAV file."""
    frames = b""
    rate = 22_050
    for line in SPEECH:
        spoken = subprocess.run(["espeak-ng", "--stdout", "-v", VOICE, "-s", "160", line], check=True, capture_output=True).stdout
        frames += bytes(rate * 2) + spoken[44:]
    path = os.path.join(directory, "speech.wav")
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(frames + bytes(rate * 2))
    return path


def spki_hash(certificate):
    """base64(SHA-256(SubjectPublicKeyInfo)) of a PEM certificate: what --ignore-certificate-errors-spki-list takes."""
    key = subprocess.run(["openssl", "x509", "-in", certificate, "-pubkey", "-noout"], check=True, capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=key, check=True, capture_output=True).stdout
    digest = subprocess.run(["openssl", "dgst", "-sha256", "-binary"], input=der, check=True, capture_output=True).stdout
    return base64.b64encode(digest).decode()


def phone(certificate, wav=None, profile=None):
    """The phone: Chromium in device mode trusting muevald's certificate, with a fake microphone playing `wav`,
    and the motion sensors DevTools overrides (set before any page, so the page's listeners see them). `profile`:
    a browser profile directory kept between runs (the same phone again: its device id, its storage)."""
    arguments = [f"--ignore-certificate-errors-spki-list={spki_hash(certificate)}"]
    if profile:
        arguments.append(f"--user-data-dir={profile}")  # after make_driver's own: the last one counts
    # A microphone always (Chromium's beep without `wav`): the phone has one, and the library asks for it.
    arguments += ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"]
    if wav:
        arguments.append(f"--use-file-for-fake-audio-capture={wav}")
    driver = make_driver(window_size="390,844", mobile=PHONE, extra_arguments=arguments)
    for sensor in ["accelerometer", "linear-acceleration", "gyroscope"]:
        driver.execute_cdp_cmd("Emulation.setSensorOverrideEnabled", {"enabled": True, "type": sensor, "metadata": {"available": True}})
        driver.execute_cdp_cmd("Emulation.setSensorOverrideReadings", {"type": sensor, "reading": {"xyz": {"x": 0, "y": 9.81 if sensor == "accelerometer" else 0, "z": 0}}})
    return driver


def wait(driver, what, condition, timeout=30):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: condition(d))
    except Exception:
        check(False, f"timed out waiting for {what}; library status: {status(driver)}")
        raise


def status(driver):
    """The library's own account (capture.status()), or None before it started."""
    try:
        return driver.execute_script("return globalThis.webnotesCapture?.status() ?? null")
    except Exception as error:  # a page between loads
        return f"unreadable: {error!r}"


# A control's centre: `#id` in the page, `@action` in the overlay's (open) Shadow DOM (its buttons' data-action), or
# a link by its text. When the overlay is collapsed (as it is a while after Begin), its toggle is what to tap first.
FIND = """
const [label] = arguments;
const centre = (node) => {
  const box = node?.getBoundingClientRect();
  return box && (box.width || box.height) ? {x: box.x + box.width / 2, y: box.y + box.height / 2, href: node.href ?? null} : null;
};
if (label.startsWith('#')) return centre(document.getElementById(label.slice(1)));
if (label.startsWith('@')) {
  const root = document.querySelector('mueval-overlay')?.shadowRoot;
  if (!root) return null;
  const found = centre(root.querySelector(`[data-action=${label.slice(1)}]`));
  const box = root.querySelector('.box').getBoundingClientRect();
  // Below the screen's edge: out of the tester's reach until the overlay is dragged up by its handle.
  if (found && found.y + 22 > innerHeight) return {...centre(root.querySelector('.handle')), below: box.bottom - innerHeight + 8};
  if (found || !root.querySelector('.box.small')) return found;
  return {...centre(root.querySelector('[data-action=toggle]')), collapsed: true};
}
return centre([...document.querySelectorAll('a')].find(a => a.textContent.trim() === label));
"""


def find(driver, label):
    return driver.execute_script(FIND, label)


def touch(driver, kind, points, timestamp=None):
    event = {"type": kind, "touchPoints": points}
    if timestamp is not None:
        event["timestamp"] = timestamp
    driver.execute_cdp_cmd("Input.dispatchTouchEvent", event)


class Fingers:
    """Trusted touches (Input.dispatchTouchEvent), each finger with an id of its own; remembers the ids used."""

    def __init__(self, driver):
        self.driver = driver
        self.used = set()
        self.next = 11

    def _id(self):
        self.next += 1
        self.used.add(self.next)
        return self.next

    def tap(self, label):
        """Taps a control (find's labels); the library records the app's touches, not the overlay's or other pages'."""
        where = wait(self.driver, f"{label} on screen", lambda d: find(d, label))
        if where.get("collapsed"):
            self._touch(where, False)
            return self.tap(label)
        if where.get("below"):
            check(False, f"the overlay's {label} is below the screen's edge ({where['below']:.0f} px): the tester must drag it up")
            self.drag(where, -where["below"])
            return self.tap(label)
        self._touch(where, label.startswith("#"))
        return where

    def _touch(self, where, recorded):
        finger = self.next = self.next + 1
        if recorded:
            self.used.add(finger)
        touch(self.driver, "touchStart", [{"x": where["x"], "y": where["y"], "id": finger}])
        touch(self.driver, "touchEnd", [])

    def drag(self, where, dy, steps=5):
        """The overlay moved by its handle (a drag the library does not record: it is the overlay's). The events are
        stamped 50 ms apart and held still at the end, a slow drag: a fast one flings, and Chromium takes the next
        tap as the stop of that fling (no click)."""
        finger = self.next = self.next + 1
        start = time.time()
        touch(self.driver, "touchStart", [{"x": where["x"], "y": where["y"], "id": finger}], start)
        for step in range(1, steps + 1):
            touch(self.driver, "touchMove", [{"x": where["x"], "y": where["y"] + dy * step / steps, "id": finger}], start + 0.05 * step)
        touch(self.driver, "touchMove", [{"x": where["x"], "y": where["y"] + dy, "id": finger}], start + 0.05 * steps + 0.3)
        touch(self.driver, "touchEnd", [], start + 0.05 * steps + 0.35)

    def swipe(self, x, y0, y1, steps=8):
        finger = self._id()
        touch(self.driver, "touchStart", [{"x": x, "y": y0, "id": finger}])
        for step in range(1, steps + 1):
            touch(self.driver, "touchMove", [{"x": x, "y": y0 + (y1 - y0) * step / steps, "id": finger}])
        touch(self.driver, "touchEnd", [])

    def pinch(self, x, y, start=120, end=40, steps=8):
        """Two fingers along x, each moving (touchMove carries both points, as a phone reports them); closing, by
        default: the page is at its smallest scale already, so it stays unzoomed for the taps that follow."""
        first, second = self._id(), self._id()
        touch(self.driver, "touchStart", [{"x": x - start, "y": y, "id": first}])
        touch(self.driver, "touchStart", [{"x": x - start, "y": y, "id": first}, {"x": x + start, "y": y, "id": second}])
        for step in range(1, steps + 1):
            spread = start + (end - start) * step / steps
            touch(self.driver, "touchMove", [{"x": x - spread, "y": y, "id": first}, {"x": x + spread, "y": y, "id": second}])
        touch(self.driver, "touchEnd", [{"x": x - end, "y": y, "id": first}])
        touch(self.driver, "touchEnd", [])


def type_into(driver, element_id, text):
    driver.find_element("id", element_id).send_keys(text)


def shake(driver, seconds=2.0, rate=20):
    """The phone shaken along x at 3 g (docs/REPORTS.md: 1.5 g from gravity, 3 reversals within 0.5 s each):
    readings alternate sides `rate` times a second, DevTools feeding the accelerometer as the phone's would."""
    for index in range(int(seconds * rate)):
        x = 29.4 if index % 2 else -29.4
        driver.execute_cdp_cmd("Emulation.setSensorOverrideReadings", {"type": "accelerometer", "reading": {"xyz": {"x": x, "y": 9.81, "z": 0}}})
        time.sleep(1 / rate)  # the shake's own pace, not a wait for something
    driver.execute_cdp_cmd("Emulation.setSensorOverrideReadings", {"type": "accelerometer", "reading": {"xyz": {"x": 0, "y": 9.81, "z": 0}}})


def offline(driver, cut):
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": cut, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})


class Network:
    """The phone's way to the lab: a TCP relay to muevald's console port that can be cut. Chromium's offline
    emulation stops new connections but leaves an open WebSocket running (seen with Chromium 156), so the cut is
    made here too, as a phone losing its signal: open connections go silent (what crosses is dropped, nothing is
    closed: the library's heartbeat must notice) and new ones are refused until the network is back.
    Not to be restored while a tab of the same browser is still cut off (each tab has its own emulation)."""

    def __init__(self, port):
        self.port = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = self.listener.getsockname()[1]
        self.up = True
        self.links = []  # [phone side, lab side, silent]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            phone, _ = self.listener.accept()
            if not self.up:
                phone.close()
                continue
            link = [phone, socket.create_connection(("127.0.0.1", self.port)), False]
            self.links.append(link)
            threading.Thread(target=self._carry, args=(link, 0, 1), daemon=True).start()
            threading.Thread(target=self._carry, args=(link, 1, 0), daemon=True).start()

    def _carry(self, link, source, target):
        try:
            while data := link[source].recv(65536):
                if not link[2]:
                    link[target].sendall(data)
        except OSError:
            pass
        if not link[2]:  # a dead link closes nothing
            link[0].close()
            link[1].close()

    def cut(self, driver):
        self.up = False
        for link in self.links:
            link[2] = True
        offline(driver, True)

    def restore(self, driver):
        """Back, as a phone gets a network again: the connections from before are gone (a browser's pooled one
        would otherwise hang the next request), new ones go through."""
        for link in self.links:
            if link[2]:
                link[0].close()
                link[1].close()
        self.up = True
        offline(driver, False)


def mark(driver, number):
    """A custom event the app could send (capture.event): numbered, so the server side can check order and count."""
    driver.execute_script("globalThis.webnotesCapture.event('Mark', {n: arguments[0]})", number)


def connected(driver):
    state = status(driver)
    return isinstance(state, dict) and state.get("connected")


def drained(driver):
    """Connected, and everything the library numbered is acknowledged: its spool is empty."""
    state = status(driver)
    return isinstance(state, dict) and state.get("connected") and state.get("spooled") == 0


# Counts the think-aloud chunks the page sends (the library's WebSocket frames), for the test to know the
# microphone's sound has gone out: each <media> is about a second.
COUNT_MEDIA = """
window.__mediaSent = 0;
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) {
  if (typeof data === 'string') window.__mediaSent += data.split('<media>').length - 1;
  return send.call(this, data);
};
"""


def media_sent(driver):
    return driver.execute_script("return window.__mediaSent ?? 0")


def tester(invitation_url, certificate, tasks):
    scratch = tempfile.mkdtemp(prefix="webcapture-")
    wav = speech_wav(scratch)
    with wave.open(wav) as sound:
        seconds = sound.getnframes() / sound.getframerate()
    driver = phone(certificate, wav)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": COUNT_MEDIA})
    fingers = Fingers(driver)
    try:
        driver.get(invitation_url)
        link = wait(driver, "Open the study's app", lambda d: find(d, "Open the study's app"))
        check(link["href"] and "mueval=" in link["href"], f"the app's link carries the code: {link}")
        fingers.tap("Open the study's app")
        wait(driver, "the app with its capture", lambda d: connected(d))
        shown = [task["name"] for task in status(driver)["tasks"]]
        check(shown == tasks, f"the welcome's tasks in order: {shown}")

        # Task 1, done: a note added.
        fingers.tap("@begin")
        fingers.tap("#note-text")
        type_into(driver, "note-text", "buy oat milk")
        fingers.tap("#add-note")
        wait(driver, "the note in the list", lambda d: "buy oat milk" in d.find_element("id", "notes").text)
        fingers.tap("@done")

        # Task 2, given up: the search view, a swipe over the results, a pinch, then Give up.
        fingers.tap("@begin")
        fingers.tap("#to-search")
        wait(driver, "the search view", lambda d: "view=search" in d.current_url)
        fingers.tap("#search-text")
        type_into(driver, "search-text", "oat")
        wait(driver, "a result", lambda d: "buy oat milk" in d.find_element("id", "results").text)
        fingers.swipe(195, 520, 220)  # above the overlay, which is open while the task begins
        fingers.pinch(195, 420)
        fingers.tap("@giveUp")

        # Back to the list, where the small button is; then the shake and the talking.
        fingers.tap("#to-list")
        wait(driver, "the list view", lambda d: "view=list" in d.current_url)
        fingers.tap("#sort-notes")
        shake(driver)
        # The whole spoken file once and a half (Chromium loops it), each chunk acknowledged.
        wait(driver, "the microphone's sound sent", lambda d: media_sent(d) >= 1.5 * seconds, timeout=60 + 2 * seconds)
        wait(driver, "everything acknowledged", drained)

        # The end: the overlay links the questionnaire; the tester stops the recording, then answers SUS there.
        questionnaire = wait(driver, "the questionnaire's link", lambda d: find(d, "@questionnaire"))
        check(questionnaire["href"] == invitation_url, f"the questionnaire is the invitation page: {questionnaire}")
        fingers.tap("@stop")
        wait(driver, "the recording stopped (the overlay gone)", lambda d: d.execute_script("return !document.querySelector('mueval-overlay')"))
        answered = phone_browser.invitation(driver, invitation_url, tasks)
        return {"touchIds": sorted(fingers.used), "sus": answered["sus"]}
    finally:
        driver.quit()


def once(app_url, certificate):
    # The page reaches muevald through the cuttable network: its ?server= points at the relay.
    lab = urllib.parse.urlsplit(urllib.parse.parse_qs(urllib.parse.urlsplit(app_url).query)["server"][0])
    network = Network(lab.port)
    app_url = app_url.replace(f"server={lab.scheme}://{lab.netloc}", f"server={lab.scheme}://127.0.0.1:{network.address}")
    driver = phone(certificate)
    fingers = Fingers(driver)
    try:
        driver.get(app_url)
        wait(driver, "the capture connected", connected)
        for number in range(1, 4):
            mark(driver, number)
        wait(driver, "the online marks acknowledged", drained)

        # Offline: the library keeps numbering into its IndexedDB spool; its heartbeat finds the socket dead.
        network.cut(driver)
        for number in range(4, 9):
            mark(driver, number)
            fingers.tap("#add-note")
        fingers.tap("#to-search")
        mark(driver, 9)
        wait(driver, "the library to notice the cut", lambda d: not connected(d), timeout=60)
        spooled = status(driver)["spooled"]
        check(spooled >= 6 + 6, f"the offline marks and taps spooled: {spooled}")

        # The tab closed while offline; the network back; the app opened again in a new tab, which sends the spool.
        first = driver.current_window_handle
        driver.switch_to.new_window("tab")
        second = driver.current_window_handle
        driver.switch_to.window(first)
        driver.close()
        driver.switch_to.window(second)
        network.restore(driver)
        driver.get(app_url)
        wait(driver, "the new tab connected", connected)
        mark(driver, 10)
        wait(driver, "the spool resent and acknowledged", drained, timeout=60)
        return {"marks": 10}
    finally:
        driver.quit()


def hello(socket, invitation=None):
    fields = "<key>deviceId</key><string>web-refusal-probe</string><key>appId</key><string>webnotes</string>"
    if invitation:
        fields += f"<key>invitation</key><string>{invitation}</string>"
    socket.send(f"<hello>{fields}</hello>")
    socket.send("<event><key>class</key><string>CustomEvent</string><key>name</key><string>probe</string><key>seq</key><integer>1</integer></event>")
    reply = socket.receive()
    socket.close()
    return reply


def reason(reply):
    """The reason of an <error> reply, else the whole reply (for the failure message)."""
    start = reply.find("<key>reason</key><string>")
    if not reply.startswith("<error>") or start < 0:
        return reply
    return reply[start + len("<key>reason</key><string>"):].split("</string>", 1)[0]


def join(app_url, certificate, profile):
    """The tester's phone records by its invitation, then stops on the overlay: the invitation is used."""
    driver = phone(certificate, profile=profile)
    try:
        driver.get(app_url)
        wait(driver, "the capture connected", connected)
        device = status(driver)["deviceId"]
        Fingers(driver).tap("@stop")
        wait(driver, "the recording stopped (the overlay gone)", lambda d: d.execute_script("return !document.querySelector('mueval-overlay')"))
        return {"deviceId": device}
    finally:
        driver.quit()


def refusals(capture_url, cafile, origin, code, app_url, certificate, profile):
    result = {}
    try:
        WebSocket(capture_url, origin="https://foreign.example", cafile=cafile)
        check(False, "a foreign Origin was let in")
    except Refused as refused:
        result["foreignOrigin"] = refused.status
    result["noInvitation"] = reason(hello(WebSocket(capture_url, origin=origin, cafile=cafile)))
    result["otherPhone"] = reason(hello(WebSocket(capture_url, origin=origin, cafile=cafile), code))

    # The phone that used the invitation opens the app with it again: the library says why nothing records.
    driver = phone(certificate, profile=profile)
    try:
        driver.get(app_url)
        result["usedInvitation"] = wait(driver, "the library to report the refusal", lambda d: (status(d) or {}).get("lastError"))
        result["deviceId"] = status(driver)["deviceId"]
        check(not connected(driver), "a refused phone records nothing")
    finally:
        driver.quit()
    return result


def main():
    mode, arguments = sys.argv[1], sys.argv[2:]
    try:
        if mode == "tester":
            result = tester(arguments[0], arguments[1], json.loads(arguments[2]))
        elif mode == "once":
            result = once(*arguments[:2])
        elif mode == "join":
            result = join(*arguments[:3])
        else:
            result = refusals(*arguments[:7])
        print("RESULT " + json.dumps(result), flush=True)
    except Exception as error:  # the failure is the test's, with what the library said
        check(False, f"{mode}: {error!r}")
    sys.exit(check.status)


if __name__ == "__main__":
    main()
