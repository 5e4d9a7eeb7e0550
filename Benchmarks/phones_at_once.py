#!/usr/bin/env python3
"""Phones at once (make bench; issue 52, item 4): P web phones against one muevald, as a lab's room of them.

A fresh muevald (`--unknown-devices auto`, `capture.web_require_code = false`, storage at the product's default,
`synchronous = full`: every group commit waits for the disk) and PHONES phones (the phones of Tests/Load/web_phone.py),
spread over ADDRESSES loopback addresses: each a WebSocket to the console's /capture sending RATE touch
events a second in 100 ms batches for SECONDS, dropping its socket once without a goodbye (a FIN, an RST or silence)
and resending on a new one what was not acknowledged, then a goodbye after its last ack. Every second muevald's CPU
(/proc/PID/stat), resident memory and its peak (VmRSS, VmHWM), open descriptors (/proc/PID/fd), bytes written
(/proc/PID/io) and the data disk's flush requests (/proc/diskstats, machine-wide) are sampled. The phones are
Benchmarks/Sources/webphones by default (the same phones in Swift with SwiftNIO, the same JSON summary, in a process of
their own, 0.2 cores at 500 phones), or with `--client python` Tests/Load/web_phones.py in this process (0.5 cores,
which it takes from muevald on a 2-core machine). After the goodbyes:
how long until every session is stopped and has its report, sampling `muevalctl status --json`'s `reports`. Then
what was stored, from the session files: each phone's seqs once, in how many sessions.

    (cd Benchmarks && swift build -c release --product webphones)
    Benchmarks/phones_at_once.py --muevald .build-release/release/muevald --muevalctl .build-release/release/muevalctl
    Benchmarks/phones_at_once.py --muevald .build/debug/muevald --muevalctl .build/debug/muevalctl --phones 100 --seconds 60
    Benchmarks/phones_at_once.py --client python --muevald .build-release/release/muevald --muevalctl .build-release/release/muevalctl
"""
import argparse, asyncio, collections, json, os, shutil, sqlite3, subprocess, sys, tempfile, threading, time

from benchkit import cpu_seconds, free_port, wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Load"))
import web_phones  # noqa: E402  (Tests/Load is no package)

# The Swift client as `cd Benchmarks && swift build -c release --product webphones` leaves it.
WEBPHONES = os.path.join(ROOT, "Benchmarks", ".build", "release", "webphones")
CLIENTS = {"python": "Python, one process", "swift": "Swift (SwiftNIO), one process, one event loop"}

CONFIG = """[server]
listen = "127.0.0.1:{port}"
unknown_device_policy = "auto"
[capture]
web_require_code = false
[console]
listen = "127.0.0.1:{console}"
max_connections = {console_connections}
[transcription]
enabled = false
{storage}"""


def start_muevald(options, directory, port, console):
    # console.max_connections (512 by default) counts every phone's socket, and a silently dropped one stays until
    # two unanswered pings: twice the phones is what a lab of that many phones sets.
    storage = "[storage]\n" + (f'synchronous = "{options.synchronous}"\n' if options.synchronous else "") + \
        (f"commit_delay_ms = {options.commit_delay_ms}\n" if options.commit_delay_ms is not None else "") + \
        (f"shared_sync = {options.shared_sync}\n" if options.shared_sync else "")
    config = os.path.join(directory, "muevald.toml")
    with open(config, "w") as f:
        f.write(CONFIG.format(port=port, console=console, console_connections=options.console_connections, storage=storage))
    process = subprocess.Popen([options.muevald, "--config", config, "--data-dir", os.path.join(directory, "data"),
                                "--socket", os.path.join(directory, "muevald.sock"), "--no-zeroconf"],
                               stdout=subprocess.DEVNULL, stderr=open(os.path.join(directory, "muevald.log"), "w"))
    wait_for(port)
    wait_for(console)
    return process


def disk_of(path):
    """The /proc/diskstats line name of the disk holding `path` (its partition's, or the whole disk's)."""
    device = os.stat(path).st_dev
    wanted = f"{os.major(device)}:{os.minor(device)}"
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if f"{fields[0]}:{fields[1]}" == wanted:
                return fields[2]
    return None


def disk_flushes(disk):
    """Flush requests the disk completed (field 15 of /proc/diskstats, kernels since 5.5), or None."""
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] == disk and len(fields) >= 18:
                return int(fields[17])
    return None


class Sampler(threading.Thread):
    """muevald's CPU seconds, RSS, peak RSS, descriptors, threads (a session's writer blocks one in its fsync) and
    bytes written, and the disk's flushes, every second."""

    def __init__(self, pid, disk):
        super().__init__(daemon=True)
        self.pid, self.disk, self.samples, self.stopping = pid, disk, [], threading.Event()

    def sample(self):
        status = dict(line.split(":", 1) for line in open(f"/proc/{self.pid}/status"))
        io = dict(line.split(":", 1) for line in open(f"/proc/{self.pid}/io"))
        return {"t": time.monotonic(), "cpu": cpu_seconds([self.pid]), "rss": int(status["VmRSS"].split()[0]) / 1024,
                "hwm": int(status["VmHWM"].split()[0]) / 1024, "fds": len(os.listdir(f"/proc/{self.pid}/fd")),
                "threads": int(status["Threads"]),
                "written": int(io["write_bytes"]), "flushes": disk_flushes(self.disk) if self.disk else None}

    def run(self):
        while not self.stopping.wait(1.0):
            try:
                self.samples.append(self.sample())
            except (FileNotFoundError, ProcessLookupError, KeyError):
                return

    def window(self, start, end):
        inside = [s for s in self.samples if start <= s["t"] <= end]
        return inside if len(inside) >= 2 else self.samples[-2:]


def status(options, directory):
    run = subprocess.run([options.muevalctl, "status", "--json", "--socket", os.path.join(directory, "muevald.sock")],
                         capture_output=True, text=True, timeout=60)
    return json.loads(run.stdout) if run.returncode == 0 else None


def sessions(options, directory):
    run = subprocess.run([options.muevalctl, "sessions", "--json", "--socket", os.path.join(directory, "muevald.sock")],
                         capture_output=True, text=True, timeout=60)
    return json.loads(run.stdout) if run.returncode == 0 else []


def drain(options, directory, devices):
    """Seconds from now until no session of the phones is open, the report queue is empty and every one of their
    sessions has its report (None if not within --report-timeout), the most reports seen waiting at once, and what was
    left. `status` once a second: each muevalctl run costs CPU that the reports being measured need."""
    start, peak = time.monotonic(), 0
    reports = os.path.join(directory, "data", "reports")
    while True:
        now = status(options, directory) or {}
        queue = now.get("reports") or {}
        peak = max(peak, queue.get("waiting", 0))
        unstopped = [s for s in now.get("sessions", []) if s.get("device") in devices]
        unreported = []
        if not unstopped and queue.get("waiting", 0) + queue.get("writing", 0) == 0:
            unreported = [s for s in sessions(options, directory) if s.get("device") in devices and
                          not os.path.exists(os.path.join(reports, str(s["id"]), "default", "index.html"))]
            if not unreported:
                return time.monotonic() - start, peak, unstopped, unreported
        if time.monotonic() - start > options.report_timeout:
            return None, peak, unstopped, unreported
        time.sleep(1)


def stored(listed, devices):
    """Per device: rows stored across its sessions, distinct seqs among them, and its sessions' count."""
    rows, seqs, count = collections.Counter(), collections.defaultdict(set), collections.Counter()
    for session in listed:
        if session.get("device") not in devices:
            continue
        count[session["device"]] += 1
        with sqlite3.connect(f"file:{session['path']}?mode=ro", uri=True) as db:
            for device, seq in db.execute("SELECT device, seq FROM events"):
                rows[device] += 1
                seqs[device].add(seq)
    return rows, seqs, count


def spread(samples, key):
    values = [(b[key] - a[key]) / (b["t"] - a["t"]) for a, b in zip(samples, samples[1:]) if b["t"] > a["t"]]
    return (sum(values) / len(values), max(values)) if values else (0.0, 0.0)


def report(options, summary, sampler, sending, drained, check):
    window = sampler.window(*sending)
    cpu, cpu_peak = spread(window, "cpu")
    written, _ = spread(window, "written")
    flushes = spread(window, "flushes") if all(s["flushes"] is not None for s in window) else None
    rows, seqs, count = check
    phones = summary["per_phone"]
    expected = {p["device"]: set(range(p["first_seq"], p["last_seq"] + 1)) for p in phones}
    once = sum(1 for p in phones if rows[p["device"]] == len(seqs[p["device"]]) and seqs[p["device"]] == expected[p["device"]])
    lost = sum(len(expected[d] - seqs[d]) for d in expected)
    twice = sum(rows[d] - len(seqs[d]) for d in expected)
    refusals = sum(r["count"] for r in summary["refusals"])
    late = summary["batch_lateness"]
    seconds, peak_waiting, unstopped, unreported = drained
    w, a = summary["latency_while_sending"], summary["latency_after_sending"]
    print(f"Phones at once (Benchmarks/phones_at_once.py: {summary['phones']} web phones from {options.addresses} loopback "
          f"addresses, each a WebSocket to /capture sending {options.rate:g} touch events/s in 100 ms batches for "
          f"{options.seconds:g} s, its socket dropped once without a goodbye ({options.drop}) and what was unacknowledged "
          f"sent again; storage.synchronous = {options.synchronous or 'full (default)'}"
          + (f", commit_delay_ms = {options.commit_delay_ms}" if options.commit_delay_ms is not None else "")
          + f", shared_sync = {options.shared_sync or 'true (default)'}"
          + f"; client: {CLIENTS[options.client]}):")
    print(f"  events made {summary['made']:,}, acknowledged {summary['acked']:,}, unacknowledged at the end "
          f"{summary['unacked']:,}; stored {sum(rows.values()):,} rows, lost {lost:,}, stored twice {twice:,}; "
          f"{once} of {len(phones)} phones with every seq stored exactly once")
    print(f"  ack latency (send→ack) while sending p50 / p99 / max {w.get('p50_ms', '-')} / {w.get('p99_ms', '-')} / "
          f"{w.get('max_ms', '-')} ms ({w['count']:,} events); after sending {a.get('p50_ms', '-')} / {a.get('p99_ms', '-')} / "
          f"{a.get('max_ms', '-')} ms ({a['count']:,})")
    print(f"  reconnects {summary['reconnects']:,}, events resent {summary['resent']:,}, upgrades refused {refusals:,}"
          + "".join(f"; {r['count']}× {r['status']} {r['body'][:80]!r} (Retry-After {r['retry_after']})" for r in summary["refusals"][:3])
          + (f"; connections failed {summary['failures']}" if summary["failures"] else "")
          + (f"; errors {summary['errors']}" if summary["errors"] else ""))
    per_device = collections.Counter(count[p["device"]] for p in phones)
    print(f"  sessions per device: " + ", ".join(f"{n} session{'s' if n != 1 else ''}: {k} devices" for n, k in sorted(per_device.items())))
    print(f"  muevald while sending: CPU {cpu:.2f} cores (busiest second {cpu_peak:.2f}), peak RSS {max(s['hwm'] for s in sampler.samples):.0f} MB "
          f"(VmHWM), peak descriptors {max(s['fds'] for s in sampler.samples):,}, peak threads {max(s['threads'] for s in sampler.samples):,}, written {written / 1e6:.1f} MB/s"
          + (f"; the data disk's flush requests {flushes[0]:,.0f}/s (busiest second {flushes[1]:,.0f}; machine-wide)" if flushes else ""))
    print(f"  client ({CLIENTS[options.client]}): CPU {summary['client_cpu_seconds'] / summary['wall_seconds']:.2f} cores over "
          f"{summary['wall_seconds']:g} s; its 100 ms batches late p99 / max {late.get('p99_ms', '-')} / {late.get('max_ms', '-')} ms")
    if seconds is not None:
        print(f"  report queue: every session stopped and reported {seconds:.1f} s after the phones finished "
              f"(at most {peak_waiting} reports waiting at once)")
    else:
        print(f"  report queue: NOT drained within {options.report_timeout:g} s after the phones finished: "
              f"{len(unstopped)} sessions not stopped ({collections.Counter(s['state'] for s in unstopped)}), "
              f"{len(unreported)} stopped without a report (at most {peak_waiting} waiting at once)")


def play(options, arguments, began):
    """The phones' run to its end: web_phones.py's summary (a dict), from either client."""
    if options.client == "python":
        return asyncio.run(web_phones.run_phones(web_phones.parse_arguments(arguments)))
    if not os.access(options.webphones, os.X_OK):
        raise SystemExit(f"no {options.webphones}: cd Benchmarks && swift build -c release --product webphones")
    # Its clock starts at this process's mark (CLOCK_MONOTONIC is one clock for both), so that the sampling window
    # below is the phones' own. Its progress lines go to stderr; exit 1 means unacknowledged events, still a summary.
    run = subprocess.run([options.webphones, *arguments, "--start-at", repr(began)], stdout=subprocess.PIPE, text=True,
                         timeout=options.ramp + options.seconds + 120 + 120)
    if run.returncode not in (0, 1):
        raise SystemExit(f"webphones exited with {run.returncode}")
    return json.loads(run.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--muevald", required=True)
    parser.add_argument("--muevalctl", required=True)
    parser.add_argument("--phones", type=int, default=500)
    parser.add_argument("--addresses", type=int, default=50)
    parser.add_argument("--rate", type=float, default=20)
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--ramp", type=float, default=10, help="phones connect at random moments within this many seconds")
    parser.add_argument("--drop", default="mixed", choices=["close", "reset", "silent", "mixed", "none"])
    parser.add_argument("--synchronous", default="", choices=["", "full", "normal", "off"], help="default: muevald's own")
    parser.add_argument("--shared-sync", default="", choices=["", "true", "false"], help="storage.shared_sync (default: muevald's own)")
    parser.add_argument("--commit-delay-ms", type=int, default=None, help="storage.commit_delay_ms (default: muevald's own, 0)")
    parser.add_argument("--console-connections", type=int, default=0, help="console.max_connections (default: 2 × phones + 64)")
    parser.add_argument("--report-timeout", type=float, default=600)
    parser.add_argument("--keep", action="store_true", help="leave the data directory and muevald's log (path printed)")
    parser.add_argument("--client", default="swift", choices=sorted(CLIENTS),
                        help="who plays the phones: Tests/Load/web_phones.py in this process, or the Swift webphones")
    parser.add_argument("--webphones", default=WEBPHONES, help="the Swift client's binary (--client swift)")
    options = parser.parse_args()
    options.console_connections = options.console_connections or 2 * options.phones + 64
    web_phones.raise_descriptor_limit()
    directory = tempfile.mkdtemp(prefix="phones-at-once-")
    daemon = None
    try:
        port, console = free_port(), free_port()
        daemon = start_muevald(options, directory, port, console)
        sampler = Sampler(daemon.pid, disk_of(directory))
        sampler.start()
        arguments = ["--port", str(console), "--phones", str(options.phones), "--addresses", str(options.addresses),
                     "--rate", str(options.rate), "--seconds", str(options.seconds), "--ramp", str(options.ramp),
                     "--drop", options.drop, "--drain-timeout", "120", "--progress", "30", "--device-prefix", "bench"]
        began = time.monotonic() + 0.5  # web_phones's own start
        summary = play(options, arguments, began)
        # While sending: from the last phone's start to the first phone's end, every phone at full rate.
        sending = (began + options.ramp, began + options.seconds)
        drained = drain(options, directory, {p["device"] for p in summary["per_phone"]})
        sampler.stopping.set()
        sampler.join()
        check = stored(sessions(options, directory), {p["device"] for p in summary["per_phone"]})
        report(options, summary, sampler, sending, drained, check)
        if options.keep:  # the raw figures beside muevald's log, for a look at one second or one phone
            with open(os.path.join(directory, "phones.json"), "w") as f:
                json.dump({"summary": summary, "samples": sampler.samples, "sending": sending}, f)
    finally:
        if daemon:
            daemon.terminate()
            daemon.wait(timeout=120)
        if options.keep:
            print(f"  (kept: {directory})", file=sys.stderr)
        else:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
