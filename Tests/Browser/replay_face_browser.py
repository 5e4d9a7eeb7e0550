#!/usr/bin/python3
"""Opens the replay of a session recorded with AAC voice and H.264 face video (fragmented MP4, as
muevalsim --audio-format aac --face-video sends them) in Debian's headless Chromium and checks that
the browser reads both streams as muevald serves them (metadata loaded, the face 160x120) and that
both follow the playhead: after ?t=REPLAY_T each element's currentTime is the playhead's device time
minus the stream's start (within 0.25 s). Run by Tests/IntegrationTests/SimulatorMediaFormatsTests.swift
with CONSOLE_LOGIN_URL, SESSION_ID and REPLAY_T; exits 1 on a failure."""

import os
import sys

from selenium.webdriver.support.ui import WebDriverWait

from chromium_driver import make_driver

STATE = """
const wanted = (id) => Number(document.getElementById('time').dataset.t) - Number(document.getElementById(id).dataset.offset || 'NaN');
const state = (id) => { const e = document.getElementById(id); return {ready: e.readyState, current: e.currentTime, wanted: wanted(id), error: e.error && e.error.message}; };
const face = document.getElementById('face');
return {voice: state('voice'), face: state('face'), width: face.videoWidth, height: face.videoHeight};
"""


def in_sync(driver):
    state = driver.execute_script(STATE)
    ok = all(state[k]["ready"] >= 1 and abs(state[k]["current"] - state[k]["wanted"]) <= 0.25 for k in ("voice", "face"))
    return state if ok else False


def main():
    login, session, t = os.environ["CONSOLE_LOGIN_URL"], os.environ["SESSION_ID"], float(os.environ["REPLAY_T"])
    base = login.split("/login")[0]
    driver = make_driver()
    failures = []
    try:
        driver.get(login)
        driver.get(f"{base}/sessions/{session}/replay?t={t}")
        WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.body.dataset.ready") == "true")
        try:
            state = WebDriverWait(driver, 30).until(in_sync)
            print(f"replay at {t} s: voice at {state['voice']['current']:.3f} s, face at {state['face']['current']:.3f} s, "
                  f"face {state['width']}x{state['height']}", flush=True)
            if (state["width"], state["height"]) != (160, 120):
                failures.append(f"the face video is {state['width']}x{state['height']}, not 160x120")
        except Exception:
            failures.append(f"voice and face did not follow ?t=: {driver.execute_script(STATE)}")
        errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        if errors:
            failures.append(f"script errors: {errors}")
    finally:
        driver.quit()
    for failure in failures:
        print("FAIL " + failure, flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
