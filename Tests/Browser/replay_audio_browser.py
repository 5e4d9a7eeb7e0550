#!/usr/bin/python3
"""Opens a stopped session's replay in Debian's headless Chromium and checks that the tester's voice
follows the playhead: after seeking (by ?t= and by clicking an event row) the <audio> element's
currentTime is the event's device time minus the stream's start (within 0.25 s), and the caption
shows what was said then; on the live page, Listen plays the stream; the sessions page's search finds
the quote (as text, never markup) and its link opens the replay there. Run by Tests/IntegrationTests/MediaCaptureTests.swift with CONSOLE_LOGIN_URL,
SESSION_ID, CAPTION_T (playhead seconds inside the transcript segment), MEDIA_T (the audio's time
there) and CAPTION_TEXT; exits 1 on a failure."""

import os
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from chromium_driver import make_driver

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL " + message, flush=True)


# Where the audio is, and where it should be: playhead (#time data-t) plus the stream's offset to t0.
POSITIONS = """
const voice = document.getElementById('voice');
return {ready: voice.readyState, current: voice.currentTime,
        wanted: Number(document.getElementById('time').dataset.t) - Number(voice.dataset.offset || 'NaN'),
        caption: document.getElementById('caption').textContent};
"""


def in_sync(driver):
    state = driver.execute_script(POSITIONS)
    return state if state["ready"] >= 1 and abs(state["current"] - state["wanted"]) <= 0.25 else False


def main():
    login, session = os.environ["CONSOLE_LOGIN_URL"], os.environ["SESSION_ID"]
    caption_t, caption_text = float(os.environ["CAPTION_T"]), os.environ["CAPTION_TEXT"]
    media_t = float(os.environ["MEDIA_T"])  # where the audio must be at CAPTION_T, worked out by the test
    base = login.split("/login")[0]
    driver = make_driver()
    try:
        driver.get(login)
        driver.get(f"{base}/sessions/{session}/replay?t={caption_t}")
        WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.body.dataset.ready") == "true")
        WebDriverWait(driver, 30).until(lambda d: d.execute_script("return !document.getElementById('media').classList.contains('hidden')"))
        try:
            state = WebDriverWait(driver, 30).until(in_sync)
            print(f"after ?t={caption_t}: audio at {state['current']:.3f} s, wanted {state['wanted']:.3f} s", flush=True)
            check(abs(state["current"] - media_t) <= 0.25, f"the audio is at {state['current']} s, not {media_t} s")
            check(caption_text in state["caption"], f"the caption at {caption_t} s is {state['caption']!r}, not {caption_text!r}")
        except Exception:
            check(False, f"the audio did not follow ?t=: {driver.execute_script(POSITIONS)}")

        rows = driver.find_elements(By.CSS_SELECTOR, "div.ev[data-testid=event-row]")
        check(len(rows) >= 2, f"{len(rows)} event rows")
        if len(rows) >= 2:
            rows[-1].click()
            try:
                state = WebDriverWait(driver, 30).until(in_sync)
                print(f"after clicking the last event: audio at {state['current']:.3f} s, wanted {state['wanted']:.3f} s", flush=True)
            except Exception:
                check(False, f"the audio did not follow a clicked event: {driver.execute_script(POSITIONS)}")
        # The live page's Listen button plays the stream's last seconds (and would follow it while recording).
        driver.get(f"{base}/sessions/{session}/live")
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "listen").is_displayed())
        driver.find_element(By.ID, "listen").click()
        try:
            WebDriverWait(driver, 30).until(lambda d: int(d.find_element(By.ID, "listen").get_attribute("data-bytes") or 0) > 0)
            print("live: played " + driver.find_element(By.ID, "listen").get_attribute("data-bytes") + " bytes of the voice", flush=True)
        except Exception:
            check(False, "the live page's Listen played nothing")
        # The sessions page's search finds what the tester said; its link opens the replay at that moment.
        driver.get(base + "/")
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "tr[data-testid=session-row]"))
        driver.find_element(By.ID, "search").send_keys(caption_text.split("<")[0].strip())  # "where is the": the words before the markup
        try:
            quote = WebDriverWait(driver, 30).until(
                lambda d: d.find_elements(By.CSS_SELECTOR, f"li[data-testid=quote][data-session-id='{session}'] a[data-testid=quote-replay]"))[0]
            check(caption_text in quote.text, f"the quote reads {quote.text!r}, not {caption_text!r} as text")
            check(not driver.find_elements(By.CSS_SELECTOR, "#quotes-list i"), "the quote's markup was parsed")
            quote.click()
            state = WebDriverWait(driver, 30).until(
                lambda d: d.execute_script("return document.body.dataset.ready") == "true" and in_sync(d))
            print(f"after the search's link: audio at {state['current']:.3f} s, caption {state['caption']!r}", flush=True)
            check(caption_text in state["caption"], f"the search's link opened the replay at {state}")
        except Exception as error:
            check(False, f"the sessions page's search did not find the quote and open it: {error!r}")
        errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        check(not errors, f"script errors: {errors}")
    finally:
        driver.quit()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
