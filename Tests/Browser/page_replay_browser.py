#!/usr/bin/python3
"""Page recording and its replay (issue 55) in real browsers against a real muevald, one step per run (each wait with a deadline), for
Tests/IntegrationTests/PageReplayBrowserTests.swift (RESULT {json} on stdout; exit 1 on a failure, each printed FAIL):
  serve DIR             DIR on a free loopback port, every request remembered with its Host (GET /__requests), /sentinel* a PNG
  phone ENGINE APP_URL  webnotes (APP_URL with ?server=, dom=1, pairing=, mask=) as a phone (Chromium: trusted DevTools touches;
                        WebKitGTK: mouse): NOTE typed and added (shown under data-mueval-mask), SEARCH typed, capture.stop()
  stored FILE SHOTS     the session file: no typed string in any table, column or byte (-wal too); the heading in a DOMSnapshot
  replay LOGIN ID SHOTS the console's replay in Chromium: #page-frame shows the heading and a button label at the snapshot;
                        screenshots in SHOTS; seeks timed until #page-frame's data-at is the time sought
  hostile LOGIN CODE ID APP_PORT  a WebSocket device of ours sends a page with script in every form and URLs of
                        http://localhost:APP_PORT (not in capture.web_origins): the replay runs nothing, opens no dialog, and
                        that origin gets no request, while the app's own origin (allowed) serves the sentinel images."""

import base64, functools, json, os, pathlib, sqlite3, sys, threading, time, urllib.parse, urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import engines

NOTE, SEARCH = "Quokka marmalade 4471", "marmalade"   # typed; the note is then shown in #notes, under data-mueval-mask
SHAPED = "Xxxxxx xxxxxxxxx 9999"                       # the note as the mask sends it
HEADING, BUTTON = "Webnotes", "Add"                    # text the default mask keeps: the h1, the add button's label
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL " + message, flush=True)


def serve(directory):
    seen = []

    class Handler(SimpleHTTPRequestHandler):
        log_message = lambda *arguments: None  # noqa: E731

        def do_GET(self):
            if self.path == "/__requests":
                return self.answer(json.dumps(seen).encode(), "application/json")
            seen.append([self.headers.get("Host", ""), self.path])
            return self.answer(PNG, "image/png") if self.path.startswith("/sentinel") else super().do_GET()

        def answer(self, body, kind):
            self.send_response(200)
            for name, value in [("Content-Type", kind), ("Content-Length", str(len(body))), ("Cache-Control", "no-store")]:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=directory))
    print(f"Serving HTTP on 127.0.0.1 port {server.server_address[1]} ...", flush=True)
    server.serve_forever()


# The snapshots the library sent since this first ran (its WebSocket's text messages, counted on their way out).
COUNT_SNAPSHOTS = """if (window.__snapshots === undefined) { window.__snapshots = 0; const send = WebSocket.prototype.send; WebSocket.prototype.send =
  function (data) { if (typeof data === 'string') __snapshots += data.split('<string>DOMSnapshot<').length - 1; return send.call(this, data); }; }
return __snapshots"""


def phone(engine, app_url):
    driver = engines.make_driver(engine)
    fingers = engines.Fingers(engine, driver)
    status = lambda: driver.execute_script("return globalThis.webnotesCapture?.status() ?? null")  # noqa: E731

    def tap(element_id):
        x, y = engines.wait_for(f"#{element_id} on screen", lambda: driver.execute_script(
            "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
            "return r.width ? [r.x + r.width / 2, r.y + r.height / 2] : null", element_id))
        fingers.tap(x, y)

    def typed(element_id, text):
        tap(element_id)
        engines.wait_for(f"#{element_id} focused", lambda: driver.execute_script("return document.activeElement?.id") == element_id)
        driver.find_element("id", element_id).send_keys(text)

    def route(element_id, view):  # a nav link tapped: the route pushed, its view shown, its snapshot sent
        sent = driver.execute_script(COUNT_SNAPSHOTS)
        tap(element_id)
        engines.wait_for(f"the {view} view", lambda: f"view={view}" in driver.current_url)
        engines.wait_for(f"the {view} view's snapshot sent", lambda: driver.execute_script(COUNT_SNAPSHOTS) > sent)

    try:
        driver.get(app_url)
        engines.wait_for("the capture connected", lambda: (status() or {}).get("connected"), timeout=60)
        driver.execute_script(COUNT_SNAPSHOTS)
        typed("note-text", NOTE)
        tap("add-note")
        engines.wait_for("the note in the list", lambda: NOTE in driver.execute_script("return document.getElementById('notes').textContent"))
        route("to-search", "search")
        typed("search-text", SEARCH)
        engines.wait_for("the note found", lambda: NOTE in driver.execute_script("return document.getElementById('results').textContent"))
        route("to-list", "list")
        final = driver.execute_async_script("webnotesCapture.stop({timeout: 20000}).then(arguments[0], e => arguments[0]({error: String(e)}))")
        check(final.get("spooled") == 0 and not final.get("error"), f"{engine}: everything acknowledged at the stop: {final}")
        return {"typed": [NOTE, SEARCH], "status": final}
    finally:
        driver.quit()


def walk(node):
    yield node
    for child in (node.get("c") or []) + ([node["r"]] if node.get("r") else []):
        yield from walk(child)


def stored(path, shots):
    secrets, found, places = [NOTE, SEARCH, "Quokka", "4471"], {}, []
    database = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    for (table,) in database.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        columns = [row[1] for row in database.execute(f'PRAGMA table_info("{table}")')]
        for row in database.execute(f'SELECT * FROM "{table}"'):
            places += [(f"{table}.{c}", v if isinstance(v, bytes) else str(v).encode()) for c, v in zip(columns, row)]
    for suffix in [s for s in ["", "-wal"] if os.path.exists(path + s)]:
        places.append(("the file's bytes" + suffix, pathlib.Path(path + suffix).read_bytes()))
    for where, data in places:
        for secret in [s for s in secrets if s.lower().encode() in data.lower()]:
            found.setdefault(secret, []).append(where)
    check(not found, f"typed or masked text stored: {found}")
    classes = dict(database.execute("SELECT class, count(*) FROM events WHERE class LIKE 'DOM%' GROUP BY class").fetchall())
    headings = 0
    for (payload,) in database.execute("SELECT payload FROM events WHERE class = 'DOMSnapshot'"):
        root = json.loads(json.loads(payload).get("dom") or "{}").get("root") or {}
        headings += any(n.get("t") == "h1" and any(c.get("x") == HEADING for c in n.get("c") or []) for n in walk(root))
    check(headings > 0, f"no DOMSnapshot has the heading {HEADING!r}: {classes}")
    shaped = database.execute("SELECT count(*) FROM events WHERE class LIKE 'DOM%' AND instr(payload, ?)", (SHAPED,)).fetchone()[0]
    check(shaped > 0, f"the note is recorded where it was, as its shape {SHAPED!r}: {classes}")
    if shots and (shot := database.execute("SELECT json_extract(payload, '$.screenshot.$data') AS s FROM events WHERE "
                                           "class = 'UserInterfaceEvent' AND s IS NOT NULL ORDER BY id LIMIT 1").fetchone()):
        os.makedirs(shots, exist_ok=True)
        pathlib.Path(shots, "wireframe.png").write_bytes(database.execute("SELECT bytes FROM blobs WHERE sha256 = ?", shot).fetchone()[0])
        print(f"SCREENSHOT the session's first wireframe: {os.path.join(shots, 'wireframe.png')}", flush=True)
    return {"classes": classes, "headings": headings, "shaped": shaped, "found": found, "fileBytes": os.path.getsize(path)}


# ---------------------------------------------------------------- the console

def console_driver(login):
    """Chromium at a laptop's size, logged in by the single-use link, with a second DevTools client of our own on its page
    (Page and Network events: dialogs opened, requests the page and its frames made)."""
    from chromium_driver import make_driver
    from websocket_client import WebSocket
    driver = make_driver(window_size="1280,900")
    host = driver.capabilities["goog:chromeOptions"]["debuggerAddress"]
    targets = json.loads(urllib.request.urlopen(f"http://{host}/json", timeout=10).read())
    socket = WebSocket(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"], timeout=None)
    driver.cdp = {"dialogs": [], "requests": [], "blocked": []}

    def listen():
        try:
            while message := json.loads(socket.receive()):
                method, params = message.get("method"), message.get("params", {})
                if method == "Page.javascriptDialogOpening":  # noted, and dismissed so that nothing waits on it
                    driver.cdp["dialogs"].append(params.get("message"))
                    socket.send(json.dumps({"id": 3, "method": "Page.handleJavaScriptDialog", "params": {"accept": False}}))
                elif method == "Network.requestWillBeSent":
                    driver.cdp["requests"].append(params["request"]["url"])
                elif method == "Network.loadingFailed" and params.get("blockedReason"):
                    driver.cdp["blocked"].append(params["blockedReason"])
        except Exception:  # the browser quit
            pass

    for number, method in enumerate(["Page.enable", "Network.enable"]):
        socket.send(json.dumps({"id": number, "method": method}))
    threading.Thread(target=listen, daemon=True).start()
    driver.get(login)
    wait(driver, "the sessions page after logging in", "return !!document.getElementById('sessions-body')")
    return driver


def wait(driver, what, script, *arguments, timeout=30):
    return engines.wait_for(what, lambda: driver.execute_script(script, *arguments), timeout=timeout)


FRAME = "const f = document.getElementById('page-frame'); "
FRAME_TEXT = FRAME + "return f?.dataset.applied ? f.contentDocument.body.innerText : null"

# A seek as the lab makes it (the scrubber set, its input and change events), timed in the page until #page-frame's
# data-at is the time sought (then the next frame painted), or 10 s.
SEEK = """const [value, done] = arguments, frame = document.getElementById('page-frame'), scrubber = document.getElementById('scrubber');
const t0 = Number(frame.dataset.at) - Number(document.getElementById('time').dataset.t);
scrubber.value = String(value);
const target = t0 + Number(scrubber.value), begun = performance.now(), timer = setTimeout(() => finish(true), 10000);
const reached = () => frame.dataset.applied && Math.abs(Number(frame.dataset.at) - target) < 0.002;
const observer = new MutationObserver(() => reached() && finish(false));
function finish(late) {
  observer.disconnect(); clearTimeout(timer);
  const ms = performance.now() - begun;
  requestAnimationFrame(() => requestAnimationFrame(() => done({ms, painted: performance.now() - begun, target, at: frame.dataset.at, late})));
}
observer.observe(frame, {attributes: true});
for (const type of ['input', 'change']) scrubber.dispatchEvent(new Event(type));
if (reached()) finish(false);"""


def open_replay(driver, base, session, t=None):
    driver.get(f"{base}/sessions/{session}/replay" + (f"?t={t:.2f}" if t is not None else ""))
    wait(driver, "the replay", "return document.body.dataset.ready === 'true'")
    return wait(driver, "the page built in #page-frame", FRAME_TEXT)


def replay(login, session, shots):
    base = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(login))
    os.makedirs(shots, exist_ok=True)
    driver = console_driver(login)
    try:
        first = driver.execute_async_script("fetch(arguments[0]).then(r => r.json()).then(arguments[1])",
                                            f"/api/sessions/{session}/page?after=0&until={time.time() + 60:.0f}")["records"][0]
        check(first["class"] == "DOMSnapshot", f"the session's first page record is a snapshot: {first['class']}")
        open_replay(driver, base, session)
        t0 = float(driver.execute_script(FRAME + "return Number(f.dataset.at) - Number(document.getElementById('time').dataset.t)"))
        duration = float(driver.execute_script("return Number(document.getElementById('scrubber').max)"))
        at = round(first["t"] - t0 + 0.01, 2)
        # The deep link (?t=) at the snapshot: from navigation to the page built (the replay's first-frame mark).
        text = open_replay(driver, base, session, at)
        deep = driver.execute_script("return performance.getEntriesByName('replay-first-frame')[0]?.startTime ?? null")
        print(f"SEEK ?t={at:.2f}: navigation to the page built in {deep:.0f} ms", flush=True)
        check(HEADING in text and BUTTON in text, f"the replayed page shows {HEADING!r} and {BUTTON!r} at the snapshot: {text!r}")
        check(NOTE not in text and SEARCH not in text, f"typed text in the replayed page: {text!r}")
        driver.save_screenshot(os.path.join(shots, "replay-console.png"))
        driver.find_element("id", "page-view").screenshot(os.path.join(shots, "replay-page.png"))
        seeks = [(value, driver.execute_async_script(SEEK, round(max(0, min(value, duration)), 2)))
                 for value in [duration / 2, 0, at, duration * 0.9, at + 0.5, duration]]
        for value, seek in seeks:
            check(not seek["late"], f"a seek to {value:.2f} s never showed the page there: {seek}")
            print(f"SEEK scrubber to {value:6.2f} s: data-at there after {seek['ms']:.1f} ms, painted after {seek['painted']:.1f} ms", flush=True)
        end_text = driver.execute_script(FRAME_TEXT)
        check(HEADING in end_text, f"the page at the end has the heading: {end_text!r}")
        driver.find_element("id", "page-view").screenshot(os.path.join(shots, "replay-page-end.png"))
        print("SCREENSHOT " + ", ".join(os.path.join(shots, n) for n in ["replay-console.png", "replay-page.png", "replay-page-end.png"]))
        check(not driver.cdp["dialogs"], f"dialogs opened: {driver.cdp['dialogs']}")
        return {"deepLinkMs": deep, "seeksMs": [s["ms"] for _, s in seeks], "paintedMs": [s["painted"] for _, s in seeks],
                "text": text, "endText": end_text, "duration": duration}
    finally:
        driver.quit()


# ---------------------------------------------------------------- a hostile page

def hostile_records(evil, app):
    """A snapshot with script in every form we could think of, then changes that try again; `evil`: an origin not in
    capture.web_origins (nothing may be fetched from it), `app`: the app's origin (allowed: its sentinel images load)."""
    ids = iter(range(1, 10_000))
    js = lambda how: f'top.__pwned=parent.__pwned=window.__pwned="{how}";alert("{how}")'  # noqa: E731
    el = lambda t, a=None, *c: {"i": next(ids), "t": t, "a": a or {}, "c": list(c)}  # noqa: E731
    tx = lambda x: {"i": next(ids), "x": x}  # noqa: E731
    css = (f"@import url({evil}/import.css); @import '{evil}/import2.css'; @font-face {{ font-family: evil; src: url({evil}/font.woff) }} "
           f"body {{ font-family: evil, sans-serif }} .bg {{ background: url({evil}/bg.png) }} .js {{ background: url('javascript:{js('css')}') }} "
           f".esc {{ background: u\\72l({evil}/escaped.png) }} .set {{ background-image: image-set('{evil}/set.png' 1x) }} "
           f".cursor {{ cursor: url({evil}/cursor.cur), auto }} .ok {{ width: 40px; height: 40px; background: url({app}/sentinel-css.png) }}")
    style, heading, shadow = {"i": next(ids), "t": "style", "css": css}, tx("Hostile page"), el("div", {"id": "host"})
    shadow["r"] = {"i": next(ids), "c": [el("script", {}, tx(js("shadow"))), el("img", {"src": f"{evil}/shadow.png", "onerror": js("shadow-img")})]}
    svg = el("svg", {"onload": js("svg"), "width": "40", "height": "40"}, el("script", {}, tx(js("svg-script"))),
             el("animate", {"attributeName": "href", "to": "javascript:" + js("animate")}),
             el("a", {"xlink:href": "javascript:" + js("xlink"), "href": "javascript:void(0)"}, el("circle", {"r": "10"})),
             el("image", {"href": f"{evil}/svg-image.png", "width": "10", "height": "10"}), el("use", {"href": f"{evil}/use.svg#x"}))
    body = el("body", {"onload": js("body")}, el("h1", {"onclick": js("h1")}, heading),
              el("img", {"src": "x", "onerror": js("onerror")}), el("img", {"src": f"{evil}/img.png", "alt": "evil"}),
              el("img", {"srcset": f"{evil}/srcset.png 1x"}), el("img", {"src": "data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>"}),
              el("img", {"id": "sentinel", "src": f"{app}/sentinel.png", "width": "20", "height": "20"}),
              el("div", {"class": "ok bg js esc set cursor", "id": "sentinel-css"}),
              el("a", {"href": "javascript:" + js("href"), "id": "js-link"}, tx("Open details")),
              el("a", {"href": "data:text/html,<script>alert(1)</script>", "ping": f"{evil}/ping"}, tx("data link")),
              el("iframe", {"srcdoc": f"<script>{js('srcdoc')}</script>", "src": f"{evil}/frame"}), svg,
              el("object", {"data": f"{evil}/object"}), el("embed", {"src": f"{evil}/embed"}),
              el("form", {"action": f"{evil}/form"}, el("input", {"type": "image", "src": f"{evil}/input.png", "formaction": f"{evil}/fa"}),
                 el("button", {"formaction": "javascript:" + js("formaction")}, tx("Send"))),
              el("div", {"style": f"width: 20px; height: 20px; background: url({evil}/style.png)"}),
              el("div", {"style": f"background-image: url(javascript:{js('style')})"}),
              el("video", {"poster": f"{evil}/poster.png", "src": f"{evil}/video.mp4", "autoplay": ""}), el("audio", {"src": f"{evil}/a.mp3", "autoplay": ""}),
              el("details", {"open": "", "ontoggle": js("toggle")}, el("summary", {}, tx("More"))), el("input", {"autofocus": "", "onfocus": js("focus")}),
              el("noscript", {}, el("img", {"src": f"{evil}/noscript.png"})), el("template", {}, el("img", {"src": f"{evil}/template.png"})),
              el("math", {}, el("maction", {"actiontype": "statusline"})), shadow, el("script", {}, tx(js("script"))), el("script", {"src": f"{evil}/s.js"}))
    head = el("head", {}, el("meta", {"http-equiv": "refresh", "content": f"0;url={evil}/refresh"}), el("base", {"href": f"{evil}/"}),
              el("link", {"rel": "stylesheet", "href": f"{evil}/link.css"}), el("link", {"rel": "preload", "as": "image", "href": f"{evil}/preload.png"}),
              el("link", {"rel": "icon", "href": f"{evil}/icon.png"}), el("link", {"rel": "prefetch", "href": f"{evil}/prefetch"}), style)
    viewport, h1, link, image = {"w": 390, "h": 844, "o": "portrait"}, body["c"][0]["i"], body["c"][7]["i"], body["c"][2]["i"]
    snapshot = {"s": 1, "n": 0, "doctype": "html", "root": {"i": next(ids), "c": [el("html", {"onload": js("html")}, head, body)]},
                "viewport": viewport, "scroll": [], "focus": None}
    change = {"s": 1, "n": 1, "rm": [], "add": [{"p": body["i"], "b": None, "n": el("script", {}, tx(js("added")))},
                                                {"p": body["i"], "b": None, "n": el("img", {"src": "y", "onerror": js("added-img")})}],
              "attr": [[h1, "onmouseover", js("attr")], [link, "href", "javascript:" + js("attr-href")], [image, "src", f"{evil}/changed.png"],
                       [h1, "style", f"background: url({evil}/attr-style.png)"]],
              "text": [[heading["i"], "Hostile page, changed"]], "css": [[style["i"], f"@import url({evil}/late.css); {css} h1 {{ color: #c00 }}"]]}
    return [("DOMSnapshot", snapshot), ("DOMMutations", change), ("DOMViewport", {"s": 1, "n": 2, **viewport})]


def hostile(login, code, session, app_port):
    from websocket_client import WebSocket
    base = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(login))
    evil, app = f"http://localhost:{app_port}", f"http://127.0.0.1:{app_port}"
    seen = lambda: json.loads(urllib.request.urlopen(f"{app}/__requests", timeout=10).read())  # noqa: E731
    earlier, hosts = len(seen()), {evil: evil.split("//")[1], app: app.split("//")[1]}
    requests = lambda host: [path for h, path in seen()[earlier:] if h == hosts[host]]  # noqa: E731
    escape = lambda s: s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # noqa: E731
    device = WebSocket(base.replace("http", "ws", 1) + "/capture", origin=app)
    device.send(f"<hello><key>deviceId</key><string>hostile-page</string><key>appId</key><string>hostile</string>"
                f"<key>pairing</key><string>{code}</string></hello>\n")
    check("<welcome>" in device.receive(), "the hostile device was welcomed")
    now, records = time.time(), hostile_records(evil, app)
    for seq, (cls, record) in enumerate(records, 1):
        device.send(f"<event><key>class</key><string>{cls}</string><key>seq</key><integer>{seq}</integer><key>timestamp</key>"
                    f"<real>{now + seq:.3f}</real><key>dom</key><string>{escape(json.dumps(record))}</string></event>\n")
    while f"<integer>{len(records)}</integer></ack>" not in device.receive():
        pass
    device.send("<goodbye/>")
    device.close()
    driver = console_driver(login)
    try:
        open_replay(driver, base, session, 3.0 + 0.5)
        text = wait(driver, "the change applied", FRAME_TEXT + " && f.contentDocument.body.innerText.includes('changed') && f.contentDocument.body.innerText")
        # The app's own origin is allowed (replay.remote_assets = web_origins): once its image and CSS background loaded,
        # the frame has asked for what it would ask for.
        wait(driver, "the allowed sentinel image shown", FRAME + "const i = f.contentDocument.getElementById('sentinel'); return i?.complete && i.naturalWidth > 0")
        engines.wait_for("the allowed sentinel images fetched", lambda: {"/sentinel.png", "/sentinel-css.png"} <= set(requests(app)))
        driver.execute_async_script("requestAnimationFrame(() => requestAnimationFrame(arguments[0]))")
        driver.find_element("id", "page-view").screenshot(shot := os.path.join(os.environ.get("TMPDIR", "/tmp"), f"page-replay-hostile-{os.getpid()}.png"))
        print(f"SCREENSHOT the hostile page replayed: {shot}", flush=True)
        pwned = driver.execute_script(FRAME + "return [window.__pwned ?? null, f.contentWindow.__pwned ?? null]")
        evil_requests = requests(evil)
        tried = [url for url in driver.cdp["requests"] if url.startswith(evil)]
        check(pwned == [None, None], f"script ran in the replay: window.__pwned = {pwned}")
        check(not driver.cdp["dialogs"], f"dialogs opened: {driver.cdp['dialogs']}")
        check(not evil_requests, f"the forbidden origin got requests: {evil_requests}")
        check("Hostile page" in text and "Open details" in text, f"the hostile page's text is shown: {text!r}")
        # The counting server does see a request to the forbidden origin when one is made: the check above could fail.
        driver.get(f"{evil}/probe")
        check("/probe" in requests(evil), f"the counting server saw the probe: {seen()}")
        print(f"the browser tried {len(tried)} URLs of the forbidden origin (blocked: {driver.cdp['blocked']}): {tried}", flush=True)
        return {"text": text, "tried": tried, "evilRequests": evil_requests, "dialogs": driver.cdp["dialogs"]}
    finally:
        driver.quit()


def main():
    mode, arguments = sys.argv[1], sys.argv[2:]
    if mode == "serve":
        return serve(arguments[0])
    try:
        result = {"phone": phone, "stored": stored, "replay": replay, "hostile": hostile}[mode](*arguments)
        print("RESULT " + json.dumps(result), flush=True)
    except Exception as error:  # the failure is the test's, with its message
        check(False, f"{mode}: {error!r}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
