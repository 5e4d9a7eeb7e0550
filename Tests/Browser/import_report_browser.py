#!/usr/bin/python3
"""Opens the report of an imported IMUT session (muevalctl report) from file:// in Debian's headless
Chromium and checks that its timeline shows the log's view changes and sensor values as the log
describes them, the absolute values rebuilt from its deltas. Run by
Tests/IntegrationTests/ImportTests.swift with the report's index.html and the expectation as JSON:
{"views": [...], "sensors": {"backlight": ["brightness=0.5", ...], ...}}. Prints RESULT {json}
and exits 1 on a failure."""

import json
import os
import sys

from selenium.webdriver.support.ui import WebDriverWait

from chromium_driver import Checks, make_driver, open_file_page

check = Checks()

ROWS = """
return Array.from(document.querySelectorAll('tr[data-class]')).map(tr =>
  ({cls: tr.getAttribute('data-class'), cells: Array.from(tr.cells).map(td => td.textContent)}));
"""


def main():
    index = os.path.abspath(sys.argv[1])
    expected = json.loads(sys.argv[2])
    driver = make_driver(window_size="1280,900", page_load_timeout=60, extra_arguments=["--allow-file-access-from-files"])
    try:
        errors = open_file_page(driver, index)
        check(not errors, f"script errors: {errors}")
        WebDriverWait(driver, 30).until(lambda d: len(d.execute_script(ROWS)) > 0)
        rows = driver.execute_script(ROWS)
        views = [cell for row in rows if row["cls"] == "UserInterfaceEvent" for cell in row["cells"] if cell in expected["views"]]
        check(views == expected["views"], f"view changes in the timeline: {views}, expected {expected['views']}")
        found = {}
        for sensor, values in expected["sensors"].items():
            texts = [" ".join(row["cells"]) for row in rows if row["cls"] == "DeviceSensorEvent" and sensor in row["cells"]]
            shown = [value for text in texts for value in values if value in text.split()]
            found[sensor] = shown
            check(shown == values, f"{sensor} in the timeline: {shown}, expected {values} (rows: {texts})")
        page = driver.execute_script("return document.body.innerText")
        for view in expected["views"]:
            check(view in page, f"{view} not on the page")
        print("RESULT " + json.dumps({"rows": len(rows), "views": views, "sensors": found}), flush=True)
    finally:
        driver.quit()
    sys.exit(check.status)


if __name__ == "__main__":
    main()
