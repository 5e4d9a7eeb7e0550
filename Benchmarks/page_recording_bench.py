#!/usr/bin/env python3
"""Page recording (issue 55, make bench): what capture.js's `dom: true` costs a slow phone, what it stores, how fast the
console's replay seeks. 1. The page recording's modules (capture/page/) and the whole library, as muevald serves them,
gzipped (-9) each and summed. 2. A page of 3,000 elements in Chromium as a phone, CPU throttled 4×: the main thread's time
under the library's modules in a 100 µs sampling profile (web_capture_bench.library_seconds) and its longest unbroken
stretch, over the load and first view and snapshot, trusted touches, changes (a text, a class, a node, a frame apart) and
route changes (a view, with dom a snapshot), each until acknowledged; then, without the profiler, long tasks and the
library's scripts in long animation frames; with dom: true and without. 3. Examples/webnotes with dom=1 used for
--minutes (a tap every 3 s, a note every 15 s, the other view every 30 s): bytes per minute in its session file.
4. An hour of a synthetic web session (that page as a snapshot every 5 minutes, a change a second, a scroll every 2 s)
from a WebSocket device; the console's replay in Chromium seeks by its scrubber to --seeks seeded places, each timed
until #page-frame's data-at is there and a frame painted (page_replay_browser.SEEK), with the server's share.

    Benchmarks/page_recording_bench.py --muevald .build-release/release/muevald [--muevalctl …] [--minutes 2]
"""
import argparse, glob, gzip, json, os, pathlib, random, shutil, sqlite3, statistics, subprocess, sys, tempfile, time, urllib.request

from benchkit import BENCH_CONFIG, free_port, wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Browser"))
from page_replay_browser import PNG  # noqa: E402
from web_capture_bench import OBSERVE, is_library, library_modules, library_seconds  # noqa: E402

CARDS = 250  # × 12 elements
STYLE = "".join(f".card:nth-child({n}n) {{ border-left: {n}px solid hsl({n * 37 % 360} 60% 50%); }} " for n in range(2, 40)) + \
    "body { font: 15px system-ui; margin: 0 } .card { margin: 8px; padding: 8px; background: #fff; box-shadow: 0 1px 3px #0003 }"


def card(n):
    return (f'<article class="card" id="c{n}"><h3>Item {n}</h3><p class="desc">A sturdy thing, number {n}, for every day.</p>'
            f'<ul><li>Size {n % 5}</li><li>Colour {n % 7}</li><li>Stock {n % 11}</li></ul><div class="row"><span class="price">€ {n}.00</span>'
            f'<button type="button">Buy</button><a href="#c{n}">More</a></div><img alt="" width="32" height="32" src="pic.png"></article>')


PAGE = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Catalogue</title><style>{STYLE}</style></head><body><header><h1>Catalogue</h1><nav><a id="to-a" href="?view=a">A</a>
<a id="to-b" href="?view=b">B</a></nav></header><main id="cards" data-mueval-view="Catalogue">{''.join(card(n) for n in range(CARDS))}</main>
<script type="module">
const q = new URLSearchParams(location.search);
for (const a of document.querySelectorAll('nav a')) a.addEventListener('click', (e) => {{ e.preventDefault();
  document.getElementById('cards').dataset.muevalView = 'Catalogue ' + a.id; history.pushState({{}}, '', a.href); }});
window.change = (n) => {{ const c = document.getElementById('c' + (n % {CARDS})); c.querySelector('.price').textContent = '€ ' + n + '.50';
  c.classList.toggle('sale'); const li = document.createElement('li'); li.textContent = 'Seen ' + n; c.querySelector('ul').append(li); }};
const muEval = await import(new URL('/capture.js', q.get('server')));
window.benchCapture = await muEval.start({{ server: q.get('server'), appId: 'bench.page', dom: q.get('dom') === '1', overlay: false }});
</script></body></html>"""

# web_capture_bench's long tasks and frames, each script with its function and the layout it forced; and the page records
# the library sends (its WebSocket's text) and its views with their wireframes, so that a phase waits for them.
SENDS = OBSERVE.replace("invoker: s.invoker", "invoker: s.invoker, fn: s.sourceFunctionName, forced: s.forcedStyleAndLayoutDuration") + """
window.__sent = {DOMSnapshot: 0, DOMMutations: 0, views: 0, snapshotChars: 0};
const send = WebSocket.prototype.send, tokens = {DOMSnapshot: '<string>DOMSnapshot</string>', DOMMutations: '<string>DOMMutations</string>',
  views: '<key>screenshot</key>'};
let tail = '', open = null;  // a message may span text frames: tokens are looked for across their seams, a snapshot measured to its end
WebSocket.prototype.send = function (data) {
  if (typeof data === 'string') {
    const text = tail + data;
    for (const [key, token] of Object.entries(tokens))
      for (let i = text.indexOf(token); i >= 0; i = text.indexOf(token, i + 1)) if (i + token.length > tail.length) __sent[key]++;
    let from = 0;
    if (open === null && (from = data.indexOf(tokens.DOMSnapshot)) >= 0) open = 0;
    const end = open === null ? -1 : data.indexOf('</event>', from);
    if (end >= 0) { __sent.snapshotChars = Math.max(__sent.snapshotChars, open + end - from); open = null; }
    else if (open !== null) open += data.length - from;
    tail = data.slice(-40);
  }
  return send.call(this, data);
};
"""


def until(what, condition, seconds=120):
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise SystemExit(f"page_recording_bench: timed out waiting for {what}")
        time.sleep(0.25)  # few polls: each is a script on the measured main thread
    return value


def longest_stretch(profile):
    """The longest run of consecutive samples under the library's modules (ms): a task, or the part of one, it caused."""
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    url = {node["id"]: node["callFrame"]["url"] for node in profile["nodes"]}
    memo = {}

    def ours(node):
        if node not in memo:
            memo[node] = is_library(url[node]) or (node in parent and ours(parent[node]))
        return memo[node]

    best = run = 0
    for node, delta in zip(profile["samples"], profile["timeDeltas"]):
        run = run + delta if ours(node) else 0
        best = max(best, run)
    return best / 1000


def phone_cost(origin, server, dom, touches, changes, views, profile):
    """One run on the throttled phone: with `profile`, the library's main-thread seconds (and longest stretch) per phase;
    always the long tasks and long animation frames, with the time each phase began."""
    from chromium_driver import PHONE, make_driver
    from engines import Fingers
    driver = make_driver(window_size="390,844", mobile=PHONE)
    status = lambda: driver.execute_script("return globalThis.benchCapture?.status() ?? null")  # noqa: E731
    sent = lambda cls: driver.execute_script("return __sent[arguments[0]]", cls)  # noqa: E731
    drained = lambda: (s := status()) and s["connected"] and s["spooled"] == 0  # noqa: E731
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SENDS})
        driver.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": 4})
        if profile:
            driver.execute_cdp_cmd("Profiler.enable", {})
            driver.execute_cdp_cmd("Profiler.setSamplingInterval", {"interval": 100})
        result, fingers, began = {}, Fingers("chromium", driver), {}

        def phase(name, action, settled):
            began[name] = 0 if name == "load" else driver.execute_script("return performance.now()")
            if profile:
                driver.execute_cdp_cmd("Profiler.start", {})
            action()
            until(f"{name} recorded and acknowledged", lambda: settled() and drained())
            if profile:
                data = driver.execute_cdp_cmd("Profiler.stop", {})["profile"]
                result[name] = (library_seconds(data), longest_stretch(data))

        phase("load", lambda: driver.get(f"{origin}/page.html?server={server}&dom={int(dom)}"), lambda: sent("views") >= 1 and (not dom or sent("DOMSnapshot") >= 1))
        result["elements"] = driver.execute_script("return document.getElementsByTagName('*').length")
        phase("touches", lambda: [fingers.tap(195, 300 + 20 * (n % 10)) for n in range(touches)], lambda: True)
        before = sent("DOMMutations")
        phase("changes", lambda: [driver.execute_async_script("change(arguments[0]); requestAnimationFrame(() => arguments[1]())", n)
                                  for n in range(changes)], lambda: not dom or sent("DOMMutations") >= before + changes * 0.9)

        def route_changes():
            for n in range(views):
                count, shown = sent("DOMSnapshot"), sent("views")
                driver.execute_script("document.getElementById(arguments[0]).click()", "to-b" if n % 2 == 0 else "to-a")
                until("the route's view and snapshot sent", lambda: sent("views") > shown and (not dom or sent("DOMSnapshot") > count))
        phase("views", route_changes, lambda: True)
        result["long"], result["began"] = driver.execute_script("return window.__long"), began
        result["snapshotChars"] = driver.execute_script("return __sent.snapshotChars")
        return result
    finally:
        driver.quit()


def report_cost(on, off, quiet_on, quiet_off, touches, changes, views):
    print(f"Page recording in Chromium as a phone, CPU throttled 4× (Benchmarks/page_recording_bench.py: a page of {on['elements']} "
          "elements; main-thread time under capture.js and its modules in a 100 µs sampling profile, until acknowledged; "
          "with dom: true and without):")
    print(f"  page load and first snapshot ({on['snapshotChars'] / 1024:.0f} KB as sent): {on['load'][0] * 1000:.0f} ms, without "
          f"{off['load'][0] * 1000:.0f} ms; longest unbroken stretch {on['load'][1]:.1f} ms, without {off['load'][1]:.1f}")
    for name, count, what in [("touches", touches, "per touch"), ("changes", changes, "per change (a text, a class, a node)"),
                              ("views", views, "per route change (with dom a new snapshot)")]:
        print(f"  {what}: {on[name][0] / count * 1000:.2f} ms, without {off[name][0] / count * 1000:.2f} ms; longest stretch "
              f"{on[name][1]:.1f} ms, without {off[name][1]:.1f}")
    print("  Long tasks, in runs without the profiler (its sampling slows the page); the library's longest scripts in long animation "
          "frames, by module (the script's entry point: its invoker, function, and the style and layout it forced):")
    for label, run in [("with dom", quiet_on), ("without", quiet_off)]:
        phases = sorted(run["began"].items(), key=lambda item: item[1])
        where = lambda start: [n for n, t in phases if t <= start][-1]  # noqa: E731
        for name, _ in phases:
            tasks = [t["duration"] for t in run["long"]["tasks"] if where(t["start"]) == name]
            longest = {}
            for script in (s for f in run["long"]["frames"] if where(f["start"]) == name for s in f["scripts"] if is_library(s["url"])):
                module = script["url"].rsplit("/", 1)[-1]
                if script["duration"] > longest.get(module, {"duration": -1})["duration"]:
                    longest[module] = script
            top = sorted(longest.items(), key=lambda item: -item[1]["duration"])[:3]
            print(f"    {label}, {name}: long tasks over 50 ms {len(tasks)} (longest {max(tasks, default=0):.0f} ms); the library's: " +
                  ("; ".join(f"{m} {s['duration']:.0f} ms ({s['invoker']}, {s['fn'] or '?'}, {s['forced']:.0f} forced)" for m, s in top) or "none"))


def sizes(console):
    def packed(paths):
        return sum(len(gzip.compress(urllib.request.urlopen(f"http://127.0.0.1:{console}{path}", timeout=10).read(), 9)) for path in paths)
    every = library_modules()
    page = [p for p in every if p.startswith("/capture/page/")]
    print(f"Page recording's modules (capture/page/, {len(page)} files) gzipped (-9, each file on its own, summed): {packed(page) / 1024:.1f} KB; "
          f"the whole library with them ({len(every)} files): {packed(every) / 1024:.1f} KB")


def bytes_per_minute(origin, server, data, minutes):
    from chromium_driver import PHONE, make_driver
    from engines import Fingers
    driver = make_driver(window_size="390,844", mobile=PHONE)
    status = lambda: driver.execute_script("return globalThis.webnotesCapture?.status() ?? null")  # noqa: E731
    try:
        driver.get(f"{origin}/index.html?server={server}&dom=1")
        device = until("webnotes connected", lambda: (s := status()) and s["connected"] and s["deviceId"])
        fingers, start, n = Fingers("chromium", driver), time.monotonic(), 0
        centre = lambda id: driver.execute_script("const r = document.getElementById(arguments[0]).getBoundingClientRect();"  # noqa: E731
                                                  "return [r.x + r.width / 2, r.y + r.height / 2]", id)
        while time.monotonic() - start < minutes * 60:
            n += 1
            if n % 10 == 0:
                fingers.tap(*centre("to-search" if n % 20 == 0 else "to-list"))
            elif n % 5 == 0 and "search" not in driver.current_url:
                fingers.tap(*centre("note-text"))
                driver.find_element("id", "note-text").send_keys(f"Note {n} about the weekly shopping")
                fingers.tap(*centre("add-note"))
            else:
                fingers.tap(195, 500)
            time.sleep(3)  # the tester's pace, not a wait for something
        driver.execute_async_script("webnotesCapture.stop().then(arguments[0])")
    finally:
        driver.quit()
    for path in glob.glob(os.path.join(data, "sessions", "session-*.sqlite")):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        if not db.execute("SELECT 1 FROM events WHERE device = ? AND class = 'DOMSnapshot' LIMIT 1", (device,)).fetchone():
            continue
        span = db.execute("SELECT max(timestamp) - min(timestamp) FROM events").fetchone()[0] / 60
        dom = db.execute("SELECT count(*), sum(length(payload)) FROM events WHERE class LIKE 'DOM%'").fetchone()
        rest = db.execute("SELECT sum(length(payload)) FROM events WHERE class NOT LIKE 'DOM%'").fetchone()[0]
        css = db.execute("SELECT coalesce(sum(length(bytes)), 0) FROM blobs WHERE sha256 IN (SELECT DISTINCT json_extract(a.value, '$.$data') "
                         "FROM events, json_each(events.payload, '$.assets') AS a WHERE class LIKE 'DOM%')").fetchone()[0]
        shots = db.execute("SELECT coalesce(sum(length(bytes)), 0) FROM blobs").fetchone()[0] - css
        print(f"Webnotes with dom: true for {span:.1f} min (Benchmarks/page_recording_bench.py: a tap every 3 s, a note every 15 s, the other "
              f"view every 30 s): page records {dom[0]} ({(dom[1] + css) / span / 1024:.1f} KB/min with their stylesheets, {css / 1024:.1f} KB "
              f"of those once); the rest of the session {(rest + shots) / span / 1024:.1f} KB/min (wireframes {shots / span / 1024:.1f}); "
              f"the file {os.path.getsize(path) / span / 1024:.1f} KB/min")
        return
    print("Webnotes with dom: true: NOT MEASURED (no session file with its page records)")


def node(ids, tag, children=(), **attributes):
    return {"i": next(ids), "t": tag, "a": attributes, "c": list(children)}


def synthetic_hour(console, origin):
    """An hour of page records from one WebSocket device; returns its session's id (the welcome's)."""
    from websocket_client import WebSocket
    ids = iter(range(1, 10 ** 6))
    text = lambda x: {"i": next(ids), "x": x}  # noqa: E731
    cards = [node(ids, "article", [node(ids, "h3", [text(f"Item {n}")]), node(ids, "p", [text(f"A sturdy thing, number {n}")]),
                                   node(ids, "ul", [node(ids, "li", [text(f"Size {k}")]) for k in range(3)]),
                                   node(ids, "div", [node(ids, "span", [text(f"€ {n}.00")]), node(ids, "button", [text("Buy")]),
                                                     node(ids, "a", [text("More")], href=f"#c{n}")], **{"class": "row"}),
                                   node(ids, "img", width="32", height="32", alt="")], id=f"c{n}", **{"class": "card"}) for n in range(CARDS)]
    style = {"i": next(ids), "t": "style", "css": STYLE}
    body = node(ids, "body", [node(ids, "h1", [text("Catalogue")]), node(ids, "main", cards)])
    root = {"i": next(ids), "c": [node(ids, "html", [node(ids, "head", [style]), body])]}
    prices = [card["c"][3]["c"][0]["c"][0]["i"] for card in cards]
    device = WebSocket(f"ws://127.0.0.1:{console}/capture", origin=origin)
    device.send("<hello><key>deviceId</key><string>bench-hour</string><key>appId</key><string>bench.page</string></hello>\n")
    session = device.receive().split("<key>session</key><string>")[1].split("<")[0]
    start, seq, s, n, batch = time.time() - 3600, 0, 0, 0, []
    for second in range(3600):
        if second % 300 == 0:
            s, n = s + 1, 0
            records = [("DOMSnapshot", {"doctype": "html", "root": root, "viewport": {"w": 390, "h": 844, "o": "portrait"}, "scroll": []})]
        else:
            records = [("DOMMutations", {"text": [[prices[second % CARDS], f"€ {second}.50"]]})]
            if second % 2:
                records.append(("DOMScroll", {"scroll": [[root["i"], 0, second % 2000]]}))
        for cls, record in records:
            seq += 1
            dom = json.dumps({"s": s, "n": n, **record}).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            n += 1
            batch.append(f"<event><key>class</key><string>{cls}</string><key>seq</key><integer>{seq}</integer><key>timestamp</key>"
                         f"<real>{start + second + 0.001 * n:.3f}</real><key>dom</key><string>{dom}</string></event>\n")
        if len(batch) >= 100 or second == 3599:
            device.send("".join(batch))
            batch = []
            while f"<integer>{seq}</integer></ack>" not in device.receive():
                pass
    device.send("<goodbye/>")
    device.close()
    return session, seq


def seek_times(muevalctl, socket_path, console, origin, seeks):
    from page_replay_browser import SEEK, console_driver, open_replay
    session, records = synthetic_hour(console, origin)
    subprocess.run([muevalctl, "--socket", socket_path, "stop", session], capture_output=True)
    link = json.loads(subprocess.run([muevalctl, "--socket", socket_path, "console", "--json"], capture_output=True, text=True, check=True).stdout)["url"]
    driver = console_driver(link)
    try:
        open_replay(driver, link.split("/login")[0], session, 1800)
        first = driver.execute_script("return performance.getEntriesByName('replay-first-frame')[0]?.startTime ?? null")
        duration = float(driver.execute_script("return Number(document.getElementById('scrubber').max)"))
        rng, times = random.Random(1), []
        for _ in range(seeks):
            seek = driver.execute_async_script(SEEK, round(rng.uniform(0, duration), 2))
            times.append(10_000 if seek["late"] else seek["painted"])
        # The server's part: each answer of GET /api/sessions/ID/page, request to its first byte and to its last.
        answers = driver.execute_script("return performance.getEntriesByType('resource').filter(e => e.name.includes('/page?'))"
                                        ".map(e => [e.responseStart - e.requestStart, e.duration, e.encodedBodySize])")
    finally:
        driver.quit()
    times.sort()
    p90 = lambda values: sorted(values)[max(0, -(-len(values) * 9 // 10) - 1)]  # noqa: E731  (nearest rank)
    print(f"The console's replay of an hour of a web session (Benchmarks/page_recording_bench.py: {records} page records, a "
          f"{CARDS * 12}-element snapshot every 5 min; Chromium, not throttled): ?t= at half an hour, navigation to the page built "
          f"{first or 0:.0f} ms; {seeks} seeks by the scrubber to seeded places, until the page is there and painted: median "
          f"{statistics.median(times):.0f} ms, p90 {p90(times):.0f} ms, max {times[-1]:.0f} ms (goal 300); the server's "
          f"{len(answers)} answers (median {statistics.median(a[2] for a in answers) / 1024:.0f} KB): to the first byte median "
          f"{statistics.median(a[0] for a in answers):.0f} ms, p90 {p90([a[0] for a in answers]):.0f}, to the last median "
          f"{statistics.median(a[1] for a in answers):.0f} ms")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--muevald", required=True)
    parser.add_argument("--muevalctl", help="default: beside muevald")
    parser.add_argument("--touches", type=int, default=50)
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--views", type=int, default=4)
    parser.add_argument("--minutes", type=float, default=2)
    parser.add_argument("--seeks", type=int, default=20)
    args = parser.parse_args()
    muevalctl = args.muevalctl or os.path.join(os.path.dirname(args.muevald), "muevalctl")
    scratch = tempfile.mkdtemp(prefix="page-recording-bench-")
    daemon = web = None
    try:
        port, console, web_port = free_port(), free_port(), free_port()
        origin = f"http://127.0.0.1:{web_port}"
        site = os.path.join(scratch, "site")
        shutil.copytree(os.path.join(ROOT, "Examples", "webnotes"), site)
        pathlib.Path(site, "page.html").write_text(PAGE)
        pathlib.Path(site, "pic.png").write_bytes(PNG)
        config = pathlib.Path(scratch, "muevald.toml")
        config.write_text(BENCH_CONFIG.format(port=port, server="", more=f'[console]\nlisten = "127.0.0.1:{console}"\n'))
        socket_path = os.path.join(scratch, "muevald.sock")
        daemon = subprocess.Popen([args.muevald, "--config", config, "--data-dir", os.path.join(scratch, "data"), "--socket", socket_path,
                                   "--no-zeroconf", "--web-origin", origin, "--web-open"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        web = subprocess.Popen([sys.executable, "-m", "http.server", str(web_port), "--bind", "127.0.0.1", "--directory", site],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(console)
        wait_for(web_port)
        print(f"muevald measured: {os.path.relpath(os.path.realpath(args.muevald), ROOT)}")
        sizes(console)
        server = f"http://127.0.0.1:{console}"
        runs = [phone_cost(origin, server, dom, args.touches, args.changes, args.views, profile) for profile in [True, False] for dom in [True, False]]
        report_cost(*runs, args.touches, args.changes, args.views)
        bytes_per_minute(origin, server, os.path.join(scratch, "data"), args.minutes)
        seek_times(muevalctl, socket_path, console, origin, args.seeks)
    finally:
        for process in [web, daemon]:
            if process:
                process.terminate()
                process.wait(timeout=120)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
