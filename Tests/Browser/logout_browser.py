#!/usr/bin/python3
"""Logs in to the console (CONSOLE_LOGIN_URL), finds the logout control in the navigation, clicks it, and
checks that the login page shows, the cookie is cleared, and the old cookie, sent again, gets a 401 (the
login ended on the server). Run by Tests/IntegrationTests/ConsoleSecurityTests.swift; exits 1 on a failure."""

import os
import sys
import urllib.parse

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from chromium_driver import Checks, make_driver

check = Checks()
STATUS_OF_SESSIONS = "return fetch('/api/sessions', {credentials: 'same-origin'}).then(r => r.status)"


def main():
    login = os.environ["CONSOLE_LOGIN_URL"]
    base = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(login))
    driver = make_driver()
    try:
        driver.get(login)
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.ID, "sessions-body"))
        for page in ["/", "/studies", "/server"]:
            driver.get(base + page)
            button = WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "nav.topnav #logout"))[0]
            check(button.is_displayed() and button.text == "Log out", f"no visible logout control in {page}'s navigation")
        cookie = driver.get_cookie("mueval_console")
        check(cookie is not None, "logged in, but no cookie")
        check(driver.execute_script(STATUS_OF_SESSIONS) == 200, "logged in, but the API refuses")

        driver.find_element(By.ID, "logout").click()
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.ID, "login"))
        check(driver.get_cookie("mueval_console") is None, "the cookie is still there after logout")
        check(driver.execute_script(STATUS_OF_SESSIONS) == 401, "the API still answers after logout")
        # The old cookie, as a copy elsewhere would send it: the server ended its login.
        driver.add_cookie({"name": "mueval_console", "value": cookie["value"], "path": "/"})
        check(driver.execute_script(STATUS_OF_SESSIONS) == 401, "the old cookie still logs in")
        driver.get(base + "/")
        check(bool(driver.find_elements(By.ID, "login")), "the old cookie still opens the sessions page")
    finally:
        driver.quit()
    sys.exit(check.status)


if __name__ == "__main__":
    main()
