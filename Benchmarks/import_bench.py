#!/usr/bin/env python3
"""Import benchmark (make bench): a 1,000,000-event jsonl export and a 100 MB IMUT log, written here
from the documented formats (docs/IMPORT.md), imported with `muevalctl import --data-dir` into a
fresh data directory. Prints events/s and the importer's peak memory (its maximum resident set,
from wait4), the lines docs/BENCHMARKS.md shows next to live ingest.

    Benchmarks/import_bench.py --muevalctl .build-release/release/muevalctl [--events N] [--imut-mb M]
"""
import argparse, json, os, shutil, subprocess, tempfile, time


def write_jsonl(path, events):
    start = 1_700_000_000.0
    with open(path, "w") as f:
        for i in range(1, events + 1):
            t = start + i * 0.05
            kind = i % 4
            if kind == 0:
                payload = '{"class":"UserInputEvent","timestamp":%r,"seq":%d,"type":"touch","phase":"began","x":%d.5,"y":%d.0,"view":"PostsViewController"}' % (t, i, i % 320, i % 480)
                cls = "UserInputEvent"
            elif kind == 1:
                payload = '{"class":"DeviceSensorEvent","timestamp":%r,"seq":%d,"sensor":"accelerometer","x":0.012,"y":-0.981,"z":-0.104}' % (t, i)
                cls = "DeviceSensorEvent"
            elif kind == 2:
                payload = '{"class":"UserInterfaceEvent","timestamp":%r,"seq":%d,"type":"viewDidAppear","view":"EditPostViewController","transition":"push"}' % (t, i)
                cls = "UserInterfaceEvent"
            else:
                payload = '{"class":"CustomEvent","timestamp":%r,"seq":%d,"name":"Edit blog posting","marker":"begin"}' % (t, i)
                cls = "CustomEvent"
            f.write('{"class":"%s","device":"bench-phone","id":%d,"received":%r,"seq":%d,"timestamp":%r,"timestampEstimated":false,"payload":%s}\n'
                    % (cls, i, t + 0.01, i, t, payload))
        session = {"version": 1, "uuid": "00000000-0000-4000-8000-000000000001", "name": "bench", "sensors": [],
                   "device": "bench-phone", "created": start, "started": start, "stopped": start + events * 0.05,
                   "filtered": 0, "duplicates": 0, "devices": [{"id": "bench-phone", "firstSeen": start, "lastSeen": start}], "gaps": []}
        f.write(json.dumps({"session": session}) + "\n")


def write_imut(path, megabytes):
    """IMUTLib's stream encoder: '[', packets pretty-printed with two more spaces, ',', '\\n]'."""
    limit = megabytes * 1_000_000
    packets = 0
    events = 0
    with open(path, "w") as f:
        f.write('[\n  {\n    "type" : "sync",\n    "sid" : "bench",\n    "seq" : 0,\n    "abs-date-time" : "2014-07-05T14:03:22+02:00"\n  }')
        level = 0.5
        while f.tell() < limit:
            packets += 1
            delta = 0.1 if packets % 2 else -0.1
            level += delta
            f.write(',\n  {\n    "type" : "events",\n    "sid" : "bench",\n    "seq" : %d,\n    "rel-time" : %.2f,\n    "events" : [\n'
                    '      {"event" : "backlightChange", "type" : "%s", "params" : {"val" : %s}},\n'
                    '      {"event" : "uiViewControllerChange", "type" : "abs", "params" : {"class" : "NoteEditorViewController"}},\n'
                    '      {"event" : "locationChange", "type" : "abs", "params" : {"lat" : 49.0069, "lon" : 8.4037}},\n'
                    '      {"event" : "deviceOrientationChange", "type" : "status", "params" : {"orientation" : "portrait"}}\n'
                    '    ]\n  }' % (packets, packets * 0.25, "abs" if packets == 1 else "delta", "0.5" if packets == 1 else str(delta)))
            events += 4
        f.write("\n]")
    return events


def run(muevalctl, path, directory):
    start = time.monotonic()
    process = subprocess.Popen([muevalctl, "import", path, "--data-dir", directory, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.monotonic() - start
    out = process.stdout.read().decode()
    if status != 0:
        raise SystemExit("import failed: " + process.stderr.read().decode())
    outcome = json.loads(out)[0]
    return outcome["events"], elapsed, usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--muevalctl", required=True)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--imut-mb", type=int, default=100)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="import-bench-")
    try:
        jsonl = os.path.join(scratch, "export.jsonl")
        write_jsonl(jsonl, args.events)
        imut = os.path.join(scratch, "imut_bench.json")
        write_imut(imut, args.imut_mb)
        print("import (muevalctl import --data-dir, one file into a fresh data directory; Benchmarks/import_bench.py):")
        for label, path in [("jsonl export", jsonl), ("IMUT log", imut)]:
            size = os.path.getsize(path) / 1_000_000
            events, seconds, peak = run(args.muevalctl, path, os.path.join(scratch, "data-" + label.split()[0]))
            print(f"  {label:<12} {size:7.0f} MB {events:>9} events in {seconds:6.1f} s = {events / seconds:9.0f} events/s, "
                  f"peak RSS {peak:5.0f} MB")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
