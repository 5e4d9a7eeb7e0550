#!/usr/bin/env python3
"""muEval for the web (make bench): what the library costs a slow phone, and what muevald's WebSocket endpoint
takes in next to its TCP port.

1. The library in Chromium as a phone with the CPU throttled 4× (Emulation.setCPUThrottlingRate), in
   Examples/webnotes served from a local origin: the main thread's time under the library (DevTools' sampling
   profiler, every stack with a frame of one of its modules, capture.js or capture/**, layout and canvas work
   it causes included) per trusted touch, per view change and idle; long tasks over 50 ms (PerformanceObserver
   longtask) and the long animation frames whose scripts include its modules; all its modules' size, raw and
   gzipped (-9) each, summed, as muevald serves them.
2. Ingest on loopback: the same pre-built XML batches of touch events sent as fast as acknowledgements allow,
   over a WebSocket to /capture (Tests/Browser/websocket_client.py, stdlib) and over the TCP port, from N
   connections each; events/s, and muevald's and this client's CPU seconds per 100,000 events for each (the
   client is Python: where its CPU nears the run's length, it is what limits the rate). Each run starts once
   muevald is idle again (the previous run's sessions stop and their reports are written when they leave).

    Benchmarks/web_capture_bench.py --muevald .build-release/release/muevald [--seconds 10] [--touches 100] [--views 40]
"""
import argparse, gzip, os, re, resource, shutil, socket, subprocess, sys, tempfile, threading, time, urllib.parse, urllib.request

from benchkit import BENCH_CONFIG, cpu_seconds, free_port, wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Browser"))
from websocket_client import WebSocket  # noqa: E402  (Tests/Browser is no package)

BATCH = 100       # events per write (one WebSocket text message, or one TCP write)
WINDOW = 8        # batches in flight per connection before waiting for an ack
ACK = re.compile(rb"<ack><key>seq</key><integer>(\d+)</integer></ack>")


def start_muevald(muevald, directory, port, console, web_origin):
    """A release muevald with BENCH_CONFIG, its console (and so /capture) on `console`, web devices without codes."""
    config = os.path.join(directory, "muevald.toml")
    with open(config, "w") as f:
        f.write(BENCH_CONFIG.format(port=port, server="", more=f'[console]\nlisten = "127.0.0.1:{console}"\n'))
    process = subprocess.Popen([muevald, "--config", config, "--data-dir", os.path.join(directory, "data"),
                                "--socket", os.path.join(directory, "muevald.sock"), "--no-zeroconf",
                                "--web-origin", web_origin, "--web-open"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(port)
    wait_for(console)
    return process


def hello(device):
    return (f"<hello><key>deviceId</key><string>{device}</string><key>appId</key><string>bench.web</string>"
            "<key>screenWidth</key><real>390</real><key>screenHeight</key><real>844</real></hello>\n")


def batch(first):
    """BATCH touch events (began/ended pairs on one button) numbered from `first`: the XML a web phone sends."""
    return "".join(
        f"<event><key>class</key><string>UserInputEvent</string><key>seq</key><integer>{seq}</integer>"
        f"<key>timestamp</key><real>{1.7e9 + seq / 1000:.3f}</real><key>type</key><string>touch</string>"
        f"<key>phase</key><string>{'began' if seq % 2 else 'ended'}</string><key>identifier</key><integer>{seq % 10}</integer>"
        f"<key>x</key><real>160.5</real><key>y</key><real>220.25</real><key>view</key><string>NoteList</string></event>\n"
        for seq in range(first, first + BATCH))


class TCPDevice:
    def __init__(self, port, device):
        self.socket = socket.create_connection(("127.0.0.1", port))
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.socket.sendall(hello(device).encode())
        self.pending = b""

    def send(self, text):
        self.socket.sendall(text.encode())

    def acked(self):
        """The highest seq of the acks read now (blocks for the next reply)."""
        data = self.socket.recv(65536)
        if not data:
            raise SystemExit("muevald closed a TCP connection")
        self.pending += data
        seqs = [int(seq) for seq in ACK.findall(self.pending)]
        self.pending = self.pending[self.pending.rfind(b"\n") + 1:]
        return max(seqs, default=0)

    def close(self):
        self.socket.sendall(b"<goodbye/>\n")
        self.socket.close()


class WebDevice:
    def __init__(self, url, origin, device):
        self.socket = WebSocket(url, origin=origin)
        self.socket.send(hello(device))

    def send(self, text):
        self.socket.send(text)

    def acked(self):
        return max((int(seq) for seq in ACK.findall(self.socket.receive().encode())), default=0)

    def close(self):
        self.socket.send("<goodbye/>")
        self.socket.close()


def ingest(connect, connections, seconds):
    """Each connection sends batches with at most WINDOW unacknowledged; returns (events acknowledged, seconds)."""
    acknowledged = [0] * connections
    deadline = time.monotonic() + seconds

    def run(index):
        device = connect(index)
        sent = 0
        while time.monotonic() < deadline or acknowledged[index] < sent:
            while time.monotonic() < deadline and sent - acknowledged[index] < WINDOW * BATCH:
                device.send(batch(sent + 1))
                sent += BATCH
            acknowledged[index] = max(acknowledged[index], device.acked())
        device.close()

    start = time.monotonic()
    threads = [threading.Thread(target=run, args=(index,)) for index in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(acknowledged), time.monotonic() - start


def client_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def quiet(daemon, seconds=180):
    """Waits until muevald has finished with the last run: each connection's automatic session stops when it
    leaves, and its report is written then, which on two cores would starve the next run (its handshakes)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        before = cpu_seconds([daemon.pid])
        time.sleep(1)
        if cpu_seconds([daemon.pid]) - before < 0.05:
            return
    raise SystemExit(f"muevald still busy {seconds} s after a run")


def ingest_table(daemon, port, console, origin, seconds):
    print(f"WebSocket ingest next to TCP (Benchmarks/web_capture_bench.py: {BATCH} touch events per message, {WINDOW} messages "
          f"in flight per connection, {seconds:g} s per run, loopback, one Python client process):")
    print("  connections  transport   events/s  muevald CPU s per 100k events  client CPU s per 100k events")
    run = 0
    for connections in [1, 4, 16]:
        results = {}
        for name in ["TCP", "WebSocket"]:
            run += 1
            prefix = f"bench-{run}-"
            if name == "TCP":
                connect = lambda index: TCPDevice(port, prefix + str(index))  # noqa: E731
            else:
                connect = lambda index: WebDevice(f"ws://127.0.0.1:{console}/capture", origin, prefix + str(index))  # noqa: E731
            quiet(daemon)
            before, client = cpu_seconds([daemon.pid]), client_seconds()
            acknowledged, elapsed = ingest(connect, connections, seconds)
            cpu, client = cpu_seconds([daemon.pid]) - before, client_seconds() - client
            results[name] = (acknowledged / elapsed, cpu / max(acknowledged, 1) * 100_000)
            print(f"  {connections:>11}  {name:<9} {results[name][0]:>9.0f}  {results[name][1]:>29.2f}  "
                  f"{client / max(acknowledged, 1) * 100_000:>27.2f}")
        print(f"  {connections:>11}  WS/TCP    {results['WebSocket'][0] / results['TCP'][0]:>8.2f}×  "
              f"{results['WebSocket'][1] / results['TCP'][1]:>28.2f}× muevald CPU per event")


# Collected from the page's first script on: long tasks, and long animation frames with the scripts that ran in them.
OBSERVE = """
window.__long = {tasks: [], frames: []};
new PerformanceObserver(list => { for (const e of list.getEntries()) __long.tasks.push({start: e.startTime, duration: e.duration}); })
  .observe({type: 'longtask', buffered: true});
try {
  new PerformanceObserver(list => { for (const e of list.getEntries()) __long.frames.push({start: e.startTime, duration: e.duration,
    scripts: e.scripts.map(s => ({url: s.sourceURL, duration: s.duration, invoker: s.invoker}))}); })
    .observe({type: 'long-animation-frame', buffered: true});
} catch (error) {}
"""


def is_library(url):
    """Whether `url` is one of the library's modules: /capture.js, or under /capture/ where the modules it imports
    are served (the WebSocket, /capture itself, is no script)."""
    path = urllib.parse.urlsplit(url or "").path
    return path == "/capture.js" or path.startswith("/capture/")


def library_modules():
    """The URL paths of the library's modules as muevald serves them: capture.js and every .js file under
    CaptureLibrary/Web/capture/ but hidden ones (Sources/CaptureServer/WebCaptureLibrary.swift)."""
    web = os.path.join(ROOT, "CaptureLibrary", "Web")
    paths = ["/capture.js"]
    for folder, folders, files in os.walk(os.path.join(web, "capture")):
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        paths += sorted("/" + os.path.relpath(os.path.join(folder, name), web).replace(os.sep, "/")
                        for name in files if name.endswith(".js") and not name.startswith("."))
    return paths


def library_seconds(profile):
    """Seconds of a DevTools CPU profile whose stack holds a frame of one of the library's modules: its main-thread
    time, what it calls into the browser for (layout, style, canvas) included, the app's own code not."""
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    ours = {node["id"] for node in profile["nodes"] if is_library(node["callFrame"]["url"])}
    inside = {}

    def counts(node):
        if node not in inside:
            inside[node] = node in ours or (node in parent and counts(parent[node]))
        return inside[node]

    # timeDeltas[i] is the time from sample i-1 to sample i: it belongs to what sample i found running.
    return sum(delta for node, delta in zip(profile["samples"], profile["timeDeltas"]) if counts(node)) / 1e6


def measure(url, touches, views, idle):
    """webnotes with the library on a 4×-throttled phone, sampled every 100 µs: the library's seconds while idle for
    `idle` s, over `touches` trusted taps and over `views` route changes, each phase until its events are
    acknowledged; and the long tasks and frames seen meanwhile."""
    from chromium_driver import PHONE, make_driver
    from webcapture_browser import Fingers, drained
    driver = make_driver(window_size="390,844", mobile=PHONE)
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVE})
        driver.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": 4})
        driver.execute_cdp_cmd("Profiler.enable", {})
        driver.execute_cdp_cmd("Profiler.setSamplingInterval", {"interval": 100})
        driver.get(url)
        settle = lambda: _until(lambda: drained(driver), 60)  # noqa: E731
        settle()
        started = driver.execute_script("return performance.now()")  # what comes before is the page's load
        fingers = Fingers(driver)

        def phase(action):
            driver.execute_cdp_cmd("Profiler.start", {})
            action()
            settle()
            return library_seconds(driver.execute_cdp_cmd("Profiler.stop", {})["profile"])

        spent = {
            "idle": phase(lambda: time.sleep(idle)),  # the library's own background work (frame timing, heartbeat)
            # An inert place to tap: the app does nothing there, the library sees a whole touch.
            "touches": phase(lambda: [fingers.tap("#notes") for _ in range(touches)]),
            "views": phase(lambda: [driver.execute_script(f"document.getElementById('{'to-search' if n % 2 == 0 else 'to-list'}').click()")
                                    for n in range(views)]),
        }
        return spent, driver.execute_script("return window.__long"), started
    finally:
        driver.quit()


def _until(condition, seconds):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("the library did not empty its spool in time")
        time.sleep(0.25)  # few polls: each is a script on the measured main thread


def library_cost(url, touches, views, idle=5.0):
    try:
        import selenium  # noqa: F401
    except ImportError:
        print("the library's cost in Chromium: NOT MEASURED (no selenium for this python; apt-get install python3-selenium)")
        return
    spent, long, started = measure(url, touches, views, idle)
    print(f"muEval for the web in Chromium as a phone, CPU throttled 4× (Benchmarks/web_capture_bench.py, Examples/webnotes; main-thread "
          f"time under capture.js and its modules in a 100 µs sampling profile, until acknowledged):")
    print(f"  per touch (touchstart, touchend, gesture, spool, send; {touches} taps)       {spent['touches'] / touches * 1000:6.2f} ms")
    print(f"  per view change (UI tree, wireframe, spool, send; {views} changes)      {spent['views'] / views * 1000:6.2f} ms")
    print(f"  idle (frame timing, heartbeat; {idle:g} s)                              {spent['idle'] / idle * 100:6.2f} % of the main thread")
    for name, during in [("while loading (the module, start())", lambda e: e["start"] < started),
                         ("while measured", lambda e: e["start"] >= started)]:
        tasks = [task["duration"] for task in long["tasks"] if during(task)]
        ours = [script for frame in long["frames"] if during(frame) for script in frame["scripts"] if is_library(script["url"])]
        print(f"  {name}: long tasks over 50 ms {len(tasks)} (longest {max(tasks, default=0):.0f} ms); long animation frames running "
              f"the library {len(ours)}, its longest script in them {max((s['duration'] for s in ours), default=0):.0f} ms"
              + (f" ({max(ours, key=lambda s: s['duration'])['invoker']})" if ours else ""))


def module_size(console):
    """What a page downloads of the library: every module as muevald serves it, raw and gzipped (-9) each on its
    own (as a server compresses each answer), summed."""
    paths = library_modules()
    raw = packed = 0
    for path in paths:
        try:
            source = urllib.request.urlopen(f"http://127.0.0.1:{console}{path}", timeout=10).read()
        except OSError as error:
            print(f"capture.js and its modules: NOT MEASURED, muevald does not serve {path} ({error})")
            return
        raw += len(source)
        packed += len(gzip.compress(source, 9))
    print(f"capture.js and its {len(paths) - 1} modules as muevald serves them, all together: {raw / 1024:.1f} KB, "
          f"{packed / 1024:.1f} KB gzipped (-9, each file on its own, summed)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--muevald", required=True)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--touches", type=int, default=100)
    parser.add_argument("--views", type=int, default=40)
    parser.add_argument("--skip-browser", action="store_true", help="only the ingest (no Chromium here)")
    parser.add_argument("--skip-ingest", action="store_true", help="only the library in the browser (an A/B of two libraries)")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="web-capture-bench-")
    daemon = web = None
    try:
        port, console, web_port = free_port(), free_port(), free_port()
        origin = f"http://127.0.0.1:{web_port}"
        daemon = start_muevald(args.muevald, scratch, port, console, origin)
        module_size(console)
        if not args.skip_browser:
            web = subprocess.Popen([sys.executable, "-m", "http.server", str(web_port), "--bind", "127.0.0.1",
                                    "--directory", os.path.join(ROOT, "Examples", "webnotes")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for(web_port)
            library_cost(f"{origin}/?server=http://127.0.0.1:{console}", args.touches, args.views)
        if not args.skip_ingest:
            ingest_table(daemon, port, console, f"http://127.0.0.1:{console}", args.seconds)
    finally:
        for process in [web, daemon]:
            if process:
                process.terminate()
                process.wait(timeout=120)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
