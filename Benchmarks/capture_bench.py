#!/usr/bin/env python3
"""The capture library (make bench): what one client sustains, and what it keeps while no server answers.

1. One library client into muevald (release, loopback, storage.synchronous = normal): plainnote,
   whose events cost nothing to make, records 160,000 at once; events/s until stopCapture returns,
   and the CPU per event of muevald and of the app, so that it shows which side is the limit.
   (muevalsim's figures elsewhere in BENCHMARKS.md are library clients too, with the simulator's
   scenario playing and screenshot rendering on top.)
2. Ten minutes of a tester at 50 events/s (30,000 Wordpress events: views with screenshots, touches,
   text, sensors) recorded while no server answers, with a spool, compressed into a minute (the queue
   and the spool hold the same whatever the pace): the client's peak RSS and the spool's size; then
   a server comes and the next start delivers the backlog: how long that takes, and that every event
   is stored once.

3. What a minimal client adds to an app: the size of plainnote (Examples/plainnote, which links the
   library alone), stripped, and the library's lines of Swift.

    Benchmarks/capture_bench.py --muevald .build-release/release/muevald --muevalsim .build-release/release/muevalsim \
        --plainnote .build-release/release/plainnote
"""
import argparse, json, os, resource, shutil, sqlite3, subprocess, tempfile, time

from benchkit import cpu_seconds, free_port, start_muevald


def simulate(muevalsim, port, *arguments):
    """One muevalsim run: its JSON report, seconds, and (user+system CPU seconds, peak RSS MB)."""
    start = time.monotonic()
    process = subprocess.Popen([muevalsim, "--connect", f"127.0.0.1:{port}", "--seed", "1", "--json", *arguments],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = process.communicate()
    elapsed = time.monotonic() - start
    try:
        report = json.loads(out)
    except ValueError:
        raise SystemExit(f"muevalsim failed: {(err + out).decode()[-800:]}")
    return report, elapsed


def children_usage():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def throughput(args, scratch):
    """plainnote records its notes as fast as it can: what the library sustains when the app costs nothing."""
    port = free_port()
    daemon = start_muevald(args.muevald, scratch, "data", port)
    try:
        notes = 20_000
        events = 2 + 8 * notes
        before_daemon = cpu_seconds([daemon.pid])
        before_client, _ = children_usage()
        start = time.monotonic()
        run = subprocess.run([args.plainnote, "--connect", f"127.0.0.1:{port}", "--notes", str(notes), "--device-id", "bench-plainnote"],
                             capture_output=True, text=True)
        elapsed = time.monotonic() - start
        if run.returncode != 0 or "unacknowledged 0" not in run.stdout:
            raise SystemExit(f"plainnote failed: {(run.stderr + run.stdout)[-800:]}")
        daemon_cpu = cpu_seconds([daemon.pid]) - before_daemon
        client_cpu = children_usage()[0] - before_client
        print(f"One capture library client into muevald (capture_bench.py: plainnote --notes {notes:,}, {events:,} events recorded at once and "
              f"delivered until stopCapture returns, loopback, storage.synchronous = normal): {events / elapsed:,.0f} events/s; "
              f"CPU per event: muevald {daemon_cpu / events * 1e6:.1f} µs, the app with the library {client_cpu / events * 1e6:.1f} µs")
    finally:
        daemon.terminate()
        daemon.wait()


def offline(args, scratch):
    spool = os.path.join(scratch, "spool")
    dead = free_port()  # nothing listens there
    events = 30_000
    common = ["--scenario", "wordpress", "--buffer", "100000", "--spool", spool]
    # The peak RSS of children is the largest child's so far: the simulator alone (100 events) first,
    # then the 30,000.
    subprocess.run([args.muevalsim, "--connect", f"127.0.0.1:{dead}", "--seed", "2", "--events", "100", "--rate", "max",
                    "--ack-timeout", "0", "--scenario", "wordpress"], capture_output=True)
    _, baseline = children_usage()
    start = time.monotonic()
    process = subprocess.Popen([args.muevalsim, "--connect", f"127.0.0.1:{dead}", "--seed", "1", "--json", "--events", str(events),
                                "--rate", "500", "--ack-timeout", "0", *common], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, _ = process.communicate()
    recording = time.monotonic() - start
    _, peak = children_usage()
    report = json.loads(out)["devices"][0]
    size = sum(os.path.getsize(os.path.join(spool, name)) for name in os.listdir(spool))
    print(f"Ten minutes at 50 events/s with no server (capture_bench.py: {events:,} Wordpress events, recorded in {recording:.0f} s "
          f"at 500 events/s, --spool): client peak RSS {peak:.0f} MB (muevalsim with 100 events: {baseline:.0f} MB), spool {size / 1e6:.1f} MB "
          f"({size / events:.0f} bytes per event), {report['unacknowledged']:,} pending, 0 dropped" if report["unacknowledged"] == events
          else f"offline run: {report}")

    port = free_port()
    daemon = start_muevald(args.muevald, scratch, "data", port)
    try:
        report, elapsed = simulate(args.muevalsim, port, "--events", "1", "--rate", "max", *common)
        device = report["devices"][0]
        stored = 0
        # Session files only (DATA/sessions/): the catalog and the tester pool are SQLite files too.
        for directory, _, names in os.walk(os.path.join(scratch, "data", "sessions")):
            for name in names:
                if name.endswith(".sqlite"):
                    with sqlite3.connect(os.path.join(directory, name)) as db:
                        stored += db.execute("select count(distinct seq) from events").fetchone()[0]
        print(f"  then a server: the next start delivered the backlog and its one new event in {elapsed:.1f} s "
              f"({device['acknowledged']:,} acknowledged, {stored:,} distinct seqs stored)")
    finally:
        daemon.terminate()
        daemon.wait()


def footprint(args, scratch):
    stripped = os.path.join(scratch, "plainnote")
    shutil.copy(args.plainnote, stripped)
    subprocess.run(["strip", stripped], check=True)
    library = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "CaptureLibrary", "Sources", "MuEvalCapture")
    lines = comments = 0
    for name in os.listdir(library):
        with open(os.path.join(library, name)) as f:
            for line in f:
                lines += 1
                comments += line.strip().startswith("//")
    print(f"What a minimal client adds (capture_bench.py): plainnote, release, stripped, links MuEvalCapture alone: "
          f"{os.path.getsize(stripped) / 1e6:.1f} MB; the library: {lines:,} lines of Swift, {comments:,} of them comments")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--muevald", required=True)
    parser.add_argument("--muevalsim", required=True)
    parser.add_argument("--plainnote", required=True)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="capture-bench-")
    try:
        footprint(args, scratch)
        offline(args, scratch)
        throughput(args, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
