#!/usr/bin/python3
"""The Mobile Monitor web console in a real browser: Debian's Chromium driven by Debian's
chromedriver through python3-selenium (nothing is downloaded).

Run by Tests/IntegrationTests/ConsoleBrowserTests.swift against a real muevald, which passes:
  CONSOLE_LOGIN_URL   a fresh single-use login link (`muevalctl console --json`, key "url")
  SCREENSHOT_DIR      where to save a PNG of each page (docs/console), optional
Tells the Swift side on stdout, one line each:
  "READY-FOR-DEVICE <session id>"  the session waits and the live page is open: start muevalsim
  "RESULT <json>"                  the session id and the notes the browser added, for muevalctl events
Exit status 0 when every check passed; 1 with "FAIL: …" on stderr otherwise.
Every wait has a deadline (WebDriverWait); nothing sleeps and hopes.
"""

import json
import os
import sys
import traceback
import urllib.parse

from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from chromium_driver import make_driver

LOGIN_URL = os.environ["CONSOLE_LOGIN_URL"]
BASE = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(LOGIN_URL))
SCREENSHOT_DIR = os.environ.get("SCREENSHOT_DIR")
ROW_HEIGHT = 22  # px per replay event row (console.css .ev)

# What a user types: markup that must stay text.
SESSION_NAME = "<img src=x onerror=\"window.__pwned='name'\">Browser study"
TEST_USER = "Jill <b>Tester</b>"
NOTE_TEXT = "<script>window.__pwned='note'</script>Tester hesitates at Save"
STUDY = "browser-study"
RECRUITED_STUDY = "recruited-study"  # recruited in two iterations by the Swift side
STUDY_DESCRIPTION = "<img src=x onerror=\"window.__pwned='study'\">Posting moments"
TASK_NAME = "Post <b>a</b> moment"
QUESTION_TEXT = "What <i>surprised</i> you?"


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def say(line):
    print(line, flush=True)


def wait(driver, what, condition, timeout=20):
    """Waits until condition(driver) is truthy and returns it; fails naming `what` after `timeout` s.
    Pages re-render lists when the server pushes, so an element gone stale is looked up again."""
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1,
                             ignored_exceptions=[StaleElementReferenceException]).until(lambda d: condition(d))
    except TimeoutException:
        raise CheckFailed(f"timed out after {timeout} s waiting for {what} (at {driver.current_url})")


def js_fetch(driver, path, method="GET", headers=None, body=None):
    """fetch() from the page (same origin, the page's cookies): {status, text}."""
    return driver.execute_async_script(
        """
        const [path, method, headers, body, done] = arguments;
        fetch(path, {method, headers, body, credentials: 'same-origin', redirect: 'manual'})
          .then(async (r) => done({status: r.status, text: await r.text()}))
          .catch((e) => done({status: -1, text: String(e)}));
        """, path, method, headers or {}, body)


def not_pwned(driver):
    """No markup from a device or a user ever ran as script on this page."""
    value = driver.execute_script("return window.__pwned === undefined ? null : String(window.__pwned)")
    check(value is None, f"script from data ran on {driver.current_url}: window.__pwned = {value!r}")


def screenshot(driver, name):
    if SCREENSHOT_DIR:
        os.makedirs(SCREENSHOT_DIR, exist_ok=True)
        driver.save_screenshot(os.path.join(SCREENSHOT_DIR, name + ".png"))


# Canvas pixels: the screenshot drawn (share of pixels not the placeholder grey) and touch marks
# (the console's touch colour rgb(230, 0, 122), blended: red high, green low, blue middling).
CANVAS_STATS = """
const canvas = document.getElementById('screen');
const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
let touch = 0, painted = 0, samples = 0;
for (let i = 0; i < data.length; i += 4) {
  const r = data[i], g = data[i + 1], b = data[i + 2];
  if (r > 180 && g < 70 && b > 80 && b < 180) touch++;
  if (i % 40 === 0) { samples++; if (!(r === 236 && g === 239 && b === 243)) painted++; }
}
return {sha: canvas.dataset.sha || '', touch, painted: painted / samples, width: canvas.width, height: canvas.height};
"""

# Every screenshot the report shows, loaded as the page loads it (from its folder, or redirected to the session's
# own while it is being copied: docs/REPORTS.md, "When a report is ready"): how many, and how many decoded.
REPORT_SHOTS_LOAD = """
const done = arguments[arguments.length - 1];
const sources = [...new Set([...document.querySelectorAll('img[src^="shots/"]')].map(image => image.src))];
Promise.all(sources.map(source => new Promise(resolve => {
  const image = new Image();
  image.onload = () => resolve(image.naturalWidth > 0);
  image.onerror = () => resolve(false);
  image.src = source;
}))).then(loaded => done({count: loaded.length, loaded: loaded.filter(Boolean).length}));
"""

# How alike the canvas is to a blob drawn the same size: the share of sampled pixels that match.
CANVAS_MATCHES_BLOB = """
const [url, done] = arguments;
const canvas = document.getElementById('screen');
const image = new Image();
image.onload = () => {
  const off = document.createElement('canvas');
  off.width = canvas.width; off.height = canvas.height;
  const o = off.getContext('2d');
  o.drawImage(image, 0, 0, off.width, off.height);
  const a = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  const b = o.getImageData(0, 0, off.width, off.height).data;
  let same = 0, total = 0;
  for (let i = 0; i < a.length; i += 4 * 61) {
    total++;
    if (Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]) < 30) same++;
  }
  done(same / total);
};
image.onerror = () => done(-1);
image.src = url;
"""


def logged_out_checks(driver, session_id=None):
    """Without a cookie every page is the login page and every API call 401, with no data."""
    for path in ["/", "/server"] + ([f"/sessions/{session_id}/live", f"/sessions/{session_id}/replay"] if session_id else []):
        driver.get(BASE + path)
        wait(driver, f"the login page at {path}", lambda d: d.find_elements(By.ID, "login"))
        body = driver.find_element(By.TAG_NAME, "body").text
        check("muevalctl console --open" in body, f"the login page at {path} does not say how to log in: {body!r}")
        check("Browser study" not in driver.page_source, f"{path} without a cookie shows session data")
    for path in ["/api/sessions", "/api/status", "/api/devices"] + ([f"/api/sessions/{session_id}/replay"] if session_id else []):
        reply = js_fetch(driver, path)
        check(reply["status"] == 401, f"GET {path} without a cookie: status {reply['status']}, expected 401")
        try:
            keys = set(json.loads(reply["text"]))
        except (ValueError, TypeError):
            keys = None
        check(keys == {"error"}, f"GET {path} without a cookie answers more than an error: {reply['text'][:200]!r}")


def main():
    driver = make_driver()
    try:
        run(driver)
    finally:
        problems = [entry["message"] for entry in driver.get_log("browser")
                    if "Content Security Policy" in entry["message"] or "Uncaught" in entry["message"]]
        driver.quit()
    # The console's pages and the generated report it serves: no script error, no CSP violation.
    check(not problems, "pages reported script errors or CSP violations:\n  " + "\n  ".join(problems))


def run(driver):
    # --- Without a cookie: the login page, no data.
    logged_out_checks(driver)
    screenshot(driver, "login")

    # --- Log in with the link from `muevalctl console`.
    driver.get(LOGIN_URL)
    wait(driver, "the sessions page after logging in", lambda d: d.find_elements(By.ID, "sessions-body"))
    check(urllib.parse.urlsplit(driver.current_url).path == "/", f"login did not lead to /: {driver.current_url}")
    wait(driver, "the updates socket", lambda d: d.find_element(By.ID, "conn").get_attribute("data-state") == "up")
    sessions_before = json.loads(js_fetch(driver, "/api/sessions")["text"])

    # --- State changes need the CSRF token.
    for headers, what in [({"Content-Type": "application/json"}, "no token"),
                          ({"Content-Type": "application/json", "X-CSRF-Token": "forged"}, "a wrong token")]:
        reply = js_fetch(driver, "/api/sessions", "POST", headers, json.dumps({"name": "csrf"}))
        check(reply["status"] == 403, f"POST /api/sessions with {what}: status {reply['status']}, expected 403")
    check(len(json.loads(js_fetch(driver, "/api/sessions")["text"])) == len(sessions_before),
          "a POST refused for its CSRF token still created a session")

    # --- Start a session with one click (name and user typed first; the device: the next one).
    driver.find_element(By.ID, "start-name").send_keys(SESSION_NAME)
    driver.find_element(By.ID, "start-user").send_keys(TEST_USER)
    driver.find_element(By.ID, "start-button").click()
    result = wait(driver, "the new session's id", lambda d: d.find_element(By.ID, "start-result").get_attribute("data-session-id"))
    session_id = result
    row_selector = f"tr[data-testid=session-row][data-session-id='{session_id}']"
    row_text = wait(driver, "the new session's row, waiting, with its name and user as typed", lambda d: next((
        row.text for row in d.find_elements(By.CSS_SELECTOR, row_selector + "[data-state=waiting]")
        if SESSION_NAME in row.text and TEST_USER in row.text), None))
    check("next device" in row_text, f"the session is not for the next device: {row_text!r}")
    not_pwned(driver)

    # --- The live page, then the device.
    driver.find_element(By.CSS_SELECTOR, "#start-result [data-testid=watch-live]").click()
    wait(driver, "the live page's socket", lambda d: d.find_element(By.ID, "conn").get_attribute("data-state") == "up")
    wait(driver, "the live page's hello", lambda d: d.find_element(By.ID, "session-state").text != "")
    say(f"READY-FOR-DEVICE {session_id}")  # the Swift side starts muevalsim now

    # The screenshot and touch marks, read from the canvas's pixels.
    stats = wait(driver, "a screenshot and a touch mark on the live canvas", lambda d: (
        lambda s: s if s["sha"] and s["painted"] > 0.5 and s["touch"] > 50 else None)(d.execute_script(CANVAS_STATS)), timeout=60)
    wait(driver, "the live page to show the session recording", lambda d: d.find_element(By.ID, "session-state").text == "recording")
    check(stats["width"] == 640 and stats["height"] == 960, f"the canvas is not the device's 320x480 points at 2x: {stats}")
    view = wait(driver, "the current view", lambda d: (lambda t: t if "ViewController" in t else None)(
        d.find_element(By.ID, "current-view").text))
    check("<script>" in view or "<img" in view, f"the current view's name is not shown literally: {view!r}")
    wait(driver, "the view stack", lambda d: d.find_elements(By.CSS_SELECTOR, "#view-stack li"))
    wait(driver, "a touch in the event list", lambda d: d.find_elements(By.CSS_SELECTOR, "#events [data-class=UserInputEvent]"))
    shown = {stats["sha"]}
    wait(driver, "a second screenshot on the live canvas", lambda d: (shown.add(d.execute_script(CANVAS_STATS)["sha"]) or len(shown - {""}) >= 2), timeout=90)
    not_pwned(driver)
    screenshot(driver, "live")

    # --- Observer notes: typed with a kind, and a marker key.
    note_field = driver.find_element(By.ID, "note-text")
    Select(driver.find_element(By.ID, "note-kind")).select_by_value("problem")
    note_field.send_keys(NOTE_TEXT + Keys.ENTER)
    wait(driver, "the typed note to be saved", lambda d: "Saved: [problem]" in d.find_element(By.ID, "note-status").text)
    check(note_field.get_attribute("value") == "", "the note field was not cleared after saving")
    driver.find_element(By.ID, "rate").click()  # focus out of the text field: keys are markers now
    driver.switch_to.active_element.send_keys("3")
    wait(driver, "the task-done marker to be saved", lambda d: "Saved: [task-done]" in d.find_element(By.ID, "note-status").text)
    wait(driver, "the note in the live stream", lambda d: any(
        NOTE_TEXT in row.text for row in d.find_elements(By.CSS_SELECTOR, "#events [data-class=ObserverNote]")), timeout=30)
    not_pwned(driver)

    # --- Stop with one click.
    driver.find_element(By.ID, "stop-button").click()
    wait(driver, "the session to stop", lambda d: d.find_element(By.ID, "session-state").text == "stopped")

    # --- The session page offers the report (generated after the stop; else one click on Generate).
    driver.get(f"{BASE}/sessions/{session_id}")
    wait(driver, "the session page", lambda d: d.find_element(By.ID, "session-state").text == "stopped")
    try:
        wait(driver, "the report generated after the stop", lambda d: d.find_element(By.ID, "report-open").is_displayed(), timeout=15)
    except CheckFailed:
        driver.find_element(By.ID, "report-generate").click()
        wait(driver, "the report generated with one click", lambda d: d.find_element(By.ID, "report-open").is_displayed(), timeout=60)
    report_url = driver.find_element(By.ID, "report-open").get_attribute("href")
    check(report_url.startswith(BASE + f"/sessions/{session_id}/reports/"), f"the report link is not the session's report: {report_url}")
    wait(driver, "the note in the notes list", lambda d: any(
        NOTE_TEXT in cell.text for cell in d.find_elements(By.CSS_SELECTOR, "#notes-body [data-testid=note-text]")))
    not_pwned(driver)
    screenshot(driver, "session")
    driver.get(report_url)
    wait(driver, "the report", lambda d: len(d.find_element(By.TAG_NAME, "body").text) > 100, timeout=30)
    not_pwned(driver)
    shots = driver.execute_async_script(REPORT_SHOTS_LOAD)
    check(shots["count"] > 0 and shots["loaded"] == shots["count"], f"the report's screenshots do not all show: {shots}")
    screenshot(driver, "report")

    # --- Replay: click an event, see that moment's screenshot.
    driver.get(f"{BASE}/sessions/{session_id}/replay")
    wait(driver, "the replay index", lambda d: d.execute_script("return document.body.dataset.ready === 'true'"))
    index = json.loads(js_fetch(driver, f"/api/sessions/{session_id}/replay")["text"])
    shots = index["screenshots"]
    check(len({shot["sha"] for shot in shots}) >= 2, f"the replay index has fewer than two distinct screenshots: {shots}")
    target = next(shot for shot in shots if shot["sha"] != shots[0]["sha"])
    position = index["events"]["id"].index(target["event"])
    expected_t = index["events"]["t"][position] - index["start"]
    check(any(note["text"] == NOTE_TEXT and note["kind"] == "problem" for note in index["notes"]), "the replay index lacks the note")
    wait(driver, "the note's mark on the scrubber", lambda d: d.find_elements(By.CSS_SELECTOR, "#marks .mark[data-kind=problem]"))
    driver.execute_script("document.getElementById('events').scrollTop = arguments[0];", max(0, position * ROW_HEIGHT - 100))
    # The list renders the rows in view after each scroll: click once the row is there and stays.
    wait(driver, "a click on the screenshot event's row", lambda d: d.find_element(
        By.CSS_SELECTOR, f"#events [data-event-id='{target['event']}']").click() or True)
    wait(driver, "the playhead at the clicked event", lambda d: abs(float(d.find_element(By.ID, "time").get_attribute("data-t")) - expected_t) < 0.01)
    wait(driver, "the clicked event's row highlighted", lambda d: d.find_elements(By.CSS_SELECTOR, f"#events .current[data-event-id='{target['event']}']"))
    wait(driver, "that moment's screenshot on the canvas", lambda d: d.execute_script(CANVAS_STATS)["sha"] == target["sha"], timeout=30)
    blob = f"/api/sessions/{session_id}/blobs/"
    alike = driver.execute_async_script(CANVAS_MATCHES_BLOB, blob + target["sha"])
    other = driver.execute_async_script(CANVAS_MATCHES_BLOB, blob + shots[0]["sha"])
    check(alike >= 0.9, f"the canvas is not the clicked moment's screenshot: {alike:.2f} of pixels match")
    check(alike > other, f"the canvas matches the first screenshot ({other:.2f}) as well as the clicked one ({alike:.2f})")
    wait(driver, "the deep link in the address", lambda d: "t=" in urllib.parse.urlsplit(d.current_url).query)
    wait(driver, "the event's details", lambda d: f'"id": {target["event"]}' in d.find_element(By.ID, "event-detail").text)
    deep_link = driver.current_url
    driver.get(deep_link)
    wait(driver, "the deep link's screenshot", lambda d: d.execute_script(CANVAS_STATS)["sha"] == target["sha"], timeout=30)
    not_pwned(driver)
    screenshot(driver, "replay")

    # --- Sessions and Server pages after the run.
    driver.get(BASE + "/")
    wait(driver, "the stopped session's row", lambda d: d.find_elements(By.CSS_SELECTOR, row_selector + "[data-state=stopped]"))
    not_pwned(driver)
    screenshot(driver, "sessions")
    driver.get(BASE + "/server")
    wait(driver, "the stored-events counter", lambda d: d.find_element(By.CSS_SELECTOR, "#counters [data-key=eventsStored]").text not in ("", "—", "0"))
    not_pwned(driver)
    screenshot(driver, "server")

    study_checks(driver)
    recruitment_checks(driver)

    # --- Logged out: no data; the used login link is refused and sets no cookie.
    driver.delete_all_cookies()
    logged_out_checks(driver, session_id)
    driver.get(LOGIN_URL)
    check(not driver.find_elements(By.ID, "sessions-body"), "a used login link logged in again")
    reply = js_fetch(driver, "/api/me")
    check(reply["status"] == 401, f"after a used login link, /api/me answers {reply['status']}, expected 401")
    reply = js_fetch(driver, LOGIN_URL)
    check(reply["status"] == 403, f"a used login link answers {reply['status']}, expected 403")

    say("RESULT " + json.dumps({"session": session_id, "notes": [
        {"text": NOTE_TEXT, "kind": "problem"}, {"text": "Task done", "kind": "task-done"}]}))


def by_data(driver, selector, key, value):
    """The elements matching selector whose data-KEY is value (values hold markup, so not in the CSS)."""
    return [node for node in driver.find_elements(By.CSS_SELECTOR, selector) if node.get_attribute(f"data-{key}") == value]


def recruitment_checks(driver):
    """A study recruited in two iterations (RecruitCommandTests.recruitInTwoIterations): its page counts the
    recruitment's iteration, what completes it, and every iteration's apart, with the statuses the server lists."""
    driver.get(f"{BASE}/study?name={RECRUITED_STUDY}")
    line = wait(driver, "the recruitment's line", lambda d: d.find_element(By.ID, "recruitment-line").text.startswith("Iteration") and
                d.find_element(By.ID, "recruitment-line").text)
    check(line == "Iteration 2: 1 of 2 done · 1 invited, 1 done · every iteration: 1 invited, 3 done", f"the recruitment's line: {line!r}")
    rows = driver.find_elements(By.CSS_SELECTOR, "tr[data-testid=invitation-row]")
    check([row.find_elements(By.TAG_NAME, "td")[1].text for row in rows] == ["1", "1", "2", "2"],
          f"the invitations' iterations: {[row.text for row in rows]}")


def study_checks(driver):
    """Studies: create one, add an iteration, a task, a participant and a question; start a session
    in it from the sessions page and mark its task on the live page; fill the questionnaire on a
    tablet-sized window (a refused incomplete submit names the item, then it saves)."""
    driver.get(BASE + "/studies")
    wait(driver, "the studies page", lambda d: d.find_elements(By.ID, "studies-body"))
    driver.find_element(By.ID, "study-name").send_keys(STUDY)
    driver.find_element(By.ID, "study-description").send_keys(STUDY_DESCRIPTION)
    driver.find_element(By.ID, "study-create").click()
    wait(driver, "the new study's page", lambda d: d.find_element(By.ID, "study-title").text == STUDY)
    wait(driver, "the description shown as text", lambda d: STUDY_DESCRIPTION in d.find_element(By.ID, "study-line").text)

    driver.find_element(By.ID, "iteration-label").send_keys("1.0 beta")
    driver.find_element(By.ID, "iteration-add").click()
    wait(driver, "iteration 1", lambda d: d.find_elements(By.CSS_SELECTOR, "tr[data-testid=iteration-row][data-iteration='1']"))
    driver.find_element(By.ID, "task-name").send_keys(TASK_NAME)
    driver.find_element(By.ID, "task-instructions").send_keys("Share a photo with a caption")
    driver.find_element(By.ID, "task-limit").send_keys("120")
    driver.find_element(By.ID, "task-path").send_keys("Timeline, Compose")
    driver.find_element(By.ID, "task-add").click()
    row = wait(driver, "the task's row", lambda d: next(iter(by_data(d, "tr[data-testid=task-row]", "task", TASK_NAME)), None))
    check("Timeline → Compose" in row.text and "observer" in row.text, f"the task's row lacks its criterion or path: {row.text!r}")
    attributes = driver.find_element(By.ID, "participant-attributes")
    attributes.send_keys("experience")  # no '=': refused here, naming it
    driver.find_element(By.ID, "participant-code").send_keys("P1")
    driver.find_element(By.ID, "participant-add").click()
    wait(driver, "the bad attribute refused", lambda d: '"experience" is not an attribute' in d.find_element(By.ID, "banner").text)
    attributes.send_keys("=novice")
    driver.find_element(By.ID, "participant-add").click()
    row = wait(driver, "the participant's row", lambda d: next(iter(by_data(d, "tr[data-testid=participant-row]", "participant", "P1")), None))
    check("experience=novice" in row.text, f"the participant's attributes are not shown: {row.text!r}")
    driver.find_element(By.ID, "question-id").send_keys("q1")
    driver.find_element(By.ID, "question-text").send_keys(QUESTION_TEXT)
    driver.find_element(By.ID, "question-add").click()
    wait(driver, "the question's row", lambda d: by_data(d, "tr[data-testid=question-row]", "question", "q1"))
    cell = "td[data-testid=cell][data-iteration='1'][data-participant='P1']"
    wait(driver, "the matrix cell of P1 in iteration 1", lambda d: d.find_elements(By.CSS_SELECTOR, cell + " [data-testid=questionnaire-link]"))
    not_pwned(driver)

    # --- A session in the study, started from the sessions page; its task marked on the live page.
    driver.get(BASE + "/")
    wait(driver, "the study in the start form", lambda d: any(
        option.get_attribute("value") == STUDY for option in d.find_elements(By.CSS_SELECTOR, "#start-study option")))
    Select(driver.find_element(By.ID, "start-study")).select_by_value(STUDY)
    wait(driver, "the study's iteration and participant", lambda d: d.find_element(By.ID, "start-participant").is_displayed()
         and d.find_element(By.ID, "start-participant").get_attribute("value") == "P1"
         and d.find_element(By.ID, "start-iteration").get_attribute("value") == "1")
    driver.find_element(By.ID, "start-button").click()
    study_session = wait(driver, "the study session's id", lambda d: d.find_element(By.ID, "start-result").get_attribute("data-session-id"))
    record = json.loads(js_fetch(driver, f"/api/sessions/{study_session}")["text"])["session"]
    check((record.get("study"), record.get("iteration"), record.get("participant")) == (STUDY, 1, "P1"),
          f"the session is not in the study: {record}")
    driver.get(f"{BASE}/sessions/{study_session}/live")
    task = wait(driver, "the task bar", lambda d: next(iter(by_data(d, "#task-bar [data-testid=task]", "task", TASK_NAME)), None))
    task.find_element(By.CSS_SELECTOR, "[data-testid=task-begin]").click()
    wait(driver, "the begin mark saved", lambda d: "begins" in d.find_element(By.ID, "task-status").text)
    Select(task.find_element(By.CSS_SELECTOR, "[data-testid=task-verdict]")).select_by_value("assisted")
    wait(driver, "the verdict saved", lambda d: "assisted" in d.find_element(By.ID, "task-status").text)
    wait(driver, "the marks in the live stream", lambda d: len(d.find_elements(By.CSS_SELECTOR, "#events [data-class=ObserverNote]")) >= 2, timeout=30)
    not_pwned(driver)
    screenshot(driver, "live-study")
    driver.find_element(By.ID, "stop-button").click()
    wait(driver, "the study session to stop", lambda d: d.find_element(By.ID, "session-state").text == "stopped")
    driver.get(f"{BASE}/sessions/{study_session}")
    wait(driver, "the study on the session's page", lambda d: d.find_element(By.CSS_SELECTOR, "#details [data-key=study]").text
         == f"{STUDY} · iteration 1 · participant P1")

    # --- The study page links the session; the questionnaire on a tablet.
    driver.get(f"{BASE}/study?name={STUDY}")
    wait(driver, "the session in the matrix", lambda d: by_data(d, cell + " [data-testid=session-link]", "session-id", study_session))
    screenshot(driver, "study")
    driver.set_window_size(768, 1024)
    driver.find_element(By.CSS_SELECTOR, cell + " [data-testid=questionnaire-link]").click()
    wait(driver, "the questionnaire's ten SUS statements", lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sus-items fieldset")) == 10)
    wait(driver, "the SEQ of the task", lambda d: by_data(d, "#seq-items fieldset", "item", "seq-" + TASK_NAME))

    def answer(item, value):
        field = by_data(driver, "fieldset[data-testid=item]", "item", item)[0]
        choice = next(label for label in field.find_elements(By.CSS_SELECTOR, "label.choice") if label.text == str(value))
        choice.click()
        return choice

    for k in range(1, 11):
        if k != 4:
            choice = answer(f"sus-{k}", 4 if k % 2 else 2)
    size = choice.find_element(By.TAG_NAME, "span").size
    check(size["height"] >= 44 and size["width"] >= 44, f"a rating button is smaller than a finger on a tablet: {size}")
    answer("seq-" + TASK_NAME, 6)
    by_data(driver, "textarea[data-testid=item]", "item", "q-q1")[0].send_keys("The <b>map</b> view")
    check(driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth"), "the questionnaire is wider than the tablet")
    driver.find_element(By.ID, "questionnaire-submit").click()
    wait(driver, "the incomplete questionnaire refused, naming item 4",
         lambda d: d.find_element(By.ID, "form-status").get_attribute("data-item") == "sus-4"
         and "item 4 has no answer" in d.find_element(By.ID, "form-status").text)
    check("missing" in by_data(driver, "fieldset[data-testid=item]", "item", "sus-4")[0].get_attribute("class"), "item 4 is not marked")
    check(not json.loads(js_fetch(driver, f"/api/studies/{STUDY}")["text"])["responses"]["sus"], "a refused questionnaire was stored")
    screenshot(driver, "questionnaire")
    answer("sus-4", 3)
    questionnaire_url = driver.current_url
    driver.find_element(By.ID, "questionnaire-submit").click()
    wait(driver, "the thank-you", lambda d: d.find_element(By.ID, "thanks").is_displayed())

    # A refusal by the server (here: a participant the study does not have) is shown with its message.
    driver.get(questionnaire_url.replace("participant=P1", "participant=P9"))
    wait(driver, "the questionnaire for P9", lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sus-items fieldset")) == 10)
    for k in range(1, 11):
        answer(f"sus-{k}", 3)
    answer("seq-" + TASK_NAME, 5)
    by_data(driver, "textarea[data-testid=item]", "item", "q-q1")[0].send_keys("x")
    driver.find_element(By.ID, "questionnaire-submit").click()
    wait(driver, "the server's refusal on the form", lambda d: 'has no participant "P9"' in d.find_element(By.ID, "form-status").text)
    check(not driver.find_element(By.ID, "thanks").is_displayed(), "a refused questionnaire said thank you")
    responses = json.loads(js_fetch(driver, f"/api/studies/{STUDY}")["text"])["responses"]
    check([r["items"] for r in responses["sus"]] == [[4, 2, 4, 3, 4, 2, 4, 2, 4, 2]], f"the SUS answers stored are not those given: {responses['sus']}")
    check([(r["task"], r["rating"]) for r in responses["seq"]] == [(TASK_NAME, 6)], f"the SEQ answer stored is wrong: {responses['seq']}")
    check([r["text"] for r in responses["answers"]] == ["The <b>map</b> view"], f"the free-text answer stored is wrong: {responses['answers']}")
    not_pwned(driver)
    driver.set_window_size(1280, 800)
    driver.get(f"{BASE}/study?name={STUDY}")
    wait(driver, "the questionnaire complete in the matrix", lambda d: d.find_elements(
        By.CSS_SELECTOR, cell + " [data-testid=questionnaire-state][data-complete=true]"))


if __name__ == "__main__":
    try:
        main()
    except CheckFailed as failure:
        print(f"FAIL: {failure}", file=sys.stderr, flush=True)
        sys.exit(1)
    except Exception:
        print("FAIL: the browser test broke:", file=sys.stderr)
        traceback.print_exc()
        sys.exit(1)
