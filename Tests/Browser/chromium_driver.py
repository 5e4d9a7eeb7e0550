"""Debian's headless Chromium through chromedriver, as every browser test script here drives it."""

import atexit
import os
import shutil
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait


# A phone as Chromium's device mode emulates it: an iPhone-sized touch screen and a mobile Safari user agent.
PHONE = {
    "deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 3.0, "touch": True, "mobile": True},
    "userAgent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                 "Version/17.5 Mobile/15E148 Safari/604.1",
}


def make_driver(window_size="1280,800", page_load_timeout=30, extra_arguments=(), mobile=None):
    """`mobile`: a mobileEmulation dictionary (PHONE) for a phone-sized touch browser."""
    options = webdriver.ChromeOptions()
    if mobile:
        options.add_experimental_option("mobileEmulation", mobile)
    options.binary_location = "/usr/bin/chromium"
    # The browser's profile (2.5 MB) goes with it: when the driver quits, else when the script ends.
    profile = tempfile.mkdtemp(prefix='mueval-chromium-')
    atexit.register(shutil.rmtree, profile, True)
    for argument in ["--headless=new", f"--window-size={window_size}", "--disable-dev-shm-usage",
                     "--no-first-run", "--disable-extensions", "--disable-gpu",
                     f"--user-data-dir={profile}", *extra_arguments]:
        options.add_argument(argument)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    quit_browser = driver.quit

    def quit_and_remove_profile():
        try:
            quit_browser()
        finally:
            shutil.rmtree(profile, ignore_errors=True)

    driver.quit = quit_and_remove_profile
    driver.set_page_load_timeout(page_load_timeout)
    driver.set_script_timeout(30)
    return driver


class Checks:
    """What a script found wrong: each failure printed as it is found, the exit status at the end."""

    def __init__(self):
        self.failures = []

    def __call__(self, condition, message):
        if not condition:
            self.failures.append(message)
            print("FAIL " + message, flush=True)

    @property
    def status(self):
        return 1 if self.failures else 0


def open_file_page(driver, path):
    """Loads a file:// page (a report) and returns its script errors (favicon requests aside)."""
    driver.get("file://" + os.path.abspath(path))
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")
    return [entry["message"] for entry in driver.get_log("browser")
            if entry["level"] == "SEVERE" and "favicon" not in entry["message"]]
