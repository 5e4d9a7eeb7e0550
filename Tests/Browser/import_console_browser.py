#!/usr/bin/python3
"""Logs in to the console (CONSOLE_LOGIN_URL) and opens an imported session's page (SESSION_ID): its
details say which file it was imported from and why it was cut short (EXPECTED: a JSON list of texts
that must be there), with the file's name shown as text, never as markup. Run by
Tests/IntegrationTests/ImportTests.swift; prints RESULT {json} and exits 1 on a failure."""

import json
import os
import sys
import urllib.parse

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from chromium_driver import Checks, make_driver

check = Checks()


def main():
    login = os.environ["CONSOLE_LOGIN_URL"]
    base = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(login))
    expected = json.loads(os.environ["EXPECTED"])
    driver = make_driver()
    try:
        driver.get(login)
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.ID, "sessions-body"))
        driver.get(f"{base}/sessions/{os.environ['SESSION_ID']}")
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#details [data-key=imports]"))
        text = driver.find_element(By.CSS_SELECTOR, "#details [data-key=imports]").text
        for part in expected:
            check(part in text, f"{part!r} not in the session's 'Imported from': {text!r}")
        check(driver.execute_script("return window.__pwned") is None, "a file name ran as markup")
        check(not driver.find_elements(By.CSS_SELECTOR, "#details [data-key=imports] img"), "a file name became an element")
        print("RESULT " + json.dumps({"imports": text}), flush=True)
    finally:
        driver.quit()
    sys.exit(check.status)


if __name__ == "__main__":
    main()
