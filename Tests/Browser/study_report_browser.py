#!/usr/bin/python3
"""Opens a study report (muevalctl report --study) from file:// in Debian's headless Chromium and
checks that it renders: no script errors, its charts drawn (SVG bars with intervals), its heatmaps
painted, every section present, and each participant's session report reachable by its link.
Run by Tests/IntegrationTests/StudyEndToEndTests.swift; prints RESULT {json} and exits 1 on a failure."""

import json
import os
import sys

from selenium.webdriver.support.ui import WebDriverWait

from chromium_driver import Checks, make_driver, open_file_page

check = Checks()

# Painted pixels of every canvas (heatmaps are drawn by report.js onto canvases over screenshots).
CANVAS_PAINT = """
return Array.from(document.querySelectorAll('canvas')).map(canvas => {
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0;
  for (let i = 3; i < data.length; i += 4 * 7) if (data[i] > 0) painted++;
  return painted;
});
"""


def main():
    index = os.path.abspath(sys.argv[1])
    driver = make_driver(window_size="1280,900", page_load_timeout=60, extra_arguments=["--allow-file-access-from-files"])
    try:
        errors = open_file_page(driver, index)
        check(not errors, f"script errors: {errors}")
        check(driver.execute_script("return document.body.dataset.errors") in (None, "0"), "report.js counted errors")
        sections = driver.execute_script("return Array.from(document.querySelectorAll('section[id]')).map(s => s.id)")
        check(len(sections) >= 5, f"sections: {sections}")
        charts = driver.execute_script("""
            return Array.from(document.querySelectorAll('svg')).map(svg => {
              const box = svg.getBoundingClientRect();
              return {bars: svg.querySelectorAll('rect').length, lines: svg.querySelectorAll('line, path').length,
                      width: box.width, height: box.height};
            });""")
        drawn = [chart for chart in charts if chart["bars"] > 0 and chart["width"] > 0 and chart["height"] > 0]
        check(len(drawn) >= 3, f"charts drawn with bars: {len(drawn)} of {len(charts)}")
        check(any(chart["lines"] > 0 for chart in drawn), "no chart has interval whiskers")
        painted = driver.execute_script(CANVAS_PAINT)
        check(any(count > 0 for count in painted), f"no heatmap painted: {painted}")
        images = driver.execute_script("""
            return Array.from(document.images).filter(img => img.complete && img.naturalWidth === 0).map(img => img.src);""")
        check(not images, f"images that did not load: {images[:5]}")
        links = driver.execute_script("""
            return Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))
              .filter(href => href.startsWith('sessions/'));""")
        check(len(links) > 0, "no link into a session's report")
        if links:
            driver.get("file://" + os.path.join(os.path.dirname(index), links[0].split("#")[0]))
            WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")
            check("Usability report" in driver.title, f"the linked session report's title: {driver.title}")
        print("RESULT " + json.dumps({"sections": sections, "charts": len(drawn), "canvases": painted, "session_links": len(links)}),
              flush=True)
    finally:
        driver.quit()
    sys.exit(check.status)


if __name__ == "__main__":
    main()
