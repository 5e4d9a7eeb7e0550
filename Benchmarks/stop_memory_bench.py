#!/usr/bin/env python3
"""muevald's resident memory around the stop of sessions (issue 41): a fresh release muevald, SESSIONS sessions
(one by default), each with one connection sending EVENTS touch events (began/ended pairs on 40 views) spread
evenly from FIRST to LAST (device time, seconds since 1970), every event acknowledged; then `muevalctl stop --all`,
VmRSS sampled every 20 ms until every session's default report's index.html exists, and again 2, 5 and 10 s later.
Several sessions stopping together are reported a few at a time (`[reports] max_concurrent`), so the peak
should not grow with their number.

    Benchmarks/stop_memory_bench.py --muevald .build-release/release/muevald --muevalctl .build-release/release/muevalctl \
        --events 500000 --first 1700000000 --last 1700003600
    Benchmarks/stop_memory_bench.py ... --events 6 --first 0 --last 4102444800     # 1970 to 2100
    Benchmarks/stop_memory_bench.py ... --sessions 40 --events 12500               # 40 testers stop together

`--keep` leaves the data directory (its path is printed), to profile the report of the same file with
`muevalctl report`.
"""
import argparse
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

ACK = re.compile(rb"<ack><key>seq</key><integer>(\d+)</integer>")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def until(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"stop_memory_bench: {what} took over {seconds} s")
        time.sleep(0.02)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--muevald", required=True)
    parser.add_argument("--muevalctl", required=True)
    parser.add_argument("--events", type=int, default=500_000)
    parser.add_argument("--first", type=float, default=1_700_000_000)
    parser.add_argument("--last", type=float, default=1_700_003_600)
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="leave the data directory")
    arguments = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="mueval-stop-memory-")
    control = os.path.join(directory, "muevald.sock")
    port = free_port()
    daemon = subprocess.Popen([arguments.muevald, "--data-dir", os.path.join(directory, "data"), "--socket", control,
                               "--no-zeroconf", "--listen", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def megabytes(key):
        with open(f"/proc/{daemon.pid}/status") as status:
            for line in status:
                if line.startswith(key):
                    return int(line.split()[1]) // 1024
        return 0

    try:
        until(lambda: os.path.exists(control), 30, "muevald's start")
        count, span = arguments.events, arguments.last - arguments.first
        for tester in range(arguments.sessions):
            record(arguments, control, port, f"stop-memory-{tester}")
        time.sleep(1)
        before, recording = megabytes("VmRSS"), megabytes("VmHWM")
        started = time.monotonic()
        # Sampled from the command on: stopping many sessions (their indexes, their checkpoints) takes a while.
        stop = subprocess.Popen([arguments.muevalctl, "stop", "--socket", control, "--all"], stdout=subprocess.DEVNULL)
        reports = os.path.join(directory, "data", "reports")
        peak = 0

        def written():
            nonlocal peak
            peak = max(peak, megabytes("VmRSS"))
            return stop.poll() is not None and sum("index.html" in files for _, _, files in os.walk(reports)) >= arguments.sessions
        until(written, 600, "the reports")
        if stop.returncode != 0:
            raise SystemExit(f"stop_memory_bench: muevalctl stop failed ({stop.returncode})")
        seconds = time.monotonic() - started
        later = []
        for wait in (2, 3, 5):
            time.sleep(wait)
            later.append(megabytes("VmRSS"))
        sessions = f"{arguments.sessions} sessions of " if arguments.sessions > 1 else ""
        print(f"{sessions}{count} events over {span:.0f} s: RSS before the stop {before} MB (peak while recording {recording}); "
              f"peak after the stop {peak} MB sampled, VmHWM {megabytes('VmHWM')} MB; "
              f"{'reports' if arguments.sessions > 1 else 'report'} after {seconds:.2f} s; "
              f"RSS 2 / 5 / 10 s later {' / '.join(map(str, later))} MB")
    finally:
        daemon.terminate()
        daemon.wait()
        if arguments.keep:
            print(f"data directory kept: {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)


def record(arguments, control, port, name):
    """One session recorded by device NAME: started, its events sent and acknowledged, its connection closed."""
    subprocess.run([arguments.muevalctl, "start", "--socket", control, "--device", name], check=True,
                   stdout=subprocess.DEVNULL)
    device = socket.create_connection(("127.0.0.1", port))
    device.sendall(f"<hello><key>deviceId</key><string>{name}</string><key>appId</key><string>bench</string>"
                   "<key>screenWidth</key><real>390</real><key>screenHeight</key><real>844</real></hello>\n".encode())
    count, span = arguments.events, arguments.last - arguments.first
    batch = []
    for number in range(count):
        seconds = arguments.first + span * number / max(count - 1, 1)
        batch.append(f"<event><key>class</key><string>UserInputEvent</string><key>seq</key><integer>{number + 1}</integer>"
                     f"<key>timestamp</key><real>{seconds:.3f}</real><key>type</key><string>touch</string>"
                     f"<key>phase</key><string>{'began' if number % 2 == 0 else 'ended'}</string>"
                     f"<key>x</key><real>{100 + number % 50}</real><key>y</key><real>200</real>"
                     f"<key>view</key><string>View{number // 1000 % 40}</string></event>\n")
        if len(batch) == 1000 or number == count - 1:
            device.sendall("".join(batch).encode())
            batch = []
    received, acknowledged = b"", 0
    device.settimeout(120)
    while acknowledged < count:
        data = device.recv(1 << 20)
        if not data:
            raise SystemExit("stop_memory_bench: muevald closed the connection")
        received = received[-200:] + data
        acknowledged = max([acknowledged] + [int(seq) for seq in ACK.findall(received)])
    device.close()


if __name__ == "__main__":
    main()
