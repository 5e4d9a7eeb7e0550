#!/usr/bin/python3
"""The tester's pages on a phone: Debian's headless Chromium in device mode (390×844, touch, an iPhone's
user agent), driven through chromedriver, against a real muevald. Run by
Tests/IntegrationTests/PhoneBrowserTests.swift, one step per run (the Swift side recruits and lets the
phone join between them):

  phone_browser.py enrol URL                 consent, then the profile; RESULT {"code", "secret"}
  phone_browser.py invitation URL TASKS      the study, its tasks in order (TASKS: JSON list of names), SUS and SEQ
  phone_browser.py app URL LINK              the invitation page's "Open the study's app": its address LINK, followed;
                                             LINK "none": the page offers no such link
  phone_browser.py withdraw URL CODE SECRET  withdraws with "also delete my recordings"; RESULT {"deleted": [...]}
  phone_browser.py pool LOGIN_URL CODE       (a desktop, logged in) the pool page: the tester's answers as text, the QR code

Every page must fit the phone's width, load every asset from muevald and run no script a string brought
(MARKUP below, typed as a profile answer, and the study's own markup). Prints RESULT {json}; exits 1 on a failure.
"""

import json
import os
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from chromium_driver import PHONE, Checks, make_driver

check = Checks()
MARKUP = '<img src=x onerror="window.pwned=1"><b>Pixel 8</b>'


def wait(driver, what, condition, timeout=20):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: condition(d))
    except Exception:
        check(False, f"timed out waiting for {what}; banner: {banner(driver)}")
        raise


def banner(driver):
    return driver.execute_script("return document.getElementById('banner')?.textContent ?? ''")


def by_id(driver, element_id):
    return driver.find_element(By.ID, element_id)


def shown(driver, element_id):
    return driver.execute_script(f"const e = document.getElementById('{element_id}'); return !!e && e.offsetParent !== null")


def fits_the_phone(driver, page):
    """No sideways scrolling on a 390-pixel-wide screen; the script and assets came from muevald only."""
    width = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    check(width[0] <= width[1], f"{page} is wider than the phone: {width}")
    check(driver.execute_script("return navigator.maxTouchPoints") > 0, f"{page}: not a touch screen")
    foreign = driver.execute_script("""
        return performance.getEntriesByType('resource').map(r => r.name).filter(n => !n.startsWith(location.origin));""")
    check(not foreign, f"{page} loaded from elsewhere: {foreign}")
    check(driver.execute_script("return window.pwned === undefined"), f"{page} ran a string's script")
    errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE" and "favicon" not in entry["message"]
              and "status of 4" not in entry["message"]]
    check(not errors, f"{page}: script errors {errors}")


def enrol(driver, url):
    driver.get(url)
    wait(driver, "the consent text", lambda d: by_id(d, "consent-text").text.strip() != "")
    check("touches" in by_id(driver, "consent-text").text, "the lab's consent text is shown")
    check(by_id(driver, "consent-continue").get_attribute("disabled") is not None, "Continue works only after consent")
    check(not shown(driver, "profile-step"), "the profile comes after the consent step")
    by_id(driver, "consent-check").click()
    by_id(driver, "consent-continue").click()
    wait(driver, "the profile form", lambda d: shown(d, "profile-step"))
    fields = driver.find_elements(By.CSS_SELECTOR, "[data-testid=field]")
    check([field.get_attribute("data-field") for field in fields] == ["gender", "device"], "the lab's fields in order")
    Select(driver.find_element(By.CSS_SELECTOR, "[data-field=gender]")).select_by_value("female")
    driver.find_element(By.CSS_SELECTOR, "[data-field=device]").send_keys(MARKUP)
    fits_the_phone(driver, "the enrolment page")
    by_id(driver, "enrol-submit").click()
    wait(driver, "the tester's code and secret", lambda d: shown(d, "enrolled"))
    code, secret = by_id(driver, "tester-code").text, by_id(driver, "tester-secret").text
    check(code.startswith("T") and len(code) == 6, f"a tester code: {code!r}")
    check(len(secret) >= 12, "a withdrawal secret")
    check("Write this down" in driver.find_element(By.CSS_SELECTOR, ".writedown").text, "the secret is to be written down")
    return {"code": code, "secret": secret}


def invitation(driver, url, tasks):
    driver.get(url)
    wait(driver, "the study's name", lambda d: by_id(d, "study-name").text not in ("", "Your invitation"))
    description = by_id(driver, "study-description")
    check("<b>" in description.text and not description.find_elements(By.TAG_NAME, "b"), "the study's markup is text")
    shown_tasks = [item.find_element(By.TAG_NAME, "strong").text for item in driver.find_elements(By.CSS_SELECTOR, "#tasks > li")]
    check(shown_tasks == tasks, f"the tasks in order: {shown_tasks}")
    status = by_id(driver, "invitation-status").text
    check(status in ("accepted", "recording", "done"), f"the invitation's status: {status!r}")
    code = url.rstrip("/").split("/")[-1]
    check(by_id(driver, "invitation-code").text == code, "the code to enter in the app")
    wait(driver, "the questionnaire", lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-item=sus-10] input")) == 5)
    fits_the_phone(driver, "the invitation page")
    # An incomplete form is refused naming the item, on the phone as on the tablet.
    by_id(driver, "questionnaire-submit").click()
    wait(driver, "the refusal", lambda d: by_id(d, "form-status").get_attribute("data-item") == "sus-1")
    answers = [4, 2, 5, 1, 4, 2, 5, 1, 4, 2]
    for index, value in enumerate(answers):
        driver.find_element(By.CSS_SELECTOR, f"[data-item=sus-{index + 1}] input[value='{value}']").click()
    ratings = {}
    for number, task in enumerate(tasks):
        ratings[task] = 7 - number
        item = [node for node in driver.find_elements(By.CSS_SELECTOR, "fieldset[data-item]") if node.get_attribute("data-item") == f"seq-{task}"]
        item[0].find_element(By.CSS_SELECTOR, f"input[value='{ratings[task]}']").click()
    by_id(driver, "questionnaire-submit").click()
    wait(driver, "the thank-you", lambda d: shown(d, "thanks"))
    return {"sus": answers, "seq": ratings}


def app(driver, url, link):
    driver.get(url)
    code = url.rstrip("/").split("/")[-1]
    wait(driver, "the invitation's code", lambda d: by_id(d, "invitation-code").text == code)
    fits_the_phone(driver, "the invitation page")
    if link == "none":
        check(not shown(driver, "app-open"), "no study's app to open")
        check("Install the study's app" in by_id(driver, "app-step").text, "the step says to install the app")
        return {"link": None}
    check(shown(driver, "app-link"), "the link to the study's app is shown")
    button = by_id(driver, "app-link")
    check(button.text == "Open the study's app", f"the link's text: {button.text!r}")
    check(button.get_attribute("href") == link, f"the link: {button.get_attribute('href')!r}, not {link!r}")
    check("with your invitation code" in by_id(driver, "app-where").text, "where it leads")
    button.click()
    wait(driver, "the study's app", lambda d: d.current_url == link)
    return {"link": driver.current_url}


def withdraw(driver, url, code, secret):
    driver.get(url)
    wait(driver, "the withdrawal form", lambda d: shown(d, "withdraw-form"))
    fits_the_phone(driver, "the withdrawal page")
    by_id(driver, "withdraw-code").send_keys(code)
    by_id(driver, "withdraw-secret").send_keys(secret + "x")
    by_id(driver, "withdraw-submit").click()
    wait(driver, "a wrong secret refused", lambda d: "do not match" in by_id(d, "withdraw-status").text)
    by_id(driver, "withdraw-secret").clear()
    by_id(driver, "withdraw-secret").send_keys(secret)
    by_id(driver, "withdraw-recordings").click()
    by_id(driver, "withdraw-submit").click()
    wait(driver, "what was deleted", lambda d: shown(d, "withdrawn"))
    return {"deleted": [item.text for item in driver.find_elements(By.CSS_SELECTOR, "#deleted > li")]}


def pool(driver, login_url, code):
    driver.get(login_url)
    driver.get(login_url.split("/login")[0] + "/pool")
    wait(driver, "the tester's row", lambda d: d.find_elements(By.CSS_SELECTOR, f"tr[data-tester='{code}']"))
    row = driver.find_element(By.CSS_SELECTOR, f"tr[data-tester='{code}']")
    check(MARKUP in row.text and not row.find_elements(By.TAG_NAME, "img"), f"the tester's answer is text: {row.text!r}")
    check(driver.execute_script("return window.pwned === undefined"), "the pool page ran a tester's script")
    wait(driver, "the QR code", lambda d: d.execute_script("const i = document.getElementById('pool-qr'); return i.complete && i.naturalWidth > 0"))
    link = by_id(driver, "pool-link").text
    check("/enrol/" in link, f"the enrolment link: {link}")
    return {"link": link}


def main():
    mode, arguments = sys.argv[1], sys.argv[2:]
    desktop = mode == "pool"
    driver = make_driver(window_size="1280,900") if desktop else make_driver(window_size="390,844", mobile=PHONE)
    try:
        if mode == "enrol":
            result = enrol(driver, arguments[0])
        elif mode == "invitation":
            result = invitation(driver, arguments[0], json.loads(arguments[1]))
        elif mode == "app":
            result = app(driver, *arguments[:2])
        elif mode == "withdraw":
            result = withdraw(driver, *arguments[:3])
        else:
            result = pool(driver, *arguments[:2])
        if os.environ.get("SCREENSHOT_DIR"):
            driver.save_screenshot(os.path.join(os.environ["SCREENSHOT_DIR"], f"phone-{mode}.png"))
        print("RESULT " + json.dumps(result), flush=True)
    except Exception as error:  # the failure is the test's, with what the page said
        check(False, f"{mode}: {error!r}; banner: {banner(driver)}")
    finally:
        driver.quit()
    sys.exit(check.status)


if __name__ == "__main__":
    main()
